import CourierCore

/// One request on its way through a ``CurlEventLoop``: the request, the caller's continuation,
/// and whether it was cancelled. Shared by the caller, the cancellation handler and the loop
/// thread; its state is behind a lock (``PThreadLock``), which is what makes the continuation resume exactly
/// once whoever finishes first (response, error, cancellation, shutdown). That lock is why an
/// `UnsafeContinuation` is enough: a checked one would check the same thing again, at the
/// cost of one more allocation per request.
final class CurlTicket: Sendable {
  let request: Request
  let limits: CurlTransferLimits
  /// The request's origin as ``CurlOriginQueue`` counts it (host and port), and whether its
  /// scheme is `https`.
  let origin: String
  let isSecure: Bool
  /// The loop the transfer runs on, for a request whose response body is streamed
  /// (``ResponseStreamAttribute``; the body's reader asks it to resume or stop the transfer)
  /// or whose request body is a stream (its producer asks it to resume the upload). `nil`
  /// otherwise.
  let loop: CurlEventLoop?

  private struct State {
    var continuation: UnsafeContinuation<Response, any Error>?
    var isCancelled = false
    var isFinished = false
    /// The streamed body ``finish(_:)`` ends (``endStreamAtFinish(_:failure:)``).
    var streamEnd: StreamEnd?
  }

  /// A streamed body's writer and the error its body ends with (`nil`: it ended whole).
  private typealias StreamEnd = (writer: ResponseBodyStream.Writer, failure: CourierError?)

  private let state = PThreadLock(State())

  /// `origin`: the request's, when the caller has read it already (``CurlOriginQueue``).
  init(
    request: Request, limits: CurlTransferLimits,
    origin: (origin: String, secure: Bool)? = nil, loop: CurlEventLoop? = nil
  ) {
    self.request = request
    self.loop = loop
    self.limits = limits
    (self.origin, isSecure) = origin ?? CurlOriginQueue.originAndScheme(of: request.url)
  }

  /// Keeps the caller's continuation. When the request was cancelled already, resumes it with
  /// the cancellation at once and returns `false`: the ticket must not be submitted.
  func attach(_ continuation: UnsafeContinuation<Response, any Error>) -> Bool {
    let cancelled = state.withLock { state in
      if state.isCancelled {
        state.isFinished = true
        return true
      }
      state.continuation = continuation
      return false
    }
    if cancelled { continuation.resume(throwing: CurlEventLoop.cancelledError(request)) }
    return !cancelled
  }

  /// Marks the ticket cancelled; `true` the first time, while it has not finished.
  func markCancelled() -> Bool {
    state.withLock { state in
      guard !state.isCancelled, !state.isFinished else { return false }
      state.isCancelled = true
      return true
    }
  }

  /// Whether the request was cancelled.
  var isCancelled: Bool { state.withLock { $0.isCancelled } }

  /// Orders the caller after ``finish(_:)``: takes the lock `finish` released before resuming.
  ///
  /// The response (its headers and body) is built on the loop thread and read by the caller's
  /// task. The continuation orders the two, but when the transfer ends before the task has
  /// suspended, Swift's runtime resumes the task straight
  /// from an atomic status (`swift_continuation_await`'s "already resumed" path), in library
  /// code ThreadSanitizer does not see, and ThreadSanitizer would report a race between
  /// building the response and reading it (a redirect's `Location`, for example). Taking this
  /// uncontended `pthread` lock once per transfer gives ThreadSanitizer the edge that exists
  /// anyway, so its reports on CourierCurl stay real ones.
  func joinFinish() {
    state.withLock { _ in }
  }

  /// Has the next ``finish(_:)`` end the streamed body of `writer`, whole or with `failure`.
  /// The loop calls `finish` once its engine lock is released: a body's end runs the
  /// client's end actions (its observers' `requestEnded`), which are the application's code
  /// and may call into the transport; no such code runs under the engine lock.
  func endStreamAtFinish(_ writer: ResponseBodyStream.Writer, failure: CourierError?) {
    state.withLock { $0.streamEnd = (writer, failure) }
  }

  /// Ends the streamed body ``endStreamAtFinish(_:failure:)`` left, if any, and resumes the
  /// caller with `result`, unless it was resumed already.
  func finish(_ result: consuming Result<Response, CourierError>) {
    typealias Taken = (UnsafeContinuation<Response, any Error>?, StreamEnd?)
    let (continuation, streamEnd) = state.withLock { state -> Taken in
      let streamEnd = state.streamEnd
      state.streamEnd = nil
      guard !state.isFinished else { return (nil, streamEnd) }
      state.isFinished = true
      defer { state.continuation = nil }
      return (state.continuation, streamEnd)
    }
    if let streamEnd {
      if let failure = streamEnd.failure {
        streamEnd.writer.fail(failure)
      } else {
        streamEnd.writer.finish()
      }
    }
    guard let continuation else { return }
    // The response is moved into the continuation, not copied (`mapError` made a new result).
    switch consume result {
    case .success(let response): continuation.resume(returning: response)
    case .failure(let error): continuation.resume(throwing: error)
    }
  }
}
