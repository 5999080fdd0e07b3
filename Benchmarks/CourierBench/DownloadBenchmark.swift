import Courier
import CourierTesting
import Foundation

/// Download throughput to a file: `Client.download` over `URLSessionTransport` against
/// `curl -o` on the same loopback file from the same `MockServer`, alternating, best and
/// median of the rounds.
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
    let courierTarget = folder.appendingPathComponent("courier.bin")
    let curlTarget = folder.appendingPathComponent("curl.bin")
    let url = server.url("file")

    var courier: [Double] = []
    var curl: [Double] = []
    for _ in 0..<rounds {
      try? FileManager.default.removeItem(at: courierTarget)
      let start = ContinuousClock.now
      let result = try await client.download(
        Endpoint<Void>(.get, "file"), to: courierTarget, resume: false)
      courier.append(rate(result.byteCount, ContinuousClock.now - start))

      try? FileManager.default.removeItem(at: curlTarget)
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
      curl.append(rate(Int64(size), ContinuousClock.now - curlStart))
    }
    print(
      "### Download to a file: \(megabytes) MiB from MockServer on loopback, \(rounds) rounds\n")
    print("| client | best MB/s | median MB/s |")
    print("| --- | ---: | ---: |")
    print(
      "| Courier Client.download, URLSessionTransport | \(Measure.format(courier.max() ?? 0)) | "
        + "\(Measure.format(Measure.median(courier))) |")
    print(
      "| curl -s -o (same server, same file) | \(Measure.format(curl.max() ?? 0)) | "
        + "\(Measure.format(Measure.median(curl))) |")
    let ratio = Measure.median(courier) / max(Measure.median(curl), 1)
    print("\nCourier / curl (median): \(Measure.format(ratio, decimals: 3))")
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
