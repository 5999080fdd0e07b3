import CourierCore
import CourierTesting
import Foundation
import Synchronization
import Testing

@Suite("TimeoutMiddleware", .timeLimit(.minutes(5)))
struct TimeoutMiddlewareTests {
  @Test("the per-attempt timeout fires at its simulated time and cancels the attempt")
  func perAttempt() async throws {
    let clock = TestClock()
    let stub = StubTransport(fallback: .never)
    let client = stubClient(
      stub, middleware: [TimeoutMiddleware(attempt: .seconds(30), overall: nil, clock: clock)])
    let task = Task { try await client.send(Endpoint<Void>(.get, "slow")) }
    await clock.waitForSleepers(1)
    clock.advance(by: .seconds(30) - .milliseconds(1))
    await stub.waitForRequests(1)
    #expect(client.inFlightCount == 1, "still running a millisecond before the limit")
    clock.advance(by: .milliseconds(1))
    let error = await courierError { try await task.linkedValue }
    #expect(error?.kind == .timedOut)
    #expect(error?.debugDescription.contains("per-attempt timeout of 30") == true)
    #expect(error?.reason == "The server took too long to respond.")
    #expect(client.inFlightCount == 0)
    #expect(
      stub.requests.first?.timeout == .seconds(30), "the transport gets the limit itself")
  }

  @Test("an endpoint's timeout replaces the middleware's")
  func endpointOverride() async throws {
    let clock = TestClock()
    let stub = StubTransport(fallback: .never)
    let client = stubClient(stub, middleware: [TimeoutMiddleware(clock: clock)])
    let task = Task { try await client.send(Endpoint<Void>(.get, "slow").timeout(.seconds(5))) }
    await clock.waitForSleepers(1)
    clock.advance(by: .seconds(5))
    let error = await courierError { try await task.linkedValue }
    #expect(error?.debugDescription.contains("per-attempt timeout of 5") == true)
  }

  @Test("the overall deadline spans retries and backoff, and fires at its simulated time")
  func overallAcrossRetries() async throws {
    let clock = TestClock()
    let stub = StubTransport(fallback: .never)
    let client = stubClient(
      stub,
      middleware: [
        RetryMiddleware(budget: nil, clock: clock, jitter: { $0 }),
        TimeoutMiddleware(attempt: .seconds(10), overall: .seconds(25), clock: clock),
      ])
    let task = Task { try await client.send(Endpoint<Void>(.get, "slow")) }
    // attempt 1 (10 s), backoff 0.5 s, attempt 2 (10 s), backoff 1 s, attempt 3 (3.5 s left)
    for (index, step) in [10, 0.5, 10, 1].enumerated() {
      await clock.waitForSleepers(index + 1)
      clock.advance(by: .milliseconds(Int64(step * 1000)))
    }
    await clock.waitForSleepers(5)
    await stub.waitForRequests(3)
    clock.advance(by: .milliseconds(3499))
    #expect(client.inFlightCount == 1)
    clock.advance(by: .milliseconds(1))
    let error = await courierError { try await task.linkedValue }
    #expect(error?.kind == .timedOut)
    #expect(error?.attempts == 3)
    #expect(error?.debugDescription.contains("overall deadline of 25") == true)
    #expect(clock.now.offset == .seconds(25))
  }

  @Test("no retry starts when its backoff would end past the deadline")
  func retryReadsDeadline() async throws {
    let clock = TestClock()
    let stub = StubTransport(fallback: .failure(.connectionLost))
    let client = stubClient(
      stub,
      middleware: [
        RetryMiddleware(
          policy: RetryPolicy(baseDelay: .seconds(5)), budget: nil, clock: clock, jitter: { $0 }),
        TimeoutMiddleware(attempt: .seconds(1), overall: .seconds(3), clock: clock),
      ])
    let error = await courierError { try await client.send(Endpoint<Void>(.get, "x")) }
    #expect(stub.requests.count == 1)
    #expect(error?.kind == .connectionLost)
    #expect(error?.debugDescription.contains("pass the deadline") == true)
  }
}

/// Ends its attempt with an error of `kind` only after the timeout's timer cancelled it, as an
/// attempt whose failure is caught late on a starved cooperative pool.
private struct FailsAfterTimerTransport: Transport {
  let clock: TestClock
  let kind: CourierError.Kind

  func send(_ request: Request) async throws -> Response {
    let token = try #require(RequestCancellation.current)
    clock.advance(by: .seconds(30))
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
      _ = token.addHandler { done.resume() }
    }
    throw CourierError(
      kind: kind, debugMessage: "failed", request: request, attempts: 1, stage: "transport")
  }
}

@Suite("TimeoutMiddleware: which error is reported", .timeLimit(.minutes(5)))
struct TimeoutRelabelTests {
  private func failure(_ kind: CourierError.Kind) async -> CourierError? {
    let clock = TestClock()
    let client = Client(
      baseURL: testBase, transport: FailsAfterTimerTransport(clock: clock, kind: kind),
      middleware: [TimeoutMiddleware(attempt: .seconds(30), overall: nil, clock: clock)])
    return await courierError { try await client.send(Endpoint<Void>(.get, "x")) }
  }

  @Test("an attempt's own error is kept when the timer fired before it was caught")
  func lateGenuineError() async {
    #expect(await failure(.cannotConnect)?.kind == .cannotConnect)
    #expect(await failure(.httpStatus)?.kind == .httpStatus)
  }

  @Test("on an injected clock the limit counts from the attempt's start, not the timer task's")
  func limitFromAttemptStart() async {
    let clock = TestClock()
    let probe = SleeperProbe()
    let client = Client(
      baseURL: testBase, transport: AdvancesAtOnceTransport(clock: clock, probe: probe),
      middleware: [TimeoutMiddleware(attempt: .seconds(30), overall: nil, clock: clock)])
    let error = await courierError { try await client.send(Endpoint<Void>(.get, "x")) }
    #expect(probe.waiting.withLock { $0 } == 0, "the timer slept 30 s from when its task ran")
    #expect(error?.kind == .timedOut)
  }

  @Test("an attempt that ends as cancelled when the timer fires is timedOut")
  func cancelledIsTimedOut() async {
    let error = await failure(.cancelled)
    #expect(error?.kind == .timedOut)
    #expect(error?.debugDescription.contains("per-attempt timeout of 30") == true)
  }
}

/// What ``AdvancesAtOnceTransport`` saw: the sleeps still waiting on its clock once the
/// timer's had started.
private final class SleeperProbe: Sendable {
  let waiting = Mutex<Int?>(nil)
}

/// Moves its clock past the attempt's 30 s limit as soon as it is called, before the timeout's
/// timer task has (usually) run, then records whether that timer still waits once its sleep has
/// started: a timer that counted its limit from when its task ran would wait for a time that
/// never comes. Fails as a cancelled attempt once the token is cancelled.
private struct AdvancesAtOnceTransport: Transport {
  let clock: TestClock
  let probe: SleeperProbe

  func send(_ request: Request) async throws -> Response {
    let token = try #require(RequestCancellation.current)
    clock.advance(by: .seconds(30))
    await clock.waitForSleepers(1)
    let waiting = clock.sleeperCount
    probe.waiting.withLock { $0 = waiting }
    if waiting == 0 {
      await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        _ = token.addHandler { done.resume() }
      }
    }
    throw CourierError(
      kind: .cancelled, debugMessage: "cancelled", request: request, attempts: 1,
      stage: "transport")
  }
}

/// A transport that, instead of sending, fails with kind `timedOut` once `after` has passed on
/// `clock` (it moves the clock itself), as libcurl does when its own limit passes.
private struct TimesOutTransport: Transport {
  let after: Duration
  let clock: TestClock

  func send(_ request: Request) async throws -> Response {
    clock.advance(by: after)
    throw CourierError(
      kind: .timedOut, debugMessage: "Connection timed out after 10001 milliseconds",
      request: request, attempts: 1, stage: "transport")
  }
}

/// Records, per request, the cancellation token in force and the transport timeout it sees.
private final class TokenProbe: Middleware {
  let seen = Mutex<[(token: RequestCancellation?, timeout: Duration?)]>([])

  func intercept(_ request: Request, next: Next) async throws -> Response {
    seen.withLock { $0.append((RequestCancellation.current, request.timeout)) }
    return try await next(request)
  }
}

@Suite("TimeoutMiddleware and the transport's own limit", .timeLimit(.minutes(5)))
struct TimeoutAndTransportLimitTests {
  @Test("the attempt runs under a timer token of its own; the transport gets the limit itself")
  func tokenAndLimit() async throws {
    let outer = TokenProbe()
    let inner = TokenProbe()
    let timeout = TimeoutMiddleware(attempt: .seconds(30), overall: nil)
    let client = stubClient(
      StubTransport(fallback: .status(204)), middleware: [outer, timeout, inner])
    try await client.send(Endpoint<Void>(.get, "a"))
    let before = try #require(outer.seen.withLock { $0.first })
    let after = try #require(inner.seen.withLock { $0.first })
    #expect(after.token != nil && after.token !== before.token)
    #expect(after.timeout == .seconds(30), "the limit itself, no backstop")
  }

  @Test("the transport's timedOut at the limit names the limit; an earlier one keeps its text")
  func relabelling() async throws {
    // The transport's own limit passes on the middleware's clock, whose timer may not have
    // run yet when the error arrives.
    let clock = TestClock()
    var timeout = TimeoutMiddleware(attempt: .milliseconds(5), overall: nil, clock: clock)
    let late = await courierError {
      try await Client(
        baseURL: testBase, transport: TimesOutTransport(after: .milliseconds(5), clock: clock),
        middleware: [timeout]
      ).send(Endpoint<Void>(.get, "x"))
    }
    #expect(late?.kind == .timedOut)
    #expect(
      late?.debugDescription.contains("the per-attempt timeout of 0.005 seconds fired") == true)

    // A connect timeout of the transport's own, long before the attempt's limit.
    timeout.attemptTimeout = .seconds(30)
    let early = await courierError {
      try await Client(
        baseURL: testBase, transport: TimesOutTransport(after: .seconds(2), clock: clock),
        middleware: [timeout]
      ).send(Endpoint<Void>(.get, "x"))
    }
    #expect(early?.kind == .timedOut)
    #expect(early?.debugDescription.contains("after 10001 milliseconds") == true)
    #expect(early?.debugDescription.contains("per-attempt timeout") == false)
  }

  @Test(
    "on an injected clock a stub's own Request.timeout, at the limit, is reported as the limit",
    .timeLimit(.minutes(5)))
  func stubLimitOnTheSameClock() async throws {
    // The stub's limit and the middleware's timer fire on the same advance; whichever ends
    // the attempt, the error names the middleware's limit (it raced: 12 of 300 were the
    // stub's text when the elapsed time was read on the continuous clock).
    for _ in 0..<200 {
      let clock = TestClock()
      let stub = StubTransport(fallback: .never, clock: clock)
      let client = stubClient(
        stub,
        middleware: [TimeoutMiddleware(attempt: nil, overall: .milliseconds(500), clock: clock)])
      let task = Task { try await client.send(Endpoint<Data>(.get, "slow")) }
      await clock.waitForSleepers(2)
      clock.advance(by: .milliseconds(500))
      let error = await courierError { try await task.linkedValue }
      try #require(error?.stage == "timeout", "\(String(reflecting: error))")
      #expect(error?.debugDescription.contains("overall deadline of 0.5 seconds") == true)
    }
  }

  @Test("Courier's timer ends an attempt the transport does not end, at its simulated time")
  func injectedClock() async throws {
    let clock = TestClock()
    let stub = StubTransport(fallback: .never)
    let timeout = TimeoutMiddleware(attempt: .seconds(30), overall: nil, clock: clock)
    let client = stubClient(stub, middleware: [timeout])
    let task = Task { try await client.send(Endpoint<Void>(.get, "slow")) }
    // The timer is armed before the attempt reaches the stub: wait for both.
    await clock.waitForSleepers(1)
    await stub.waitForRequests(1)
    clock.advance(by: .seconds(30))
    let error = await courierError { try await task.linkedValue }
    #expect(error?.kind == .timedOut)
    #expect(stub.requests.first?.timeout == .seconds(30))
  }

  @Test("the description names both limits")
  func description() {
    var timeout = TimeoutMiddleware()
    #expect(timeout.description == "TimeoutMiddleware(attempt 30 s; overall 60 s)")
    timeout.overallTimeout = nil
    #expect(timeout.description == "TimeoutMiddleware(attempt 30 s; overall none)")
  }
}
