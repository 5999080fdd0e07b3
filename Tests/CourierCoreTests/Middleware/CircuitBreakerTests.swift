import CourierCore
import CourierTesting
import Foundation
import Synchronization
import Testing

/// `CircuitBreakerMiddleware` over a stub, on a test clock: its two rules, what counts as a
/// failure, bounded probes, hosts apart, and retry.
@Suite(
  "CircuitBreakerMiddleware: opens, fails fast, probes and closes, per host",
  .timeLimit(.minutes(5)))
struct CircuitBreakerTests {
  let clock = TestClock()
  let stub: StubTransport
  let changes = StateChanges()

  init() {
    stub = StubTransport(clock: clock)
    stub.on(nil, "ok", .text("ok"))
    stub.on(nil, "fail", .status(503))
    stub.on(nil, "missing", .status(404))
    stub.on(nil, "limited", .status(429))
    stub.on(nil, "refused", .failure(CourierError(kind: .cannotConnect, debugMessage: "scripted")))
    stub.on(nil, "cancelled", .failure(CancellationError()))
    stub.on(nil, "slow", StubResponse.text("slow").delayed(by: .seconds(1)))
  }

  func breaker(_ policy: CircuitBreakerPolicy) -> CircuitBreakerMiddleware {
    let changes = changes
    return CircuitBreakerMiddleware(policy: policy, clock: clock) { host, old, new in
      changes.list.withLock { $0.append("\(host) \(old)→\(new)") }
    }
  }

  func client(_ middleware: [any Middleware]) -> Client {
    Client(transport: stub, middleware: middleware, locale: "en")
  }

  /// Sends `path` to host `host`; the error's kind, or `nil` on success.
  func send(_ client: Client, _ path: String, host: String = "a.test") async -> CourierError? {
    await courierError {
      try await client.send(Endpoint<String>(.get, "http://\(host)/\(path)"))
    }
  }

  @Test("a run of failures opens it; it fails fast, naming the host and the next probe")
  func consecutiveFailures() async throws {
    let breaker = breaker(CircuitBreakerPolicy(minimumRequests: 100, consecutiveFailures: 3))
    let client = client([breaker])
    for path in ["fail", "fail", "ok", "fail", "refused"] {
      _ = await send(client, path)
    }
    #expect(breaker.state(for: "a.test:80") == .closed, "a success broke the run")
    #expect(await send(client, "fail")?.kind == .httpStatus)
    #expect(breaker.state(for: "a.test:80") == .open)
    let sent = stub.requests.count
    clock.advance(by: .seconds(5))
    let error = try #require(await send(client, "ok"))
    #expect(error.kind == .circuitOpen)
    #expect(error.attempts == 0)
    #expect(error.reason == "The service is unavailable right now. Please try again in a moment.")
    #expect(error.debugMessage.contains("a.test:80"))
    #expect(error.debugMessage.contains("3 failures in a row"))
    #expect(error.debugMessage.contains("next probe may go in 10 s"))
    #expect(stub.requests.count == sent, "the transport was not called")
    #expect(changes.list.withLock { $0 } == ["a.test:80 closed→open"])
  }

  @Test("failures further apart than the window are not a run")
  func runWithinWindow() async {
    let breaker = breaker(
      CircuitBreakerPolicy(window: .seconds(10), minimumRequests: 100, consecutiveFailures: 3))
    let client = client([breaker])
    for _ in 0..<5 {
      _ = await send(client, "fail")
      clock.advance(by: .seconds(6))
    }
    #expect(breaker.state(for: "a.test:80") == .closed)
  }

  @Test("a failure rate over the window opens it once enough attempts ended")
  func failureRate() async {
    let breaker = breaker(
      CircuitBreakerPolicy(
        window: .seconds(10), failureRate: 0.5, minimumRequests: 10, consecutiveFailures: 0))
    let client = client([breaker])
    // Old outcomes leave the window: 9 failures, then 20 s later a fresh count.
    for _ in 0..<9 { _ = await send(client, "fail") }
    clock.advance(by: .seconds(20))
    for index in 0..<9 { _ = await send(client, index.isMultiple(of: 2) ? "ok" : "fail") }
    #expect(breaker.state(for: "a.test:80") == .closed, "9 attempts, under the minimum of 10")
    _ = await send(client, "fail")
    #expect(breaker.state(for: "a.test:80") == .open, "5 of 10 failed")
    #expect(
      await send(client, "ok")?.debugMessage.contains("5 of 10 attempts failed (50 %)") == true)
  }

  @Test("4xx answers, business outcomes and cancellations do not open it; 429 does")
  func whatCounts() async {
    let breaker = breaker(CircuitBreakerPolicy(minimumRequests: 5, consecutiveFailures: 3))
    let client = client([breaker])
    for _ in 0..<10 { #expect(await send(client, "missing")?.kind == .httpStatus) }
    for _ in 0..<10 { #expect(await send(client, "cancelled")?.kind == .cancelled) }
    #expect(breaker.state(for: "a.test:80") == .closed)
    for _ in 0..<3 { _ = await send(client, "limited") }
    #expect(breaker.state(for: "a.test:80") == .open)
  }

  @Test("the failure predicate is configurable")
  func customPredicate() async {
    let breaker = CircuitBreakerMiddleware(
      policy: CircuitBreakerPolicy(consecutiveFailures: 2),
      countsAsFailure: { outcome in
        if case .failure(let error) = outcome { return error.status == 404 }
        return false
      },
      clock: clock)
    let client = client([breaker])
    for _ in 0..<3 { _ = await send(client, "fail") }
    #expect(breaker.state(for: "a.test:80") == .closed)
    for _ in 0..<2 { _ = await send(client, "missing") }
    #expect(breaker.state(for: "a.test:80") == .open)
  }

  @Test("half-open lets a bounded number of probes through under concurrency, then closes")
  func boundedProbes() async throws {
    let breaker = breaker(CircuitBreakerPolicy(consecutiveFailures: 2, probes: 2))
    let client = client([breaker])
    for _ in 0..<2 { _ = await send(client, "fail") }
    clock.advance(by: CircuitBreakerPolicy.defaultOpenDuration)
    let sent = stub.requests.count
    let (ended, report) = AsyncStream<CourierError?>.makeStream()
    for _ in 0..<10 {
      Task {
        report.yield(await send(client, "slow"))
      }
    }
    // Eight end at once, refused; the two probes wait for the clock.
    var outcomes: [CourierError?] = []
    for await outcome in ended {
      outcomes.append(outcome)
      if outcomes.count == 8 { break }
    }
    #expect(outcomes.allSatisfy { $0?.kind == .circuitOpen })
    #expect(outcomes.first??.debugMessage.contains("half-open") == true)
    await clock.waitForSleepers(2)
    #expect(stub.requests.count == sent + 2)
    clock.advance(by: .seconds(1))
    for await outcome in ended {
      #expect(outcome == nil, "a probe succeeded")
      outcomes.append(outcome)
      if outcomes.count == 10 { break }
    }
    #expect(breaker.state(for: "a.test:80") == .closed)
    #expect(
      changes.list.withLock { $0 } == [
        "a.test:80 closed→open", "a.test:80 open→halfOpen", "a.test:80 halfOpen→closed",
      ])
  }

  @Test("a probe that fails opens the circuit again for the open duration")
  func failedProbeReopens() async {
    let breaker = breaker(CircuitBreakerPolicy(consecutiveFailures: 2, probes: 1))
    let client = client([breaker])
    for _ in 0..<2 { _ = await send(client, "fail") }
    clock.advance(by: CircuitBreakerPolicy.defaultOpenDuration)
    #expect(await send(client, "refused")?.kind == .cannotConnect)
    #expect(breaker.state(for: "a.test:80") == .open)
    let error = await send(client, "ok")
    #expect(error?.kind == .circuitOpen)
    #expect(error?.debugMessage.contains("a probe failed (cannotConnect)") == true)
    clock.advance(by: CircuitBreakerPolicy.defaultOpenDuration)
    #expect(await send(client, "ok") == nil)
    #expect(breaker.state(for: "a.test:80") == .closed)
  }

  @Test("two hosts have circuits of their own")
  func hostsApart() async {
    let breaker = breaker(CircuitBreakerPolicy(consecutiveFailures: 2))
    let client = client([breaker])
    for _ in 0..<2 { _ = await send(client, "fail", host: "a.test") }
    #expect(await send(client, "ok", host: "a.test")?.kind == .circuitOpen)
    #expect(await send(client, "ok", host: "b.test") == nil)
    #expect(await send(client, "ok", host: "a.test:8080") == nil, "another port, another circuit")
    #expect(breaker.states == ["a.test:80": .open, "b.test:80": .closed, "a.test:8080": .closed])
  }

  @Test("inside retry: each attempt counts; circuitOpen is not retried and spends no budget")
  func insideRetry() async {
    let breaker = breaker(CircuitBreakerPolicy(consecutiveFailures: 3))
    // A budget of 3 retries: the first request spends two.
    let budget = RetryBudget(ratio: 0, minimumRetries: 3, clock: clock)
    let retry = RetryMiddleware(
      policy: RetryPolicy(maximumAttempts: 3, baseDelay: .zero), budget: budget, clock: clock)
    let client = client([retry, breaker])
    let first = await send(client, "fail")
    #expect(first?.kind == .httpStatus)
    #expect(first?.attempts == 3)
    #expect(breaker.state(for: "a.test:80") == .open, "three attempts, three failures")
    let sent = stub.requests.count
    for _ in 0..<5 {
      let error = await send(client, "fail")
      #expect(error?.kind == .circuitOpen)
      #expect(error?.debugMessage.contains("retry budget") == false)
    }
    #expect(stub.requests.count == sent)
    #expect(budget.tryRetry(), "the one retry the first request left is still there")
    #expect(budget.tryRetry() == false)
  }
}

/// The changes of state a breaker reported, in order.
final class StateChanges: Sendable {
  let list = Mutex<[String]>([])
}

/// The breaker's state through a ``MetricsSink``: a gauge per host that is 1 while the
/// circuit is not closed, and a counter of transitions.
@Suite("CircuitBreakerMiddleware: state in metrics", .timeLimit(.minutes(5)))
struct CircuitBreakerMetricsTests {
  @Test("open, half-open, open, half-open, closed: the gauge follows, each change counted")
  func stateInMetrics() async {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    stub.on(nil, "ok", .text("ok"))
    stub.on(nil, "fail", .status(503))
    let sink = InMemoryMetricsSink()
    let breaker = CircuitBreakerMiddleware(
      policy: CircuitBreakerPolicy(
        minimumRequests: 100, consecutiveFailures: 2, openDuration: .seconds(10), probes: 1),
      clock: clock, onStateChange: CircuitBreakerMiddleware.recordingState(in: sink))
    let client = Client(transport: stub, middleware: [breaker], locale: "en")
    func send(_ path: String) async {
      _ = await courierError {
        try await client.send(Endpoint<String>(.get, "http://a.test/\(path)"))
      }
    }
    let host = ["host": "a.test:80"]
    await send("fail")
    await send("fail")
    #expect(breaker.state(for: "a.test:80") == .open)
    #expect(sink.gauge("courier_circuit_not_closed", host) == 1)
    clock.advance(by: .seconds(10))
    await send("fail")
    #expect(breaker.state(for: "a.test:80") == .open)
    #expect(sink.gauge("courier_circuit_not_closed", host) == 1, "half-open, then open: still 1")
    clock.advance(by: .seconds(10))
    await send("ok")
    #expect(breaker.state(for: "a.test:80") == .closed)
    #expect(sink.gauge("courier_circuit_not_closed", host) == 0)
    func transitions(_ from: String, _ to: String) -> Int64 {
      sink.counter(
        "courier_circuit_transitions_total", ["host": "a.test:80", "from": from, "to": to])
    }
    #expect(transitions("closed", "open") == 1)
    #expect(transitions("open", "halfOpen") == 2)
    #expect(transitions("halfOpen", "open") == 1)
    #expect(transitions("halfOpen", "closed") == 1)
    #expect(sink.counterTotal("courier_circuit_transitions_total") == 5)
  }
}
