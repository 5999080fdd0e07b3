import CourierCore
import CourierTesting
import Foundation
import Testing

/// What of a hostile host name reaches a metrics sink, a span and a circuit's key: a host
/// given percent-encoded (`a%0Ab.test`) is decoded by `URL.host`, and must not put a line
/// break or another control character into a label, an attribute or a log line.
@Suite("Host labels: no control characters, one series per host", .timeLimit(.minutes(5)))
struct HostLabelTests {
  /// Sends a GET to `url` through a client with a metrics observer, a tracer and a breaker.
  func send(_ url: URL) async throws -> (InMemoryMetricsSink, InMemoryTracer, [String]) {
    let stub = StubTransport()
    stub.on(nil, "ok", .text("ok"))
    let sink = InMemoryMetricsSink()
    let tracer = InMemoryTracer()
    let breaker = CircuitBreakerMiddleware()
    let client = Client(
      transport: stub, middleware: [breaker], locale: "en",
      observers: [MetricsObserver(sink: sink)], tracer: tracer)
    _ = try await client.send(Request(method: .get, url: url))
    return (sink, tracer, Array(breaker.states.keys))
  }

  @Test(
    "a percent-encoded control character stays encoded in labels, attributes and keys",
    arguments: ["http://a%0Ab.test/ok", "http://a%0D%0Ab.test:8080/ok", "http://a%7Fb%09c.test/ok"])
  func controlCharacters(_ text: String) async throws {
    let url = try #require(URL(string: text))
    let (sink, tracer, keys) = try await send(url)
    var texts = sink.series.flatMap { $0.dimensions.values }
    texts += tracer.spans.compactMap { $0.attributes["server.address"]?.description }
    texts += keys
    #expect(texts.count > 5)
    for value in texts {
      #expect(!value.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(value)")
    }
    let host = try #require(sink.series.first?.dimensions["host"])
    #expect(host.hasPrefix("a%0") || host.hasPrefix("a%7F"), "escaped, not dropped: \(host)")
  }

  @Test("hosts that differ only in case are one metric series, as they are one circuit")
  func caseFolded() async throws {
    let (upper, _, upperKeys) = try await send(
      try #require(URL(string: "http://API.Example.test/ok")))
    let (lower, _, lowerKeys) = try await send(
      try #require(URL(string: "http://api.example.test/ok")))
    #expect(Set(upper.series) == Set(lower.series))
    #expect(upperKeys == lowerKeys)
  }

  @Test(
    "a circuit's key: the scheme's default port (wss is 443), one key with or without the root dot",
    arguments: [
      ("wss://a.test/chat", "a.test:443"), ("ws://a.test/chat", "a.test:80"),
      ("https://A.Test./x", "a.test:443"), ("http://a.test.:8080/x", "a.test:8080"),
      ("http://a.test/x", "a.test:80"), ("https://[::1]/x", "[::1]:443"),
    ])
  func circuitKeys(_ text: String, _ key: String) throws {
    let url = try #require(URL(string: text))
    #expect(CircuitBreakerMiddleware.hostKey(for: url) == key)
  }
}
