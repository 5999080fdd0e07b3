import Foundation

/// Hears what a ``Client`` does with each request — it started, each attempt, a retry
/// scheduled, an auth refresh, the response head, the body's end, the failure, the end — so
/// metrics, traces or audit logs need no middleware of their own.
///
/// ## When to use it
/// Install observers when you want to *know* what happened to requests without changing
/// them: count them, time them, write an audit line. To change a request or a response, write
/// a ``Middleware`` instead. Observers see every logical request once (``requestStarted(_:)``
/// … ``requestEnded(_:result:total:)``) and every attempt inside it, whatever middleware the
/// client has.
///
/// ## A built-in observer
/// ``MetricsObserver`` records request counts, durations, an in-flight gauge, retries, auth
/// refreshes and bytes into a ``MetricsSink`` (swift-metrics' shape). For spans, give the
/// client a ``RequestTracer`` instead: see `Client(observers:tracer:)`.
///
/// ```swift
/// let sink = MyMetricsSink()
/// let client = Client.standard(
///   baseURL: URL(string: "https://api.example.com/")!,
///   observers: [MetricsObserver(sink: sink)])
/// ```
///
/// ## Writing your own
/// Conform a `Sendable` type and implement only the callbacks you need: every method has an
/// empty default, so events added later do not break your type. Each callback gets the
/// ``ObservedRequest`` (an ``ObservedRequest/id`` unique in the process, the request as given
/// to the client, when it started) and, for attempts, the attempt number.
///
/// ```swift
/// struct SlowRequestAuditor: ClientObserver {
///   func requestEnded(
///     _ request: ObservedRequest, result: Result<Response, CourierError>, total: Duration
///   ) {
///     if total > .seconds(2) { print("slow: \(request.request) took \(total)") }
///   }
/// }
/// ```
///
/// ## Order and cost
/// Callbacks run synchronously on the request's task, in the order the events happen, one
/// request's events never at once: keep them cheap and never block (hand slow work to a
/// queue of your own). For one request the order is ``requestStarted(_:)``; for each attempt
/// ``attemptStarted(_:attempt:request:)`` and ``attemptEnded(_:attempt:result:)``, with
/// ``retryScheduled(_:attempt:delay:reason:status:)`` or
/// ``authRefreshed(_:succeeded:duration:)`` between attempts; then
/// ``responseHead(_:response:)`` and ``bodyFinished(_:bytes:duration:completed:)``, or
/// ``requestFailed(_:error:)``; last ``requestEnded(_:result:total:)``. A streamed body
/// (``Response/bodyStream``) finishes, and its request ends, when the stream ends: those two
/// callbacks run where it ends (the transport's thread, or the reader's task).
///
/// A client without observers (and without a tracer) does none of this work: no event is
/// built, no attribute is added, no lock is taken.
public protocol ClientObserver: Sendable {
  /// A logical request entered the client.
  func requestStarted(_ request: ObservedRequest)
  /// Attempt number `attempt` (1 for the first) goes to the transport as `request`, after
  /// every middleware changed it.
  func attemptStarted(_ request: ObservedRequest, attempt: Int, request sent: Request)
  /// Attempt number `attempt` ended: with a response (any status: this is before the
  /// response pipeline's checks) or an error. Its phases are in the response's or the error's
  /// ``Response/Timings`` where the transport measured them. An attempt a per-attempt limit
  /// ended (`TimeoutMiddleware`) ends with ``CourierError/Kind/timedOut``, as its request does.
  func attemptEnded(
    _ request: ObservedRequest, attempt: Int, result: Result<Response, CourierError>)
  /// `RetryMiddleware` will send the request again after `delay`, because attempt number
  /// `attempt` failed with `reason` (``CourierError/Kind/httpStatus`` with its `status` for a
  /// retryable status).
  func retryScheduled(
    _ request: ObservedRequest, attempt: Int, delay: Duration, reason: CourierError.Kind,
    status: Int?)
  /// `AuthMiddleware` waited `duration` for a credential refresh after a rejection, and the
  /// refresh succeeded or failed. Requests rejected together share one refresh: each reports
  /// its own wait.
  func authRefreshed(_ request: ObservedRequest, succeeded: Bool, duration: Duration)
  /// The final response's head left the chain (status and headers; for a streamed body, the
  /// body is still to come, and ``Response/bodyStream`` is `nil`: the stream is the caller's).
  func responseHead(_ request: ObservedRequest, response: Response)
  /// The response body is complete: `bytes` long, `duration` after the request started. For
  /// a buffered body right after ``responseHead(_:response:)``; for a streamed one when the
  /// stream ends, `completed` `false` when it failed or its reader stopped first.
  func bodyFinished(_ request: ObservedRequest, bytes: Int, duration: Duration, completed: Bool)
  /// The request failed: every error leaving the client, after retries, and the error a
  /// streamed body failed with in mid-transfer (its ``CourierError/response`` the head).
  func requestFailed(_ request: ObservedRequest, error: CourierError)
  /// The request is over, `total` after it started: with its response (for a streamed body,
  /// when the body ended) or its error (a streamed body cut in mid-transfer: that error).
  func requestEnded(
    _ request: ObservedRequest, result: Result<Response, CourierError>, total: Duration)
}

extension ClientObserver {
  /// Does nothing.
  public func requestStarted(_ request: ObservedRequest) {}
  /// Does nothing.
  public func attemptStarted(_ request: ObservedRequest, attempt: Int, request sent: Request) {}
  /// Does nothing.
  public func attemptEnded(
    _ request: ObservedRequest, attempt: Int, result: Result<Response, CourierError>
  ) {}
  /// Does nothing.
  public func retryScheduled(
    _ request: ObservedRequest, attempt: Int, delay: Duration, reason: CourierError.Kind,
    status: Int?
  ) {}
  /// Does nothing.
  public func authRefreshed(_ request: ObservedRequest, succeeded: Bool, duration: Duration) {}
  /// Does nothing.
  public func responseHead(_ request: ObservedRequest, response: Response) {}
  /// Does nothing.
  public func bodyFinished(
    _ request: ObservedRequest, bytes: Int, duration: Duration, completed: Bool
  ) {}
  /// Does nothing.
  public func requestFailed(_ request: ObservedRequest, error: CourierError) {}
  /// Does nothing.
  public func requestEnded(
    _ request: ObservedRequest, result: Result<Response, CourierError>, total: Duration
  ) {}
}

/// The logical request an observer event is about.
public struct ObservedRequest: Sendable {
  /// Unique within the process for the life of the process: correlates the events of one
  /// logical request.
  public let id: UInt64
  /// The request as it was given to the client, before any middleware.
  public let request: Request
  /// When the client started it.
  public let start: ContinuousClock.Instant

  /// Creates the value an observer receives (for tests of your own observers).
  public init(id: UInt64, request: Request, start: ContinuousClock.Instant = .now) {
    self.id = id
    self.request = request
    self.start = start
  }

  /// The request's method, such as `GET`.
  public var method: String { request.method.rawValue }

  /// `host` or `host:port` (when the URL names a port), lowercased, IPv6 addresses in
  /// brackets, control characters percent-encoded: the only part of the URL fit for a metric
  /// label or a span name.
  public var host: String { Self.hostLabel(of: request.url) }

  static func hostLabel(of url: URL) -> String {
    guard let host = HostText.host(of: url, lowercased: true).map(HostText.bracketed) else {
      return ""
    }
    guard let port = url.port else { return host }
    return "\(host):\(port)"
  }
}
