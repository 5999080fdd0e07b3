import CourierCore
import CourierTesting
import Foundation
import Synchronization
import Testing

@Suite("RetryMiddleware", .timeLimit(.minutes(5)))
struct RetryMiddlewareTests {
  /// A retry middleware on a test clock whose jitter picks the ceiling, so waits are exact.
  static func retry(
    _ policy: RetryPolicy = .standard, clock: TestClock, budget: RetryBudget? = nil
  ) -> RetryMiddleware {
    RetryMiddleware(policy: policy, budget: budget, clock: clock, jitter: { $0 })
  }

  /// Runs `send` while driving `clock`: each time a wait starts, checks that nothing happens
  /// a millisecond before it should, then lets it end. Returns the waits seen.
  static func drive(
    _ clock: TestClock, stub: StubTransport, expecting waits: [Duration],
    send: @escaping @Sendable () async throws -> Void
  ) async throws {
    let task = Task { try await send() }
    for (index, wait) in waits.enumerated() {
      await clock.waitForSleepers(index + 1)
      #expect(stub.requests.count == index + 1)
      clock.advance(by: wait - .milliseconds(1))
      #expect(stub.requests.count == index + 1, "retried before \(wait)")
      clock.advance(by: .milliseconds(1))
      await stub.waitForRequests(index + 2)
    }
    _ = try? await task.linkedValue
  }

  @Test(
    "each retryable status is retried with exponential backoff, up to 3 attempts",
    arguments: [408, 429, 500, 502, 503, 504])
  func retryableStatuses(status: Int) async throws {
    let clock = TestClock()
    let stub = StubTransport(fallback: .status(status))
    let client = stubClient(stub, middleware: [Self.retry(clock: clock)])
    let box = ErrorBox()
    try await Self.drive(
      clock, stub: stub, expecting: [.milliseconds(500), .seconds(1)]
    ) {
      box.set(await courierError { try await client.send(Endpoint<Void>(.get, "x")) })
    }
    #expect(stub.requests.count == 3)
    #expect(box.error?.kind == .httpStatus)
    #expect(box.error?.attempts == 3)
    #expect(stub.requests.map { $0.attributes[AttemptAttribute.self] } == [1, 2, 3])
  }

  @Test(
    "each retryable kind is retried; a later success returns with its attempt count",
    arguments: [CourierError.Kind.timedOut, .cannotConnect, .connectionLost, .cannotFindHost])
  func retryableKinds(kind: CourierError.Kind) async throws {
    let clock = TestClock()
    let stub = StubTransport([.failure(kind), .status(200)])
    let client = stubClient(stub, middleware: [Self.retry(clock: clock)])
    let task = Task { try await client.send(Request(url: testBase)) }
    await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(500))
    let response = try await task.linkedValue
    #expect(response.status == 200)
    #expect(response.attempts == 2)
  }

  @Test(
    "cancelled, business, decoding, invalid requests and other 4xx are never retried",
    arguments: [
      StubResponse.failure(.cancelled), .failure(.business), .failure(.decoding),
      .failure(.invalidRequest), .failure(.secureConnectionFailed), .status(400), .status(401),
      .status(404), .status(409), .status(501),
    ])
  func notRetried(stubbed: StubResponse) async throws {
    let stub = StubTransport(fallback: stubbed)
    let client = stubClient(stub, middleware: [Self.retry(clock: TestClock())])
    let error = await courierError { try await client.send(Endpoint<Void>(.get, "x")) }
    #expect(error != nil)
    #expect(stub.requests.count == 1)
  }

  @Test("POST is not retried; with Idempotency-Key or marked retryable it is")
  func idempotency() async throws {
    let clock = TestClock()
    let plain = StubTransport(fallback: .status(503))
    _ = await courierError {
      try await stubClient(plain, middleware: [Self.retry(clock: clock)])
        .send(Endpoint<Void>(.post, "orders"))
    }
    #expect(plain.requests.count == 1)

    for endpoint in [
      Endpoint<Void>(.post, "orders").header(.idempotencyKey, "k-1"),
      Endpoint<Void>(.patch, "orders").retryable(),
    ] {
      let clock = TestClock()
      let stub = StubTransport([.status(503), .status(204)])
      let client = stubClient(stub, middleware: [Self.retry(clock: clock)])
      let task = Task { try await client.send(endpoint) }
      await clock.waitForSleepers(1)
      clock.advance(by: .milliseconds(500))
      try await task.linkedValue
      #expect(stub.requests.count == 2)
    }
  }

  @Test("Retry-After in seconds and as an HTTP-date replaces the backoff")
  func retryAfter() async throws {
    let date = Date(timeIntervalSinceNow: 20)
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    for (header, wait) in [
      ("7", Duration.seconds(7)), (formatter.string(from: date), .seconds(20)),
    ] {
      var response = StubResponse.status(503)
      try response.headers.add(.retryAfter, header)
      let clock = TestClock()
      let stub = StubTransport([response, .status(204)])
      let client = stubClient(stub, middleware: [Self.retry(clock: clock)])
      let task = Task { try await client.send(Endpoint<Void>(.get, "x")) }
      await clock.waitForSleepers(1)
      clock.advance(by: wait - .seconds(2))
      #expect(stub.requests.count == 1, "retried before Retry-After \(header)")
      clock.advance(by: .seconds(2))
      try await task.linkedValue
      #expect(stub.requests.count == 2)
    }
  }

  @Test("a Retry-After longer than the policy allows fails at once with the wait")
  func retryAfterTooLong() async throws {
    var response = StubResponse.status(429)
    try response.headers.add(.retryAfter, "3600")
    let stub = StubTransport(fallback: response)
    let client = stubClient(stub, middleware: [Self.retry(clock: TestClock())])
    let error = await courierError { try await client.send(Endpoint<Void>(.get, "x")) }
    #expect(stub.requests.count == 1)
    #expect(error?.retryAfter == .seconds(3600))
    #expect(error?.reason.contains("3600") == true)
  }

  @Test("full jitter stays between zero and the capped backoff, and varies")
  func jitterBounds() {
    let policy = RetryPolicy.standard
    #expect(policy.backoff(beforeRetry: 1) == .milliseconds(500))
    #expect(policy.backoff(beforeRetry: 2) == .seconds(1))
    #expect(policy.backoff(beforeRetry: 3) == .seconds(2))
    #expect(policy.backoff(beforeRetry: 20) == .seconds(30))
    #expect(policy.backoff(beforeRetry: Int.max) == .seconds(30))
    var seen = Set<Duration>()
    for _ in 0..<1000 {
      let wait = RetryMiddleware.fullJitter(.seconds(2))
      #expect(wait >= .zero && wait <= .seconds(2))
      seen.insert(wait)
    }
    #expect(seen.count > 900)
    // No trap at either end: a ceiling of centuries, and a negative one.
    #expect(RetryMiddleware.fullJitter(.seconds(Int64.max) * 4) >= .zero)
    #expect(RetryMiddleware.fullJitter(.seconds(-5)) == .zero)
  }

  @Test("the retry budget stops retries once spent and counts requests back in")
  func budget() async throws {
    let clock = TestClock()
    let budget = RetryBudget(ratio: 0.5, minimumRetries: 1, window: .seconds(10), clock: clock)
    let stub = StubTransport(fallback: .failure(.connectionLost))
    let policy = RetryPolicy(maximumAttempts: 2, baseDelay: .zero)
    let client = stubClient(
      stub, middleware: [RetryMiddleware(policy: policy, budget: budget, clock: clock)])
    // 1 (floor) + 0.5 × requests: the first two requests may retry, the third may not.
    for expected in [2, 4, 5] {
      let error = await courierError { try await client.send(Endpoint<Void>(.get, "x")) }
      #expect(stub.requests.count == expected)
      if expected == 5 { #expect(error?.debugDescription.contains("budget is spent") == true) }
    }
    clock.advance(by: .seconds(11))  // the window moves on
    _ = await courierError { try await client.send(Endpoint<Void>(.get, "x")) }
    #expect(stub.requests.count == 7)
  }

  @Test("the default budget allows 10 retries plus 20 % of requests per window: the sum")
  func defaultBudgetIsASum() {
    let clock = TestClock()
    let budget = RetryBudget(clock: clock)
    var quiet = 0
    while budget.tryRetry() { quiet += 1 }
    #expect(quiet == 10, "with no requests, the constant part alone")
    clock.advance(by: .seconds(11))
    for _ in 0..<100 { budget.recordRequest() }
    var busy = 0
    while budget.tryRetry() { busy += 1 }
    #expect(busy == 30, "10 + 20 % of 100, not the larger of 10 and 20")
  }

  @Test("a wait that would pass the deadline is not started")
  func deadline() async throws {
    let clock = TestClock()
    let stub = StubTransport(fallback: .failure(.connectionLost))
    let client = stubClient(stub, middleware: [Self.retry(clock: clock)])
    let endpoint = Endpoint<Void>(.get, "x")
      .attribute(DeadlineAttribute.self, Deadline(after: .milliseconds(400), clock: clock))
    let error = await courierError { try await client.send(endpoint) }
    #expect(stub.requests.count == 1)
    #expect(error?.debugDescription.contains("pass the deadline") == true)
  }

  @Test("an endpoint can turn retrying off or bring its own policy")
  func overrides() async throws {
    let stub = StubTransport(fallback: .status(503))
    let client = stubClient(stub, middleware: [Self.retry(clock: TestClock())])
    _ = await courierError { try await client.send(Endpoint<Void>(.get, "x").retry(.disabled)) }
    #expect(stub.requests.count == 1)
    let five = RetryPolicy(maximumAttempts: 5, baseDelay: .zero)
    _ = await courierError { try await client.send(Endpoint<Void>(.get, "x").retry(five)) }
    #expect(stub.requests.count == 6)
  }

  @Test(
    "cancelling the task or calling cancelAll during a backoff ends the wait at once",
    arguments: [false, true])
  func cancelDuringBackoff(viaCancelAll: Bool) async throws {
    let stub = StubTransport(fallback: .status(503))
    // A real clock and an hour-long backoff: only cancellation can end this quickly.
    let slow = RetryPolicy(baseDelay: .seconds(3600))
    let client = stubClient(
      stub, middleware: [RetryMiddleware(policy: slow, budget: nil, jitter: { $0 })])
    let task = Task { try await client.send(Endpoint<Void>(.get, "x")) }
    await stub.waitForRequests(1)
    let started = ContinuousClock.now
    if viaCancelAll {
      #expect(client.cancelAll() == 1)
    } else {
      task.cancel()
    }
    let error = await courierError { try await task.linkedValue }
    #expect(error?.kind == .cancelled)
    // Against an hour-long backoff, not a latency bound: 0.2–12 ms alone, 10.6 s in CI's
    // full run on 2 cores (two wake-ups queued behind the whole run's pool work).
    #expect(ContinuousClock.now - started < .seconds(120))
    #expect(stub.requests.count == 1)
  }
}

/// Holds an error from a task, for tests.
final class ErrorBox: Sendable {
  private let stored = Mutex<CourierError?>(nil)
  func set(_ error: CourierError?) { stored.withLock { $0 = error } }
  var error: CourierError? { stored.withLock { $0 } }
}

@Suite("RetryPolicy: retried statuses")
struct RetryPolicyStatusTests {
  /// Sets around the masks' edges (399/400, 463/464, 499/500, 563/564, 599/600), outside
  /// them, and empty.
  static let sets: [Set<Int>] = [
    RetryPolicy.defaultRetryableStatuses, [],
    [399, 400, 463, 464, 499, 500, 563, 564, 599, 600],
    [200, 302, 999, -1], [425], Set(400..<600),
  ]

  @Test("the check agrees with the set for every status from -1 to 1000", arguments: sets)
  func agreesWithTheSet(_ statuses: Set<Int>) {
    var policy = RetryPolicy(retryableStatuses: statuses)
    for status in -1...1000 {
      #expect(policy.retries(status: status) == statuses.contains(status), "\(status)")
    }
    // Changed through the set, the check follows.
    policy.retryableStatuses.remove(500)
    policy.retryableStatuses.insert(418)
    #expect(!policy.retries(status: 500))
    #expect(policy.retries(status: 418))
    #expect(policy.retryableStatuses == statuses.subtracting([500]).union([418]))
  }

  @Test("policies with the same statuses are equal and hash alike, however they were made")
  func equality() {
    var changed = RetryPolicy(retryableStatuses: [500, 503])
    changed.retryableStatuses.insert(418)
    let direct = RetryPolicy(retryableStatuses: [418, 503, 500])
    #expect(changed == direct)
    #expect(changed.hashValue == direct.hashValue)
    #expect(changed != RetryPolicy(retryableStatuses: [418, 503]))
  }
}
