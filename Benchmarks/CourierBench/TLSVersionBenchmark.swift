import Courier
import Foundation

/// HTTP/1.1 against HTTP/2 (ALPN) over TLS on one server, for the choice of `CurlTransport`'s
/// default over TLS: `tls-versions <https URL> <CA bundle> [rounds]` sends GETs of the URL one
/// at a time and 16 at once over each version, alternating the versions round by round, and
/// prints the medians of requests per second and of process CPU µs per request. Each round
/// has a transport of its own, so it pays for its connections (TLS handshakes included), as a
/// service's first requests do.
enum TLSVersionBenchmark {
  static func run(_ arguments: [String]) async throws {
    guard arguments.count >= 2, let url = URL(string: arguments[0]) else {
      print("usage: courier-bench tls-versions <https URL> <CA bundle> [rounds]")
      return
    }
    let rounds = arguments.count > 2 ? Int(arguments[2]) ?? 7 : 7
    let versions: [CurlTransport.HTTPVersion] = [.http1, .http2]
    for concurrency in [1, 16] {
      var results: [String: [(rate: Double, cpu: Double)]] = [:]
      for round in 0..<rounds {
        // A B then B A: load from other processes hits both alike.
        for version in round % 2 == 0 ? versions : versions.reversed() {
          let result = try await measure(
            url, caBundle: arguments[1], version: version, concurrency: concurrency)
          results[version.description, default: []].append(result)
        }
      }
      for version in versions {
        let rows = results[version.description] ?? []
        let rate = median(rows.map(\.rate))
        let cpu = median(rows.map(\.cpu))
        print(
          "\(version), \(concurrency) at once: \(Int(rate)) req/s, \(Int(cpu)) CPU µs/request "
            + "(median of \(rows.count))")
      }
    }
  }

  private static func measure(
    _ url: URL, caBundle: String, version: CurlTransport.HTTPVersion, concurrency: Int
  ) async throws -> (rate: Double, cpu: Double) {
    var configuration = CurlTransport.Configuration.standard
    configuration.httpVersion = version
    configuration.tls = .init(caBundlePath: caBundle)
    let transport = CurlTransport(configuration: configuration)
    defer { transport.shutdown() }
    let client = Client(transport: transport)
    let perTask = concurrency == 1 ? 400 : 100
    let cpuStart = Measure.processCPUTime()
    let start = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<concurrency {
        group.addTask {
          for _ in 0..<perTask { _ = try await client.send(Request(url: url)) }
        }
      }
      try await group.waitForAll()
    }
    let seconds = Measure.nanoseconds(ContinuousClock.now - start) / 1e9
    let count = Double(concurrency * perTask)
    return (count / seconds, (Measure.processCPUTime() - cpuStart) / 1e3 / count)
  }

  private static func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
  }
}
