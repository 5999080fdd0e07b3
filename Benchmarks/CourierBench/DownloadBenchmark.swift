import Courier
import CourierTesting
import Foundation

/// Download throughput to a file: `Client.download` over `URLSessionTransport` and over
/// `CurlTransport` against `curl -o` on the same loopback file from the same `MockServer`,
/// alternating, best and median of the rounds.
enum DownloadBenchmark {
  static func run(megabytes: Int, rounds: Int) async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let sourceURL = folder.appendingPathComponent("source.bin")
    let size = megabytes * 1024 * 1024
    try writeSource(sourceURL, size: size)
    let source = try MockBodySource.file(sourceURL)
    let server = try MockServer()
    defer { server.shutdown() }
    server.recordsRequests = false
    server.setDispatcher { .ranged(source, request: $0, etag: "\"bench\"") }
    let transport = URLSessionTransport()
    defer { transport.shutdown() }
    let client = Client(baseURL: server.baseURL, transport: transport)
    let curlTransport = CurlTransport()
    defer { curlTransport.shutdown() }
    let curlClient = Client(baseURL: server.baseURL, transport: curlTransport)
    let courierTarget = folder.appendingPathComponent("courier.bin")
    let courierCurlTarget = folder.appendingPathComponent("courier-curl.bin")
    let curlTarget = folder.appendingPathComponent("curl.bin")
    let url = server.url("file")

    // Rates (MB/s) and CPU per MiB (µs, the whole process: client and server, plus the curl
    // child's own), per client, in the order of the table.
    let names = [
      "Courier Client.download, URLSessionTransport", "Courier Client.download, CurlTransport",
      "curl -s -o (same server, same file)",
    ]
    var rates = [[Double]](repeating: [], count: names.count)
    var cpu = [[Double]](repeating: [], count: names.count)
    let mebibytes = Double(size) / Double(1 << 20)
    for _ in 0..<rounds {
      for (index, downloader) in [client, curlClient].enumerated() {
        let target = index == 0 ? courierTarget : courierCurlTarget
        try? FileManager.default.removeItem(at: target)
        let cpuStart = Measure.processCPUTime()
        let start = ContinuousClock.now
        let result = try await downloader.download(
          Endpoint<Void>(.get, "file"), to: target, resume: false)
        rates[index].append(rate(result.byteCount, ContinuousClock.now - start))
        cpu[index].append((Measure.processCPUTime() - cpuStart) / 1e3 / mebibytes)
      }

      try? FileManager.default.removeItem(at: curlTarget)
      let cpuStart = Measure.processCPUTime() + childrenCPUTime()
      let curlStart = ContinuousClock.now
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
      process.arguments = ["-s", "-o", curlTarget.path, url.absoluteString]
      try process.run()
      process.waitUntilExit()
      guard process.terminationStatus == 0 else {
        print("curl failed with status \(process.terminationStatus)")
        return
      }
      rates[2].append(rate(Int64(size), ContinuousClock.now - curlStart))
      cpu[2].append(
        (Measure.processCPUTime() + childrenCPUTime() - cpuStart) / 1e3 / mebibytes)
    }
    print(
      "### Download to a file: \(megabytes) MiB from MockServer on loopback, \(rounds) rounds\n")
    print("| client | best MB/s | median MB/s | median CPU µs per MiB |")
    print("| --- | ---: | ---: | ---: |")
    for index in names.indices {
      print(
        "| \(names[index]) | \(Measure.format(rates[index].max() ?? 0)) | "
          + "\(Measure.format(Measure.median(rates[index]))) | "
          + "\(Measure.format(Measure.median(cpu[index]))) |")
    }
    let curlMedian = max(Measure.median(rates[2]), 1)
    print(
      "\nCourier / curl (median MB/s): URLSessionTransport "
        + "\(Measure.format(Measure.median(rates[0]) / curlMedian, decimals: 3)), CurlTransport "
        + "\(Measure.format(Measure.median(rates[1]) / curlMedian, decimals: 3))")
  }

  /// CPU time of the children waited for so far (the `curl` processes), in nanoseconds.
  static func childrenCPUTime() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_CHILDREN.rawValue, &usage)
    let user = Double(usage.ru_utime.tv_sec) * 1e9 + Double(usage.ru_utime.tv_usec) * 1e3
    return user + Double(usage.ru_stime.tv_sec) * 1e9 + Double(usage.ru_stime.tv_usec) * 1e3
  }

  /// Decimal megabytes per second.
  static func rate(_ bytes: Int64, _ duration: Duration) -> Double {
    let seconds =
      Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    return Double(bytes) / 1e6 / max(seconds, 1e-9)
  }

  /// A file of `size` bytes that does not compress.
  static func writeSource(_ url: URL, size: Int) throws {
    guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
      throw CocoaError(.fileWriteUnknown)
    }
    let handle = try FileHandle(forWritingTo: url)
    defer { try? handle.close() }
    var state: UInt64 = 0x2545_F491_4F6C_DD1D
    var block = [UInt64](repeating: 0, count: 1 << 17)
    var written = 0
    while written < size {
      for index in block.indices {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        block[index] = state
      }
      try block.withUnsafeBytes { try handle.write(contentsOf: Data($0)) }
      written += block.count * 8
    }
  }
}
