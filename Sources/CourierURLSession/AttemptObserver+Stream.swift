import CourierCore
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The limits of a streamed body that the transport keeps itself: URLSession's only timer
/// is its idle timeout, which a streamed request turns off (``URLSessionTransport``).
struct StreamLimits {
  /// When the body last received a piece (or its head).
  var lastByte: ContinuousClock.Instant
  /// ``StreamIdleTimeoutAttribute``.
  let idle: Duration?
  /// When the request's overall deadline (``DeadlineAttribute``) passes.
  let deadline: ContinuousClock.Instant?
  /// Checks both on the control queue while the body arrives.
  let timer: any DispatchSourceTimer

  /// How often the limits are checked: a quarter of the idle timeout, between 10 and 100 ms.
  static func checkInterval(idle: Duration?) -> DispatchTimeInterval {
    // Clamped as a `Double`: any `Duration` a caller gives must not trap in the conversion.
    let quarter = (idle ?? .milliseconds(400)).inSeconds * 1000 / 4
    return .milliseconds(Int(min(100, max(10, quarter))))
  }
}

// A streamed `2xx` body (a request with a `ResponseStreamAttribute`).
//
// URLSession on Linux cannot pause a transfer: `URLSessionTask.suspend()` takes the task's
// libcurl handle out of the session, and `resume()` then sends the request again from the
// start, so the body would arrive twice. Nor can a callback wait for the reader: callbacks
// run on URLSession's work queue, shared by every session of the process. So the body's
// pieces go into the stream as they arrive, and a reader that falls behind by the attempt's
// body limit (``AttemptObserver/limit``, at least the stream's buffer size) fails the body
// with `bodyTooLarge` instead of growing the process.
extension AttemptObserver {
  /// At a `2xx` head: makes the body's stream and its limits, and returns the continuation
  /// to resume with the head (outside the lock).
  func beginStream(
    _ state: inout State, bufferSize: Int, task: URLSessionDataTask
  ) -> CheckedContinuation<(Data, HTTPURLResponse), any Error>? {
    let (stream, writer) = ResponseBodyStream.makeStream(
      bufferSize: max(bufferSize, limit),
      onTermination: { [weak self, controlQueue] in
        // The reader stopped first: end the transfer (its connection is not reused).
        self?.stopStreamLimits()
        Self.cancel(task, on: controlQueue)
      })
    state.stream = stream
    state.streamWriter = writer
    state.streamed = true
    // The head is in: from here the body's own limits apply.
    state.headWatch?.cancel()
    state.headWatch = nil
    let idle = request.attributes[StreamIdleTimeoutAttribute.self]
    let deadline = request.attributes[DeadlineAttribute.self].map {
      ContinuousClock.now + $0.remaining
    }
    if idle != nil || deadline != nil {
      let timer = DispatchSource.makeTimerSource(queue: controlQueue)
      timer.setEventHandler { [weak self, weak task] in
        guard let self, let task else { return }
        self.checkStreamLimits(task: task)
      }
      let interval = StreamLimits.checkInterval(idle: idle)
      timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(5))
      state.streamLimits = StreamLimits(
        lastByte: .now, idle: idle, deadline: deadline, timer: timer)
      timer.resume()
    }
    defer { state.continuation = nil }
    return state.continuation
  }

  /// Records that the attempt was cancelled; `false` when a streamed body's head was handed
  /// over already: the body then belongs to its reader, and the task must not be cancelled.
  /// Decided under the lock that decides whether a head is handed over, so that a
  /// cancellation and a head that arrive together cannot both win.
  func cancelUnlessStreaming() -> Bool {
    state.withLock { state in
      guard !state.streamed else { return false }
      state.cancelRequested = true
      return true
    }
  }

  /// The stream made at the head, for the transport to return with it; once.
  func takeStream() -> ResponseBodyStream? {
    state.withLock { state in
      defer { state.stream = nil }
      return state.stream
    }
  }

  /// Hands a piece of a streamed body to its reader; `false` when the body is not streamed
  /// (a non-`2xx` answer of a streamed request is kept in memory, as for any request).
  func receiveStreamed(_ data: Data, task: URLSessionDataTask) -> Bool {
    typealias Taken = (writer: ResponseBodyStream.Writer?, received: Int64, expected: Int64?)
    let taken = state.withLock { state -> Taken? in
      guard state.streamed else { return nil }
      guard let writer = state.streamWriter, state.failure == nil else { return (nil, 0, nil) }
      state.received += data.count
      state.streamLimits?.lastByte = .now
      return (writer, Int64(state.received), state.response.flatMap(Self.expectedLength))
    }
    guard let taken else { return false }
    guard let writer = taken.writer else { return true }
    if writer.write(data) {
      downloadProgress?.update(completed: taken.received, expected: taken.expected)
      return true
    }
    // Behind by the whole backlog (the stream's buffer, `beginStream`), which cannot be paused.
    let behind = max(streamBufferSize ?? 0, limit)
    fail(
      CourierError(
        kind: .bodyTooLarge,
        debugMessage: "the reader of the streamed body fell \(DescriptionText.bytes(behind)) "
          + "behind it; URLSession on Linux cannot pause a transfer, so URLSessionTransport "
          + "keeps at most that much ahead of the reader (the body limit, "
          + "ResponseBodyLimitAttribute or maximumResponseBodySize, or the stream's buffer "
          + "size when larger) and ended the transfer. "
          + "Read faster, raise the limit, or use CurlTransport, which pauses the transfer",
        request: request, attempts: 1, stage: "transport"),
      task: task)
    return true
  }

  /// Ends a streamed body when its task completes: the reader gets the end, or the error
  /// (a connection lost in mid-body, a cancellation, the shutdown). `false` when no body was
  /// streamed.
  func endStream(error: (any Error)?) -> Bool {
    typealias Taken = (
      writer: ResponseBodyStream.Writer?, failure: CourierError?, limits: StreamLimits?,
      received: Int64
    )
    let taken = state.withLock { state -> Taken? in
      guard state.streamed else { return nil }
      defer {
        state.streamWriter = nil
        state.streamLimits = nil
      }
      return (state.streamWriter, state.failure, state.streamLimits, Int64(state.received))
    }
    guard let taken else { return false }
    taken.limits?.timer.cancel()
    guard let writer = taken.writer else { return true }
    if let failure = taken.failure {
      writer.fail(failure)
    } else if let error {
      writer.fail(URLErrorMapping.courierError(for: error, request: request))
    } else {
      // Before the stream ends: its end is what completes the request's progress.
      downloadProgress?.completeAttempt(total: taken.received)
      writer.finish()
    }
    return true
  }

  /// Fails the streamed body once with `failure` and cancels its task.
  private func fail(_ failure: CourierError, task: URLSessionTask) {
    let taken = state.withLock { state -> (ResponseBodyStream.Writer, StreamLimits?)? in
      guard state.failure == nil, let writer = state.streamWriter else { return nil }
      state.failure = failure
      defer {
        state.streamWriter = nil
        state.streamLimits = nil
      }
      return (writer, state.streamLimits)
    }
    guard let (writer, limits) = taken else { return }
    limits?.timer.cancel()
    writer.fail(failure)
    Self.cancel(task, on: controlQueue)
  }

  /// Fails the body when its idle timeout or the overall deadline has passed.
  private func checkStreamLimits(task: URLSessionTask) {
    let expired = state.withLock { state -> CourierError? in
      guard let limits = state.streamLimits else { return nil }
      let now = ContinuousClock.now
      if let deadline = limits.deadline, now >= deadline {
        return .streamDeadlinePassed(request: request)
      }
      if let idle = limits.idle, now - limits.lastByte >= idle {
        return .streamIdle(idle, request: request)
      }
      return nil
    }
    if let expired { fail(expired, task: task) }
  }

  /// Stops checking the limits: the reader stopped.
  private func stopStreamLimits() {
    let limits = state.withLock { state in
      defer {
        state.streamLimits = nil
        state.streamWriter = nil
      }
      return state.streamLimits
    }
    limits?.timer.cancel()
  }

  /// Starts enforcing ``headIdle`` on `task`, before it is resumed: the task is cancelled
  /// with `timedOut` when no callback shows it moving for that long before a streamed
  /// body's head is handed over. A hop's task gets a watch of its own.
  func watchHead(of task: URLSessionTask) {
    guard let idle = headIdle else { return }
    let (timer, previous) = state.withLock {
      state -> (any DispatchSourceTimer, (any DispatchSourceTimer)?) in
      let previous = state.headWatch
      let timer = DispatchSource.makeTimerSource(queue: controlQueue)
      state.headWatch = timer
      state.lastActivity = .now
      return (timer, previous)
    }
    previous?.cancel()
    // Weak: the timer lives in this observer's state, and must not keep the task alive.
    timer.setEventHandler { [weak self, weak task] in
      guard let self, let task else { return }
      self.checkHeadIdle(idle, task: task)
    }
    let interval = StreamLimits.checkInterval(idle: idle)
    timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(5))
    timer.resume()
  }

  /// Stops the watch of ``watchHead(of:)``: the task ended.
  func stopHeadWatch() {
    guard headIdle != nil else { return }
    let timer = state.withLock { state in
      defer { state.headWatch = nil }
      return state.headWatch
    }
    timer?.cancel()
  }

  /// Fails the attempt and cancels `task` when it has not moved for `idle`.
  private func checkHeadIdle(_ idle: Duration, task: URLSessionTask) {
    let timer = state.withLock { state -> (any DispatchSourceTimer)? in
      guard let timer = state.headWatch, ContinuousClock.now - state.lastActivity >= idle
      else { return nil }
      state.headWatch = nil
      if state.failure == nil {
        state.failure = CourierError(
          kind: .timedOut,
          debugMessage: "nothing arrived for the session's idle timeout "
            + "(timeoutIntervalForRequest, \(DescriptionText.duration(idle))) before the "
            + "streamed response's head was in; the task was cancelled (a streamed request "
            + "without Request.timeout)",
          request: request, attempts: 1, stage: "transport")
      }
      return timer
    }
    guard let timer else { return }
    timer.cancel()
    Self.cancel(task, on: controlQueue)
  }
}
