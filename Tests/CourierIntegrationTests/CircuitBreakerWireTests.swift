import Courier
import CourierTesting
import Foundation
import Synchronization
import Testing

/// `CircuitBreakerMiddleware` in `Client.standard`'s slot, over `CurlTransport` and
/// `MockServer`, with its time (and retry's backoff) on a test clock.
@Suite("Circuit breaker over the wire", .timeLimit(.minutes(5)))
struct CircuitBreakerWireTests {
  @Test("Client.standard has no breaker until one is set")
  func offByDefault() {
    #expect(StandardMiddleware().circuitBreaker == nil)
    #expect(!StandardMiddleware().middleware.contains { $0 is CircuitBreakerMiddleware })
  }

  @Test("a script of server faults opens it, it fails fast, half-opens, reopens, then closes")
  func scriptOfFaults() async throws {
    let server = try MockServer()
    let transport = CurlTransport()
    defer {
      transport.shutdown()
      server.shutdown()
    }
    let clock = TestClock()
    let changes = ChangeLog()
    let breaker = CircuitBreakerMiddleware(
      policy: CircuitBreakerPolicy(consecutiveFailures: 4, openDuration: .seconds(10), probes: 1),
      clock: clock
    ) { _, old, new in
      changes.entries.withLock { $0.append("\(old)→\(new)") }
    }
    let client = Client.standard(baseURL: server.baseURL, transport: transport, locale: "en") {
      $0.retry = RetryMiddleware(
        policy: RetryPolicy(maximumAttempts: 3, baseDelay: .zero), clock: clock)
      $0.reachability = nil
      // No real-clock limits: the script is about the breaker, and a loaded full run has
      // stretched a loopback request past the preset's 30 s.
      $0.timeout = nil
      $0.circuitBreaker = breaker
    }
    let host = CircuitBreakerMiddleware.hostKey(for: server.baseURL)
    #expect(host == "127.0.0.1:\(server.port)")
    let layers = client.middleware.map { "\(type(of: $0))" }
    let retry = try #require(layers.firstIndex(of: "RetryMiddleware"))
    #expect(layers[retry + 1] == "CircuitBreakerMiddleware", "just inside retry: \(layers)")

    func send(_ path: String) async -> CourierError? {
      await courierError { try await client.send(Endpoint<String>(.get, path)) }
    }

    // A connection closed without an answer, then two 503s: one request, three attempts,
    // three failures; still closed. (First, on a fresh connection: on a reused one libcurl
    // would send the request again by itself.)
    server.enqueue(MockResponse(fault: .closeWithoutResponse))
    for _ in 0..<2 { server.enqueue(MockResponse(status: 503)) }
    let first = await send("one")
    #expect(first?.status == 503)
    #expect(first?.attempts == 3)
    #expect(breaker.state(for: host) == .closed)

    // A fourth 503 opens it: the retry that follows fails fast, unsent.
    server.enqueue(MockResponse(status: 503))
    let second = await send("two")
    #expect(second?.kind == .circuitOpen)
    #expect(server.requestCount == 4)
    #expect(breaker.state(for: host) == .open)

    // Open: fails fast, naming the host and the next probe; nothing reaches the server.
    let third = await send("three")
    #expect(third?.kind == .circuitOpen)
    #expect(third?.debugMessage.contains(host) == true)
    #expect(third?.debugMessage.contains("next probe may go in 10 s") == true)
    #expect(server.requestCount == 4)

    // Half-open: the probe gets a 500, and it reopens; the retry fails fast.
    clock.advance(by: .seconds(10))
    server.enqueue(MockResponse(status: 500))
    let probe = await send("probe")
    #expect(probe?.kind == .circuitOpen)
    #expect(probe?.debugMessage.contains("a probe failed (status 500)") == true)
    #expect(server.requestCount == 5)
    #expect(breaker.state(for: host) == .open)

    // Half-open again: the probe succeeds, and it closes.
    clock.advance(by: .seconds(10))
    server.enqueue(.text("ok"))
    #expect(await send("probe-again") == nil)
    #expect(breaker.state(for: host) == .closed)
    server.enqueue(.text("ok"))
    #expect(await send("after") == nil)
    #expect(server.requestCount == 7)
    #expect(
      changes.entries.withLock { $0 } == [
        "closed→open", "open→halfOpen", "halfOpen→open", "open→halfOpen", "halfOpen→closed",
      ])
  }
}

/// The changes of state a breaker reported, in order.
private final class ChangeLog: Sendable {
  let entries = Mutex<[String]>([])
}
