/// Ends an attempt that takes too long, and a logical request that has run out of time across
/// all its attempts and backoff waits — enforced by Courier's own timer, over any transport and
/// whatever runs between this middleware and the transport.
///
/// - Per attempt: default 30 s (``defaultAttemptTimeout``); `Endpoint.timeout(_:)` overrides
///   it per endpoint.
/// - Overall: default 60 s (``defaultOverallTimeout``), from the first attempt to the last
///   byte, backoff waits included; `Endpoint.deadline(_:)` overrides it.
///
/// When a limit fires, the attempt in flight is cancelled (the transport closes its
/// connection; nothing keeps running) and the request fails with kind
/// ``CourierError/Kind/timedOut``; ``CourierError/debugDescription`` names the limit that
/// fired. The deadline travels with the request as its ``DeadlineAttribute``, so a
/// ``RetryMiddleware`` outside starts no wait or attempt that would end past it, and the
/// resend of an ``AuthMiddleware`` outside runs within it rather than under a new one.
///
/// ```swift
/// let client = Client(
///   baseURL: base, transport: URLSessionTransport(),
///   middleware: [RetryMiddleware(), TimeoutMiddleware(attempt: .seconds(10), overall: .seconds(30))])
/// let report = Endpoint<Data>(.get, "reports/2026").timeout(.seconds(120)).deadline(.seconds(300))
/// ```
///
/// The attempt's limit is also handed to the transport as ``Request/timeout``, which the
/// built-in transports apply as a total limit; when the transport's own limit ends the attempt first, the error is the
/// same ``CourierError/Kind/timedOut``, naming this middleware's limit.
public struct TimeoutMiddleware: Middleware {
  /// The limit for one attempt, or `nil` for none.
  public var attemptTimeout: Duration?
  /// The limit for the logical request, or `nil` for none.
  public var overallTimeout: Duration?
  private let timer: Timer
  private let deadline: @Sendable (Duration) -> Deadline

  /// What ends an attempt at its limit.
  private enum Timer: Sendable {
    /// The process's ``CancellationTimer`` thread, for `ContinuousClock`.
    case thread
    /// A task sleeping on an injected clock (tests).
    case clock(any Clock<Duration>)
  }

  /// 30 s per attempt: far above any healthy API call, short enough that a stuck connection
  /// is noticed while the user still waits.
  public static let defaultAttemptTimeout = Duration.seconds(30)
  /// 60 s overall: two full attempts, or several short ones with backoff.
  public static let defaultOverallTimeout = Duration.seconds(60)

  /// Creates the middleware.
  ///
  /// - Parameters:
  ///   - attempt: Per-attempt limit; default 30 s; `nil` for none.
  ///   - overall: Logical-request limit; default 60 s; `nil` for none.
  ///   - clock: The clock limits are measured on; inject a test clock in tests.
  public init<C: Clock>(
    attempt: Duration? = TimeoutMiddleware.defaultAttemptTimeout,
    overall: Duration? = TimeoutMiddleware.defaultOverallTimeout,
    clock: C = ContinuousClock()
  ) where C.Duration == Duration {
    attemptTimeout = attempt
    overallTimeout = overall
    timer = C.self == ContinuousClock.self ? .thread : .clock(clock)
    deadline = { Deadline(after: $0, clock: clock) }
  }

  /// Sends the attempt, failing it with ``CourierError/Kind/timedOut`` when a limit fires.
  ///
  /// The attempt runs inline, under a ``RequestCancellation`` of its own (a child of the
  /// request's, so `cancelAll()` still reaches it), and a timer cancels that token at the
  /// limit: the transport closes the attempt's connection and the attempt ends at once. Code
  /// inside the timeout that waits should wait with
  /// ``RequestCancellation/withCancellationHandler(operation:onCancel:)`` or
  /// ``RequestCancellation/sleep(for:clock:)``, as the built-in transports do.
  nonisolated(nonsending) public func intercept(
    _ request: Request, next: Next
  ) async throws
    -> Response
  {
    var request = request
    guard let (limit, overall) = prepareAttempt(&request) else {
      return try await next(request)
    }
    guard limit > .zero else { throw timedOut(request, limit, overall, sent: false) }
    // On this middleware's clock, as the limit is: an injected test clock drives a stub's
    // Request.timeout too.
    let ends = deadline(limit)
    let outer = RequestCancellation.current
    let token = RequestCancellation(parent: outer)
    let armed = arm(limit, token)
    defer {
      disarm(armed, token)
      token.detachFromParent()
    }
    do {
      return try await RequestCancellation.$current.withValue(token) { try await next(request) }
    } catch {
      throw failure(
        error, of: request, limit: limit, overall: overall, ends: ends, token: token,
        outer: outer, taskCancelled: Task.isCancelled)
    }
  }

  /// What an attempt that failed with `error` throws. Synchronous and out of line, so that
  /// the errors it builds stay on the thread's stack instead of in ``intercept(_:next:)``'s
  /// frame, which every request in flight holds.
  @inline(never)
  private func failure(
    _ error: any Error, of request: Request, limit: Duration, overall: Duration?,
    ends: Deadline, token: RequestCancellation, outer: RequestCancellation?,
    taskCancelled: Bool
  ) -> any Error {
    // The timer cancelled the attempt, not the caller: report the limit that fired. An
    // attempt that failed for a reason of its own (a refused connection, a bad status) keeps
    // it, even when the timer fired before this code ran (a starved pool runs it late).
    if token.isCancelled, !(outer?.isCancelled ?? false), !taskCancelled,
      Self.mayBeCancellation(error)
    {
      return timedOut(
        request, limit, overall, sent: true, reached: (error as? CourierError)?.timings)
    }
    // The transport's own limit, the same one, ended the attempt first. Its other limits
    // (connecting, idle) fire earlier and keep their own text.
    if let error = error as? CourierError, error.kind == .timedOut, ends.remaining <= .zero {
      return timedOut(request, limit, overall, sent: true, reached: error.timings)
    }
    return error
  }

  /// Whether `error` may be how the attempt ended on the timer's cancellation: any error but a
  /// ``CourierError`` of another kind than ``CourierError/Kind/cancelled`` or
  /// ``CourierError/Kind/timedOut`` (a transport's own limit, which is the same one).
  private static func mayBeCancellation(_ error: any Error) -> Bool {
    guard let error = error as? CourierError else { return true }
    return error.kind == .cancelled || error.kind == .timedOut
  }

  /// How the attempt's token was armed: on the timer thread, or by a task sleeping on an
  /// injected clock.
  private enum Armed {
    case thread
    case task(Task<Void, any Error>)
  }

  private func arm(_ limit: Duration, _ token: RequestCancellation) -> Armed {
    switch timer {
    case .thread:
      CancellationTimer.shared.arm(after: limit, cancelling: token)
      return .thread
    case .clock(let clock):
      // The deadline is read now, when the attempt is armed, not when the task first runs.
      return .task(
        RequestCancellation.sleepingTask(for: limit, on: clock, then: { token.cancel() }))
    }
  }

  private func disarm(_ armed: Armed, _ token: RequestCancellation) {
    switch armed {
    case .thread: CancellationTimer.shared.disarm(token)
    case .task(let task): task.cancel()
    }
  }

  /// Gives `request` the logical request's deadline (made now when it has none) and the
  /// attempt's limit as its transport timeout, and returns that limit — with the overall limit
  /// when the deadline is what bounds it — or `nil` when there is no limit.
  ///
  /// `package` so that `courier-bench` measures other timeout designs on the same rules.
  package func prepareAttempt(
    _ request: inout Request
  ) -> (limit: Duration, overall: Duration?)? {
    var deadline = request.attributes[DeadlineAttribute.self]
    // A deadline made just now has all of its limit left: no second clock read.
    var fresh: Duration?
    if deadline == nil,
      let overall = request.attributes[OverallTimeoutAttribute.self] ?? overallTimeout
    {
      deadline = self.deadline(overall)
      request.attributes[DeadlineAttribute.self] = deadline
      fresh = max(.zero, overall)
    }
    var limit = request.timeout ?? attemptTimeout
    var overall: Duration?
    if let deadline {
      let remaining = fresh ?? deadline.remaining
      if limit.map({ remaining < $0 }) ?? true {
        limit = remaining
        overall = deadline.limit
      }
    }
    guard let limit else { return nil }
    if limit > .zero { request.timeout = limit }
    return (limit, overall)
  }

  /// The error for a limit that fired; its words are built only now, not on every attempt.
  /// `reached`: the phases the cancelled attempt had reached, which the error keeps.
  private func timedOut(
    _ request: Request, _ limit: Duration, _ overall: Duration?, sent: Bool,
    reached: Response.Timings? = nil
  )
    -> CourierError
  {
    let firing =
      overall.map { "the overall deadline of \($0)" } ?? "the per-attempt timeout of \(limit)"
    var error = CourierError(
      kind: .timedOut,
      debugMessage: sent
        ? "\(firing) fired; the attempt was cancelled"
        : "\(firing) had passed before the attempt started",
      request: request, attempts: sent ? 1 : 0, stage: "timeout")
    if let reached { error.timings = reached }
    return error
  }

}

/// The overall limit for one endpoint's logical request, replacing the
/// ``TimeoutMiddleware``'s; set it with `Endpoint.deadline(_:)`.
public enum OverallTimeoutAttribute: RequestAttributeKey {
  /// No override.
  public static let defaultValue: Duration? = nil
}

extension Endpoint {
  /// Limits the whole logical request — every attempt and every wait between them — to
  /// `duration`, replacing the ``TimeoutMiddleware``'s overall limit.
  public func deadline(_ duration: Duration) -> Self {
    attribute(OverallTimeoutAttribute.self, duration)
  }
}

extension TimeoutMiddleware: CustomStringConvertible {
  /// `TimeoutMiddleware(attempt 30 s; overall 60 s)`; `none` where a limit is off.
  public var description: String {
    "TimeoutMiddleware(attempt \(attemptTimeout.map(DescriptionText.duration) ?? "none"); "
      + "overall \(overallTimeout.map(DescriptionText.duration) ?? "none"))"
  }
}
