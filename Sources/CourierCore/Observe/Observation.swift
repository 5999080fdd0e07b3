import Foundation
import Synchronization

/// A client's observers and tracer; the client holds one only when it has either, so a
/// client without them builds no event, adds no attribute and takes no lock.
final class Instrumentation: Sendable {
  let observers: [any ClientObserver]
  let tracer: (any RequestTracer)?
  private static let ids = Atomic<UInt64>(0)

  init?(observers: [any ClientObserver], tracer: (any RequestTracer)?) {
    guard !observers.isEmpty || tracer != nil else { return nil }
    self.observers = observers
    self.tracer = tracer
  }

  /// Starts observing a logical request that entered the client at `start`: reports it,
  /// starts its span (whose context becomes the request's ``RequestIDAttribute`` when it has
  /// none, so logs name the span's trace), and puts the observation on the request for the
  /// chain's attempts and for retry and auth middleware.
  func start(_ request: inout Request, at start: ContinuousClock.Instant) -> Observation {
    let observed = ObservedRequest(
      id: Self.ids.add(1, ordering: .relaxed).newValue, request: request, start: start)
    var span: (any TraceSpan)?
    if let tracer {
      let parent =
        TraceContext.current ?? request.attributes[RequestIDAttribute.self]
        ?? request.headers[.traceparent].flatMap(TraceContext.init(traceparent:))
      let started = tracer.startSpan(observed.method, kind: .client, parent: parent)
      SpanAttributes.describe(request, on: started)
      if request.attributes[RequestIDAttribute.self] == nil {
        request.attributes[RequestIDAttribute.self] = started.context
      }
      span = started
    }
    let observation = Observation(observed, observers: observers, tracer: tracer, span: span)
    request.attributes[ObservationAttribute.self] = observation
    for observer in observers { observer.requestStarted(observed) }
    return observation
  }
}

/// Where the chain's attempts, `RetryMiddleware` and `AuthMiddleware` find the observation of
/// the logical request they work on. Set by the client only when it has observers or a
/// tracer.
enum ObservationAttribute: RequestAttributeKey {
  static let defaultValue: Observation? = nil
}

/// One logical request under observation: its identity, its span, and its attempt count.
final class Observation: Sendable {
  let observed: ObservedRequest
  private let observers: [any ClientObserver]
  private let tracer: (any RequestTracer)?
  private let span: (any TraceSpan)?
  /// Attempts started: attempts of one request run one after another, but a retry loop
  /// outside auth restarts its own count, so the client counts them here.
  private let attempts = Atomic<Int>(0)
  /// Whether the request ended: a request sent again later (taken from a response) still
  /// carries this observation, and retry or auth in another client must not report to it.
  private let ended = Atomic<Bool>(false)
  /// The head of a streamed response, for the events at the end of its body; kept without
  /// its ``Response/bodyStream``, whose last copy going is how a reader that drops the stream
  /// unread ends the request.
  private let streamedHead = Mutex<Response?>(nil)

  init(
    _ observed: ObservedRequest, observers: [any ClientObserver], tracer: (any RequestTracer)?,
    span: (any TraceSpan)?
  ) {
    self.observed = observed
    self.observers = observers
    self.tracer = tracer
    self.span = span
  }

  /// The number of the attempt started last.
  var attempt: Int { attempts.load(ordering: .relaxed) }

  /// An attempt is about to go to the transport: numbers it, starts its span and, with a
  /// tracer, sends the span's context as `traceparent`.
  ///
  /// The attempt span's `traceparent` replaces any a `RequestIDMiddleware` or the caller set:
  /// the server's span must name a span the tracer records as its parent, and the request id
  /// middleware's is recorded nowhere. Its trace id is the same (the request span's context
  /// is the middleware's ``RequestIDAttribute``), so logs and traces still join up.
  func attemptStarted(_ request: inout Request) -> (attempt: Int, span: (any TraceSpan)?) {
    let attempt = attempts.add(1, ordering: .relaxed).newValue
    var attemptSpan: (any TraceSpan)?
    if let tracer, let span {
      let started = tracer.startSpan(
        "\(observed.method) attempt", kind: .client, parent: span.context)
      SpanAttributes.describe(request, on: started)
      if attempt > 1 { started.setAttribute("http.request.resend_count", .int(attempt - 1)) }
      // Formatted here from hex digits and dashes: nothing to check.
      request.headers.set(.traceparent, trustedValue: started.context.traceparent)
      attemptSpan = started
    }
    for observer in observers {
      observer.attemptStarted(observed, attempt: attempt, request: request)
    }
    return (attempt, attemptSpan)
  }

  /// An attempt ended.
  func attemptEnded(
    _ attempt: Int, span: (any TraceSpan)?, result: Result<Response, CourierError>
  ) {
    if let span { SpanAttributes.finish(span, with: result) }
    for observer in observers {
      observer.attemptEnded(observed, attempt: attempt, result: result)
    }
  }

  /// `RetryMiddleware` sends the request again after `delay`, because of `outcome`.
  func retryScheduled(delay: Duration, after outcome: Result<Response, CourierError>) {
    guard !observers.isEmpty, !ended.load(ordering: .relaxed) else { return }
    let reason: CourierError.Kind
    let status: Int?
    switch outcome {
    case .success(let response):
      reason = .httpStatus
      status = response.status
    case .failure(let error):
      reason = error.kind
      status = error.kind == .httpStatus ? error.status : nil
    }
    for observer in observers {
      observer.retryScheduled(
        observed, attempt: attempt, delay: delay, reason: reason, status: status)
    }
  }

  /// `AuthMiddleware` waited for a credential refresh since `start`.
  func authRefreshed(succeeded: Bool, since start: ContinuousClock.Instant) {
    guard !ended.load(ordering: .relaxed) else { return }
    let waited = ContinuousClock.now - start
    for observer in observers {
      observer.authRefreshed(observed, succeeded: succeeded, duration: waited)
    }
  }

  /// The chain returned `response`; for a buffered body the request is over, for a streamed
  /// one it ends in ``streamEnded(bytes:completed:)``.
  func responded(_ response: Response, streamed: Bool) {
    guard !streamed else {
      var head = response
      head.bodyStream = nil
      for observer in observers { observer.responseHead(observed, response: head) }
      streamedHead.withLock { $0 = head }
      return
    }
    for observer in observers { observer.responseHead(observed, response: response) }
    let elapsed = ContinuousClock.now - observed.start
    for observer in observers {
      observer.bodyFinished(
        observed, bytes: response.body.count, duration: elapsed, completed: true)
    }
    end(.success(response), total: response.timings.total ?? elapsed)
  }

  /// The streamed body ended after `bytes` bytes; `failure` is the error it failed with (not
  /// set when its reader stopped first). A body cut in mid-transfer is not a successful call:
  /// the request then fails with that error, the response head attached to it.
  func streamEnded(bytes: Int, completed: Bool, failure: CourierError? = nil) {
    let elapsed = ContinuousClock.now - observed.start
    guard var response = streamedHead.withLock({ $0.take() }) else { return }
    for observer in observers {
      observer.bodyFinished(observed, bytes: bytes, duration: elapsed, completed: completed)
    }
    response.timings.total = elapsed
    guard var failure else {
      end(.success(response), total: elapsed)
      return
    }
    if failure.response == nil { failure.response = response }
    failed(failure, total: elapsed)
  }

  /// The request failed with `error`, the error the caller gets.
  func failed(_ error: CourierError, total: Duration? = nil) {
    for observer in observers { observer.requestFailed(observed, error: error) }
    end(.failure(error), total: total ?? ContinuousClock.now - observed.start)
  }

  private func end(_ result: Result<Response, CourierError>, total: Duration) {
    ended.store(true, ordering: .relaxed)
    if let span { SpanAttributes.finish(span, with: result) }
    for observer in observers { observer.requestEnded(observed, result: result, total: total) }
  }
}

/// The OpenTelemetry HTTP client attributes the client's spans carry.
enum SpanAttributes {
  static func describe(_ request: Request, on span: any TraceSpan) {
    span.setAttribute("http.request.method", .string(request.method.rawValue))
    let url = request.url
    if let host = HostText.host(of: url, lowercased: false) {
      span.setAttribute("server.address", .string(host))
    }
    if let port = url.port ?? HostText.defaultPort(ofScheme: url.scheme) {
      span.setAttribute("server.port", .int(port))
    }
    span.setAttribute("url.full", .string(Redaction.standard.url(url)))
  }

  /// Records the outcome on `span` and ends it.
  static func finish(_ span: any TraceSpan, with result: Result<Response, CourierError>) {
    switch result {
    case .success(let response):
      span.setAttribute("http.response.status_code", .int(response.status))
      if response.status >= 400 {
        span.setAttribute("error.type", .string(String(response.status)))
        span.setStatus(.error("HTTP \(response.status)"))
      }
    case .failure(let error):
      if let status = error.status {
        span.setAttribute("http.response.status_code", .int(status))
      }
      span.setAttribute("error.type", .string(error.kind.name))
      span.recordError(error)
      span.setStatus(.error(error.kind.name))
    }
    span.end()
  }
}
