import CourierCore
internal import CourierLibcurlSupport
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Watches one attempt's URLSession task: counts the body against the limit, reports
/// progress, applies the redirect policy, and for a download writes the body to its file.
///
/// Two ways a task is watched:
/// - *Streaming* (a session the transport created): a plain data or upload task whose
///   callbacks ``SessionDelegate`` hands to this object; it keeps the body (bounded by the
///   limit), or for a download writes a `2xx` body to the ``DownloadWriter``, then resumes
///   the sending task.
/// - *Buffered* (a caller's session): URLSession's async `data(for:delegate:)` collects the
///   body and this object, its task delegate, sees each piece as it arrives, so it can stop
///   the task as soon as the count passes the limit.
///
/// Callbacks run on URLSession's own queue (see ``InlineDelegateQueue``), one at a time, so
/// they never block and never call URLSession synchronously: a task is cancelled from
/// another queue.
///
/// `@unchecked Sendable`: every mutable field is inside `state`, a `Mutex`; the
/// `DownloadWriter` in it is only used under that lock.
final class AttemptObserver: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  struct State {
    var received = 0
    var failure: CourierError?
    var visited: [(method: HTTPMethod, url: URL)] = []
    var previous: Request
    var response: HTTPURLResponse?
    var buffer = Data()
    var continuation: CheckedContinuation<(Data, HTTPURLResponse), any Error>?
    var writer: DownloadWriter?
    var writing = false
    var bodySent: Int64 = 0
    var downloaded: DownloadedFile?
    var pendingRedirect: Request?
    /// Authentication challenges URLSession raised for this attempt (see ``challenge(_:)``).
    var challenges = 0
    /// The last challenge was declined: the task ends cancelled, and the `401` it had
    /// already received is the attempt's answer.
    var declinedChallenge = false
    /// Bytes of a file body URLSession has taken, as its last `didSendBodyData` said.
    var fileSent: Int64 = 0
    /// The timer that checks a file body's length while it is sent
    /// (``watchFile(_:sent:expected:task:)``).
    var fileWatch: (any DispatchSourceTimer)?
    /// The file body is no longer being sent: all taken, answered, ended or failed. A shorter
    /// file no longer matters, and no watch starts.
    var uploadEnded = false
    /// A streamed `2xx` body (``streamBufferSize``): the stream, until the transport takes it
    /// with the head, and the writer the body's pieces go to until the task ends.
    var stream: ResponseBodyStream?
    var streamWriter: ResponseBodyStream.Writer?
    /// The streamed body has begun: its pieces go to ``streamWriter`` while there is one, and
    /// are dropped once it has failed or its reader stopped.
    var streamed = false
    /// The attempt was cancelled before a streamed body's head was handed over: the head, if
    /// it comes, is not handed over (the task ends cancelled).
    var cancelRequested = false
    /// The streamed body's limits: when its last piece arrived, and the timer that checks
    /// the idle timeout and the overall deadline (``StreamLimits``).
    var streamLimits: StreamLimits?
    /// The timer that enforces ``headIdle`` until a streamed body's head is handed over or
    /// the task ends, and when a callback last showed the transfer moving.
    var headWatch: (any DispatchSourceTimer)?
    var lastActivity = ContinuousClock.now
    /// When the attempt's phases ended, as far as the task shows them.
    var clock = AttemptTimings()
  }

  /// The request as sent (with `Range` when a download resumes).
  let request: Request
  /// Whether the body goes to a file.
  let isDownload: Bool
  let limit: Int
  let policy: RedirectPolicy
  let downloadProgress: TransferProgress?
  let uploadProgress: TransferProgress?
  let state: Mutex<State>
  /// The transport's queue for URLSession calls that wait (``cancel(_:on:)``).
  let controlQueue: DispatchQueue
  /// For a request with a ``ResponseStreamAttribute`` (not a download): the `2xx` body goes
  /// to a ``ResponseBodyStream`` as it arrives instead of memory.
  let streamBufferSize: Int?
  /// For a streamed request without a ``Request/timeout``: the session's idle timeout
  /// (`timeoutIntervalForRequest`), which this object enforces until a `2xx` head is handed
  /// over. URLSession's own timer is off for a streamed request (its body may stay quiet for
  /// as long as the caller allows), and without this a server that never answers would hold
  /// the request for ever, where `CurlTransport`'s idle timeout ends it.
  let headIdle: Duration?

  /// Watches an attempt to send `request`; with a `destination`, a download, whose
  /// ``request`` carries `Range`/`If-Range` when a partial file can be resumed.
  init(
    request original: Request, limit: Int, policy: RedirectPolicy,
    destination: DownloadDestination?, controlQueue: DispatchQueue, headIdle: Duration? = nil
  ) {
    self.controlQueue = controlQueue
    streamBufferSize =
      destination == nil ? original.attributes[ResponseStreamAttribute.self] : nil
    self.headIdle = streamBufferSize == nil ? nil : headIdle
    let writer = destination.map(DownloadWriter.init)
    let request = writer?.prepare(original) ?? original
    self.isDownload = writer != nil
    self.request = request
    self.limit = limit
    self.policy = policy
    downloadProgress = request.attributes[DownloadProgressAttribute.self]
    uploadProgress = request.attributes[UploadProgressAttribute.self]
    var state = State(previous: request)
    state.visited = [(request.method, request.url)]
    state.writer = writer
    self.state = Mutex(state)
  }

  /// The failure recorded by a callback (limit, redirect, disk), if any.
  var failure: CourierError? { state.withLock { $0.failure } }

  /// The hop the transport must send itself (a body URLSession would not send again), if
  /// the last task ended on one; the observer is then ready for that hop's task.
  func takePendingRedirect() -> Request? {
    let (next, watch) = state.withLock { state -> (Request?, (any DispatchSourceTimer)?) in
      guard let next = state.pendingRedirect, state.failure == nil else { return (nil, nil) }
      state.pendingRedirect = nil
      state.response = nil
      state.buffer = Data()
      state.received = 0
      // The hop's task sends the file again, from its start, with a watch of its own.
      let watch = state.fileWatch
      state.fileWatch = nil
      state.fileSent = 0
      state.uploadEnded = false
      return (next, watch)
    }
    watch?.cancel()
    return next
  }

  /// Bytes of body received so far.
  var received: Int { state.withLock { $0.received } }

  /// The download's file once the streaming task completed with a `2xx`.
  var downloadedFile: DownloadedFile? { state.withLock { $0.downloaded } }

  /// Cancels `task` from `queue` (the transport's control queue): URLSession's queue must
  /// not wait on itself, and the wait must not hold a thread of Swift's executor.
  static func cancel(_ task: URLSessionTask, on queue: DispatchQueue) {
    queue.async { task.cancel() }
  }

  // MARK: - Redirects

  /// The request URLSession should send for a redirect, or `nil` to return the `3xx`.
  func redirect(
    _ response: HTTPURLResponse, task: URLSessionTask
  )
    -> URLRequest?
  {
    return state.withLock { state -> URLRequest? in
      // The target comes from the response's own `Location`, as on every transport, not from
      // the proposed request: FoundationNetworking proposes a `file:` or `data:` location as
      // a path on the same server.
      guard let value = response.value(forHTTPHeaderField: "Location"),
        let location = Redirect.target(ofLocation: value, from: state.previous.url)
      else { return nil }
      do throws(CourierError) {
        guard
          var next = try policy.decide(
            original: request, previous: state.previous, status: response.statusCode,
            location: location, visited: state.visited)
        else { return nil }
        // A partial file is resumed only from the URL it came from: each hop carries `Range`
        // and `If-Range` for its own URL, or none (as each of CurlTransport's hops does), and
        // the file is kept under the URL that sends the body, not the first one.
        if let writer = state.writer { next = writer.prepare(next) }
        state.previous = next
        state.visited.append((next.method, next.url))
        // The timings are the last hop's.
        state.clock.restart()
        #if canImport(FoundationNetworking)
          // URLSession on Linux sends a request body once: its own 307/308 hop arrives with
          // an empty body (with `httpBody` and with upload tasks alike). So the
          // transport sends that hop itself, as a new task (``takePendingRedirect()``).
          if !next.body.isEmpty {
            state.pendingRedirect = next
            return nil
          }
        #endif
        var urlRequest = URLSessionTransport.urlRequest(for: next)
        if let data = next.body.data, !data.isEmpty { urlRequest.httpBody = data }
        return urlRequest
      } catch {
        state.failure = error
        return nil
      }
    }
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask,
    willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
    completionHandler: @escaping @Sendable (URLRequest?) -> Void
  ) {
    completionHandler(redirect(response, task: task))
  }

  // MARK: - Authentication challenges

  #if canImport(FoundationNetworking)
    /// What to do with an authentication challenge (a `401` with `WWW-Authenticate: Basic`).
    ///
    /// swift-corelibs-foundation raises the challenge after the `401` and its body have
    /// arrived, and its default handling with no credential to propose does nothing: the task
    /// never ends, and its own timeout no longer runs (swift-corelibs-foundation issue #5456,
    /// open in Swift 6.3.1). Declining the
    /// challenge cancels the task; ``urlSession(_:task:didCompleteWithError:)`` then answers
    /// with the `401` that had arrived, as URLSession does on Apple platforms. A credential the
    /// session's own storage proposes is used once (the caller configured that storage); a
    /// second challenge in the same attempt means it was refused, and is declined too.
    func challenge(_ challenge: URLAuthenticationChallenge) -> URLSession.AuthChallengeDisposition {
      state.withLock { state in
        state.challenges += 1
        if challenge.proposedCredential != nil, state.challenges == 1 {
          // URLSession sends the request again: the next response replaces this one.
          state.response = nil
          state.buffer = Data()
          state.received = 0
          return .performDefaultHandling
        }
        state.declinedChallenge = true
        return .cancelAuthenticationChallenge
      }
    }
  #endif

  // MARK: - Body

  /// How often a file body's length is checked while URLSession sends it: every 100 ms.
  static let fileCheckInterval = DispatchTimeInterval.milliseconds(100)

  /// Fails the attempt when the file body is now shorter than the length URLSession took when
  /// the task started (and sent as `Content-Length`). URLSession would send what is left and
  /// end the upload short, and the server would wait for the rest until a timeout.
  ///
  /// Checked at each piece URLSession takes, and by a timer (``watchFile(_:sent:expected:task:)``):
  /// URLSession reads the file ahead of libcurl, and when a read ahead meets the new end of
  /// the file it ends the upload without taking another piece, so no callback would come and
  /// the request would wait for its timeout.
  private func checkLength(of file: URL, expected: Int64, task: URLSessionTask) {
    var info = stat()
    guard stat(file.path, &info) == 0, Int64(info.st_size) < expected else { return }
    let failed = state.withLock { state -> Bool in
      guard state.failure == nil, !state.uploadEnded else { return false }
      state.failure = CourierError(
        kind: .invalidRequest,
        debugMessage: "the file body was cut short while it was sent: it had \(expected) bytes "
          + "when the request started (its Content-Length), and has \(info.st_size) now, with "
          + "\(state.fileSent) sent; the task was cancelled",
        request: request, attempts: 1, stage: "transport")
      return true
    }
    if failed {
      endUpload()
      Self.cancel(task, on: controlQueue)
    }
  }

  /// Records that URLSession has taken `sent` bytes of the file body, and on the first piece
  /// starts the timer that checks the file's length every ``fileCheckInterval`` on the
  /// control queue, until ``endUpload()``.
  private func watchFile(_ file: URL, sent: Int64, expected: Int64, task: URLSessionTask) {
    let timer = state.withLock { state -> (any DispatchSourceTimer)? in
      state.fileSent = sent
      guard state.fileWatch == nil, !state.uploadEnded, state.failure == nil else { return nil }
      let timer = DispatchSource.makeTimerSource(queue: controlQueue)
      state.fileWatch = timer
      return timer
    }
    guard let timer else { return }
    // Weak: the timer lives in this observer's state, and must not keep the task alive.
    timer.setEventHandler { [weak self, weak task] in
      guard let self, let task else { return }
      self.checkLength(of: file, expected: expected, task: task)
    }
    timer.schedule(
      deadline: .now() + Self.fileCheckInterval, repeating: Self.fileCheckInterval,
      leeway: .milliseconds(20))
    timer.resume()
  }

  /// The file body is no longer being sent: stops its watch. The transport calls it when the
  /// attempt ends, whatever way it ends; without a file body it does nothing.
  func endUpload() {
    guard request.body.fileURL != nil else { return }
    let timer = state.withLock { state -> (any DispatchSourceTimer)? in
      state.uploadEnded = true
      defer { state.fileWatch = nil }
      return state.fileWatch
    }
    timer?.cancel()
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
    totalBytesSent: Int64, totalBytesExpectedToSend: Int64
  ) {
    if headIdle != nil { state.withLock { $0.lastActivity = .now } }
    if let file = request.body.fileURL {
      if totalBytesSent < totalBytesExpectedToSend {
        watchFile(file, sent: totalBytesSent, expected: totalBytesExpectedToSend, task: task)
        checkLength(of: file, expected: totalBytesExpectedToSend, task: task)
      } else {
        endUpload()
      }
    }
    guard let uploadProgress else { return }
    state.withLock { $0.bodySent = max($0.bodySent, totalBytesSent) }
    uploadProgress.update(
      completed: totalBytesSent,
      expected: totalBytesExpectedToSend > 0 ? totalBytesExpectedToSend : nil)
  }

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
  ) {
    // The server has answered: a file body cut short now changes nothing.
    endUpload()
    let http = response as? HTTPURLResponse
    let request = request
    var headOfStream: CheckedContinuation<(Data, HTTPURLResponse), any Error>?
    let stop = state.withLock { state -> Bool in
      state.response = http
      state.lastActivity = .now
      state.clock.head = state.lastActivity
      /// Fails the attempt as `badResponse` for `message`; `true`: stop.
      func refuse(_ message: String) -> Bool {
        state.failure = CourierError(
          kind: .badResponse, debugMessage: message, request: request, attempts: 1,
          stage: "transport")
        return true
      }
      if http?.statusCode == 101 {
        // Another protocol follows, which URLSession reads as a body until the connection
        // closes: a WebSocket server keeps it open, and the request waited for its timeout.
        return refuse(
          "the server switched protocols (101 Switching Protocols); URLSessionTransport speaks "
            + "only HTTP, so the task was cancelled")
      }
      if let http, Self.hasConflictingLengths(http) {
        return refuse(
          "the response has Content-Length fields that disagree (RFC 9112 §6.3); the task was "
            + "cancelled")
      }
      if let length = http?.value(forHTTPHeaderField: "Content-Length"),
        ContentLengthField.exceedsInt64(value: length)
      {
        return refuse(ContentLengthField.beyondInt64Message)
      }
      if let bufferSize = streamBufferSize, !state.cancelRequested, state.failure == nil,
        let http, (200..<300).contains(http.statusCode)
      {
        headOfStream = beginStream(&state, bufferSize: bufferSize, task: dataTask)
        return false
      }
      guard let writer = state.writer, let http else {
        // An announced length over the limit (not encoded: libcurl would decode it to
        // something else) ends the task before any of the body arrives.
        if let http, http.expectedContentLength > Int64(limit),
          let length = Self.expectedLength(http), length > Int64(limit)
        {
          state.failure = .bodyTooLarge(limit: limit, request: request)
          return true
        }
        return false
      }
      do throws(CourierError) {
        state.writing = try writer.begin(
          status: http.statusCode, headers: URLSessionTransport.headers(of: http),
          request: state.previous)
      } catch {
        state.failure = error
        return true
      }
      return false
    }
    if stop {
      // Not `.cancel`: from URLSession's own queue (InlineDelegateQueue) it stalls the
      // session for as long as the server keeps sending. The task is cancelled
      // from another queue instead, and the body is dropped until then.
      completionHandler(.allow)
      Self.cancel(dataTask, on: controlQueue)
      return
    }
    if let uploadProgress { uploadProgress.completeAttempt(total: state.withLock { $0.bodySent }) }
    if let downloadProgress, let expected = http.flatMap(Self.expectedLength) {
      downloadProgress.update(completed: 0, expected: expected)
    }
    completionHandler(.allow)
    // The head goes to the caller now; the body follows through the stream.
    if let headOfStream, let http { headOfStream.resume(returning: (Data(), http)) }
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    if streamBufferSize != nil, receiveStreamed(data, task: dataTask) { return }
    typealias Outcome = (
      stop: Bool, done: Int64, expected: Int64?,
      early: CheckedContinuation<(Data, HTTPURLResponse), any Error>?
    )
    let outcome = state.withLock { state -> Outcome in
      guard state.failure == nil else { return (false, 0, nil, nil) }
      if headIdle != nil { state.lastActivity = .now }
      if state.writing, let writer = state.writer {
        do throws(CourierError) {
          try writer.write(data)
        } catch {
          state.failure = error
          return (true, 0, nil, nil)
        }
        return (false, writer.written, writer.expected, nil)
      }
      state.received += data.count
      if state.received > limit {
        state.failure = .bodyTooLarge(limit: limit, request: request)
        state.buffer = Data()
        // Fail the attempt now, not when the cancellation lands: on Linux it waits behind
        // every piece libcurl has already queued, seconds' worth for an endless body; the
        // pieces still coming are dropped above.
        let early = state.continuation
        state.continuation = nil
        return (true, 0, nil, early)
      }
      if state.continuation != nil { state.buffer.append(data) }
      guard downloadProgress != nil else { return (false, 0, nil, nil) }
      return (false, Int64(state.received), state.response.flatMap(Self.expectedLength), nil)
    }
    if outcome.stop {
      Self.cancel(dataTask, on: controlQueue)
      outcome.early?.resume(throwing: CourierError.bodyTooLarge(limit: limit, request: request))
      return
    }
    downloadProgress?.update(completed: outcome.done, expected: outcome.expected)
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?
  ) {
    // Only streaming tasks get here: URLSession resumes `data(for:)` itself.
    endUpload()
    stopHeadWatch()
    if streamBufferSize != nil, endStream(error: error) { return }
    let resumed = state.withLock {
      state -> (
        CheckedContinuation<(Data, HTTPURLResponse), any Error>,
        Result<(Data, HTTPURLResponse), any Error>
      )? in
      state.clock.end = .now
      guard let continuation = state.continuation else { return nil }
      state.continuation = nil
      let writer = state.writer
      if let failure = state.failure {
        writer?.abandon()
        return (continuation, .failure(failure))
      }
      // A declined challenge ends the task as cancelled, after its `401` arrived whole.
      let declined = state.declinedChallenge && state.response?.statusCode == 401
      if let error, !declined {
        writer?.abandon()
        return (continuation, .failure(error))
      }
      guard let response = state.response else {
        return (continuation, .failure(URLError(.badServerResponse)))
      }
      if state.writing, let writer {
        do {
          state.downloaded = try writer.finish()
        } catch {
          return (continuation, .failure(error))
        }
      }
      let body = state.buffer
      state.buffer = Data()
      return (continuation, .success((body, response)))
    }
    if let (continuation, result) = resumed { continuation.resume(with: result) }
  }

  /// Keeps the phases of the task's last transaction, where the platform collects them
  /// (``AttemptTimings``): Apple platforms call this before the task completes.
  func urlSession(
    _ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics
  ) {
    let secure = request.url.scheme?.lowercased() == "https"
    guard let timings = AttemptTimings.timings(of: metrics, secure: secure) else { return }
    state.withLock { $0.clock.collected = timings }
  }

  /// The attempt's phases so far (``AttemptTimings/timings(complete:streamed:)``).
  func timings(complete: Bool, streamed: Bool = false) -> Response.Timings {
    state.withLock { $0.clock.timings(complete: complete, streamed: streamed) }
  }

  /// `error` with the phases the attempt reached, unless it has some already.
  func withTimings(_ error: CourierError) -> CourierError {
    guard error.timings == nil else { return error }
    var error = error
    error.timings = timings(complete: false)
    return error
  }

  /// Whether the response's `Content-Length` fields disagree. URLSession joins repeated
  /// fields with commas (`5, 15`); libcurl inside it uses the last value and does not
  /// complain, so the check is Courier's. The same value repeated (`5, 5`) is accepted, as
  /// RFC 9110 §8.6 allows.
  static func hasConflictingLengths(_ response: HTTPURLResponse) -> Bool {
    guard let value = response.value(forHTTPHeaderField: "Content-Length"), value.contains(",")
    else { return false }
    let values = Set(value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
    return values.count > 1
  }

  /// The decoded length the server announced, when the body is not encoded.
  static func expectedLength(_ response: HTTPURLResponse) -> Int64? {
    guard response.expectedContentLength >= 0 else { return nil }
    if let encoding = response.value(forHTTPHeaderField: "Content-Encoding"),
      encoding.lowercased() != "identity"
    {
      return nil
    }
    return response.expectedContentLength
  }
}
