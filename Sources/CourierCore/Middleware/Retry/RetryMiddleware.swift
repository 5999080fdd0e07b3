/// Sends a request again when it failed in a way that may pass: a retryable status (408,
/// 429, 500, 502, 503, 504) or a transient failure (timed out, refused, connection lost,
/// DNS), with exponential backoff and full jitter, `Retry-After`, a deadline and a budget.
///
/// What is never retried:
/// - a method that is not idempotent (`POST`, `PATCH`) unless the request carries an
///   `Idempotency-Key` header or is marked retryable (`Endpoint.retryable()`): a second
///   `POST` could create a second order;
/// - a body that cannot be sent twice;
/// - cancellation, business and decoding errors, and any 4xx but 408 and 429: sending the
///   same request again gives the same answer;
/// - a wait that would end past the request's ``Deadline``, or one the ``RetryBudget``
///   cannot pay for.
///
/// The wait before retry *n* is a random duration between zero and
/// `baseDelay × multiplier^(n−1)` capped at `maximumDelay` ("full jitter"), so clients that
/// failed together do not come back together. A `Retry-After` (seconds or HTTP-date) replaces
/// it; one longer than ``RetryPolicy/maximumRetryAfter`` ends the request at once with the
/// wait in ``CourierError/retryAfter``. Cancelling the task (or `Client.cancelAll()`) ends a
/// wait at once.
///
/// ```swift
/// let client = Client(
///   baseURL: base, transport: URLSessionTransport(),
///   middleware: [RetryMiddleware(policy: .standard)])
/// let order = Endpoint<Void>(.post, "orders").header(.idempotencyKey, "7f3a").retryable()
/// ```
///
/// The response (``Response/attempts``) and the error (``CourierError/attempts``) say how
/// many attempts were made; each attempt's request carries its number in
/// ``AttemptAttribute``.
public struct RetryMiddleware: Middleware {
  /// The policy for requests that do not bring their own (``RetryPolicyAttribute``).
  public var policy: RetryPolicy
  /// The budget shared by this middleware's requests, or `nil` for none.
  public let budget: RetryBudget?
  private let clock: any Clock<Duration>
  private let jitter: @Sendable (Duration) -> Duration

  /// Creates the middleware.
  ///
  /// - Parameters:
  ///   - policy: Default ``RetryPolicy/standard``.
  ///   - budget: Default a ``RetryBudget`` with its defaults (10 retries plus 20 % of
  ///     requests per 10 s); `nil` for no budget.
  ///   - clock: What backoff waits sleep on; inject a test clock in tests.
  ///   - jitter: Picks the wait from the backoff ceiling; default ``fullJitter(_:)``.
  public init(
    policy: RetryPolicy = .standard, budget: RetryBudget? = RetryBudget(),
    clock: any Clock<Duration> = ContinuousClock(),
    jitter: @escaping @Sendable (Duration) -> Duration = RetryMiddleware.fullJitter
  ) {
    self.policy = policy
    self.budget = budget
    self.clock = clock
    self.jitter = jitter
  }

  /// A uniformly random duration between zero and `ceiling`, in whole microseconds.
  @Sendable public static func fullJitter(_ ceiling: Duration) -> Duration {
    // Clamped before the conversion, which traps past `Int64.max` (a ceiling of centuries).
    let wanted = RetryPolicy.seconds(ceiling) * 1_000_000
    let microseconds = Int64(max(0, min(wanted, 9e18)))
    return .microseconds(Int64.random(in: 0...microseconds))
  }

  /// Sends the request, and again while the policy allows.
  nonisolated(nonsending) public func intercept(
    _ request: Request, next: Next
  ) async throws
    -> Response
  {
    let policy = request.attributes[RetryPolicyAttribute.self] ?? self.policy
    budget?.recordRequest()
    // Attempt 1 here, and the common case, a response whose status is not retried, goes
    // straight back: the loop of later attempts is a function of its own, whose code a
    // request that succeeds never runs, so it does not crowd the instruction cache.
    var first = request
    // Attempt 1 is the attribute's default: set only when it says something new.
    if first.attributes[AttemptAttribute.self] != 1 { first.attributes[AttemptAttribute.self] = 1 }
    let outcome: Result<Response, CourierError>
    do {
      var response = try await next(first)
      response.attempts = 1
      guard policy.maximumAttempts > 1, policy.retries(status: response.status),
        Self.mayRetry(request, policy: policy)
      else { return response }
      outcome = .success(response)
    } catch {
      outcome = .failure(Self.failure(error, of: first, attempt: 1))
    }
    return try await retry(request, after: outcome, sent: first, policy: policy, next: next)
  }

  /// Whether `request` may be sent more than once under `policy`: an idempotent method (or
  /// one marked retryable, or carrying an `Idempotency-Key`) and a body that can be replayed.
  private static func mayRetry(_ request: Request, policy: RetryPolicy) -> Bool {
    policy.maximumAttempts > 1 && request.body.isReplayable
      && (request.method.isIdempotent || request.attributes[RetryableAttribute.self]
        || request.headers.contains(.idempotencyKey))
  }

  /// Attempts 2 and later, after attempt 1 (sent as `sent`) ended in `outcome`.
  nonisolated(nonsending) private func retry(
    _ request: Request, after outcome: Result<Response, CourierError>, sent: Request,
    policy: RetryPolicy, next: Next
  ) async throws -> Response {
    let mayRetry = Self.mayRetry(request, policy: policy)
    var outcome = outcome
    var attemptRequest = sent
    var attempt = 1
    // A deadline set by a TimeoutMiddleware inside comes back on the attempt's request, and
    // goes out again with every later attempt, so it spans them all.
    var deadline = request.attributes[DeadlineAttribute.self]
    while true {
      let sent = (try? outcome.get().request) ?? outcome.failureRequest
      deadline = deadline ?? sent?.attributes[DeadlineAttribute.self]
      guard mayRetry, attempt < policy.maximumAttempts,
        let wait = try decide(&outcome, policy: policy, attempt: attempt, deadline: deadline)
      else { return try outcome.get() }
      request.attributes[ObservationAttribute.self]?.retryScheduled(delay: wait, after: outcome)
      do {
        try await RequestCancellation.sleep(for: wait, clock: clock)
      } catch {
        throw CourierError(
          kind: .cancelled,
          debugMessage: "cancelled during the backoff before attempt \(attempt + 1)",
          underlying: error, request: attemptRequest, attempts: attempt, stage: "retry")
      }
      attempt += 1
      attemptRequest = request
      attemptRequest.attributes[AttemptAttribute.self] = attempt
      if let deadline { attemptRequest.attributes[DeadlineAttribute.self] = deadline }
      do {
        var response = try await next(attemptRequest)
        response.attempts = attempt
        // `decide` would say the same after copying it into a `Result` and out again.
        guard mayRetry, attempt < policy.maximumAttempts,
          policy.retries(status: response.status)
        else { return response }
        outcome = .success(response)
      } catch {
        outcome = .failure(Self.failure(error, of: attemptRequest, attempt: attempt))
      }
    }
  }

  /// What attempt number `attempt`, sent as `request`, threw, as a `CourierError` that names
  /// that request and counts at least that many attempts.
  private static func failure(
    _ error: any Error, of request: Request, attempt: Int
  )
    -> CourierError
  {
    var failure = CourierError(error, request: request)
    failure.attempts = max(failure.attempts, attempt)
    return failure
  }

  /// The wait before the next attempt, or `nil` to end with `outcome` (whose error then says
  /// why it was not retried).
  private func decide(
    _ outcome: inout Result<Response, CourierError>, policy: RetryPolicy, attempt: Int,
    deadline: Deadline?
  ) throws(CourierError) -> Duration? {
    // The failed response is copied out of the error before it is read: Swift 6.3.1 -O
    // crashes (CopyPropagation, "Found ownership error") on `error.status` read here.
    let response: Response?
    let retryable: Bool
    switch outcome {
    case .success(let value):
      retryable = policy.retries(status: value.status)
      response = value
    case .failure(let error):
      response = error.response
      let retryableStatus =
        error.kind == .httpStatus
        && response.map { policy.retries(status: $0.status) } == true
      retryable = retryableStatus || policy.retryableKinds.contains(error.kind)
    }
    guard retryable else { return nil }
    if RequestCancellation.isCancelled {
      // Cancelled while the attempt failed: end as cancelled, not with the stale outcome.
      throw CourierError(
        kind: .cancelled, debugMessage: "cancelled after attempt \(attempt)",
        request: (try? outcome.get().request) ?? outcome.failureRequest, attempts: attempt,
        stage: "retry")
    }

    var wait = jitter(policy.backoff(beforeRetry: attempt))
    if let header = response?.headers[.retryAfter], let asked = RetryAfter.parse(header) {
      guard asked <= policy.maximumRetryAfter else {
        note(
          &outcome, retryAfter: asked,
          "not retried: Retry-After asks for \(asked), more than the policy's \(policy.maximumRetryAfter)"
        )
        return nil
      }
      wait = asked
    }
    if let deadline, wait >= deadline.remaining {
      note(&outcome, "not retried: waiting \(wait) would pass the deadline (\(deadline))")
      return nil
    }
    if let budget, !budget.tryRetry() {
      note(&outcome, "not retried: the retry budget is spent (\(budget.ratio) of requests)")
      return nil
    }
    return wait
  }

  private func note(
    _ outcome: inout Result<Response, CourierError>, retryAfter: Duration? = nil, _ message: String
  ) {
    guard case .failure(var error) = outcome else { return }
    error.debugMessage += error.debugMessage.isEmpty ? message : "; " + message
    if let retryAfter { error.retryAfter = retryAfter }
    outcome = .failure(error)
  }
}

extension Result where Success == Response, Failure == CourierError {
  /// The request a failed attempt was sent as, when the error knows it.
  fileprivate var failureRequest: Request? {
    if case .failure(let error) = self { return error.request }
    return nil
  }
}

extension RetryMiddleware: CustomStringConvertible {
  /// The policy and the budget: `RetryMiddleware(3 attempts; backoff 0.5 s × 2, full
  /// jitter, cap 30 s; Retry-After up to 60 s; statuses 408, 429, 500, 502, 503, 504;
  /// budget 10 + 20 % of requests per 10 s)`.
  public var description: String {
    let statuses = policy.retryableStatuses.sorted().map(String.init).joined(separator: ", ")
    let budgetText =
      budget.map {
        "budget \($0.minimumRetries) + \(DescriptionText.number($0.ratio * 100)) % of requests "
          + "per \(DescriptionText.duration($0.window))"
      } ?? "no budget"
    return "RetryMiddleware(\(policy.maximumAttempts) attempts; backoff "
      + "\(DescriptionText.duration(policy.baseDelay)) × \(DescriptionText.number(policy.multiplier)), "
      + "full jitter, cap \(DescriptionText.duration(policy.maximumDelay)); Retry-After up to "
      + "\(DescriptionText.duration(policy.maximumRetryAfter)); statuses \(statuses); \(budgetText))"
  }
}
