import Courier
import Foundation

/// Streaming: one streamed body read through `Client.stream` on `CurlTransport` (the bare
/// client), in a process of its own (`stream-point`), and the parse rate of Server-Sent Events
/// (`sse`). `Benchmarks/stream-vs-curl` runs `stream-point` beside `curl -o /dev/null` on the
/// same URL, alternating.
enum StreamBenchmark {
  /// `stream-point <url> [read MB/s] [--urlsession]`: reads the URL's body as a stream, at
  /// most at the rate given (a slow reader: the transfer must pause, not buffer), and prints
  /// "MB/s cpu_us_per_MiB bytes rss_growth_KiB": the rate, the process's CPU per MiB, the
  /// bytes read, and the peak resident set (`VmHWM`) at the end less the resident set before
  /// the request. On `CurlTransport` unless `--urlsession`; a read that fails prints the same
  /// figures and then the error's kind.
  static func point(_ arguments: [String]) async throws {
    let onURLSession = arguments.contains("--urlsession")
    let arguments = arguments.filter { $0 != "--urlsession" }
    guard let text = arguments.first, let url = URL(string: text) else {
      print("usage: courier-bench stream-point <url> [read MB/s] [--urlsession]")
      return
    }
    let readRate = arguments.dropFirst().first.flatMap { Double($0) }
    let (transport, shutdown): (any Transport, @Sendable () -> Void)
    if onURLSession {
      let session = URLSessionTransport()
      (transport, shutdown) = (session, { session.shutdown() })
    } else {
      let curl = CurlTransport()
      (transport, shutdown) = (curl, { curl.shutdown() })
    }
    defer { shutdown() }
    let client = Client(baseURL: url, transport: transport)
    let before = residentKiB("VmRSS:")
    let cpuStart = Measure.processCPUTime()
    let start = ContinuousClock.now
    let streamed = try await client.stream(Request(url: url))
    var bytes = 0
    var failure: (any Error)?
    do {
      for try await chunk in streamed.body {
        bytes += chunk.count
        if let readRate {
          // Paced: never ahead of `readRate` MB/s since the start.
          let due = Duration.seconds(Double(bytes) / (readRate * 1e6))
          let ahead = due - (ContinuousClock.now - start)
          if ahead > .milliseconds(1) { try await Task.sleep(for: ahead) }
        }
      }
    } catch {
      failure = error
    }
    let seconds = Measure.nanoseconds(ContinuousClock.now - start) / 1e9
    let cpu = Measure.processCPUTime() - cpuStart
    let mebibytes = Double(bytes) / Double(1 << 20)
    print(
      "\(Double(bytes) / seconds / 1e6) \(cpu / 1e3 / mebibytes) \(bytes) "
        + "\(residentKiB("VmHWM:") - before)"
        + (failure.map { " failed: \(($0 as? CourierError)?.kind.description ?? "\($0)")" } ?? ""))
  }

  /// `sse`: events per second `ServerSentEventParser` parses from a body of small events fed
  /// in 16 KiB chunks (the size libcurl hands over), and through `ServerSentEvents`.
  static func parseRate() async throws {
    var text = ""
    for index in 0..<20_000 {
      text +=
        "id: \(index)\nevent: token\ndata: {\"token\":\"word\(index % 97)\",\"index\":\(index)}\n\n"
    }
    let body = Data(text.utf8)
    let chunks = stride(from: 0, to: body.count, by: 16 * 1024).map {
      body[$0..<min($0 + 16 * 1024, body.count)]
    }
    var best = Double.infinity
    var count = 0
    for _ in 0..<5 {
      let start = ContinuousClock.now
      var parser = ServerSentEventParser()
      var events: [ServerSentEvent] = []
      count = 0
      for chunk in chunks {
        events.removeAll(keepingCapacity: true)
        try parser.feed(chunk, into: &events)
        count += events.count
      }
      best = min(best, Measure.nanoseconds(ContinuousClock.now - start))
    }
    print("Server-Sent Events parsed: \(count) events of ~60 bytes in 16 KiB chunks")
    print("  ServerSentEventParser.feed: \(Int(Double(count) / (best / 1e9))) events/s (best of 5)")
    let stream = AsyncStream<Data> { continuation in
      for chunk in chunks { continuation.yield(Data(chunk)) }
      continuation.finish()
    }
    let start = ContinuousClock.now
    var through = 0
    for try await _ in stream.serverSentEvents { through += 1 }
    let seconds = Measure.nanoseconds(ContinuousClock.now - start) / 1e9
    print("  ServerSentEvents (AsyncSequence): \(Int(Double(through) / seconds)) events/s")
  }

  private static func residentKiB(_ field: String) -> Double {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix(field) }
    return line.flatMap { Double($0.split(separator: " ").dropFirst().first ?? "") } ?? .nan
  }
}
