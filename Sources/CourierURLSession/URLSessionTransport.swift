import CourierCore
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A ``Transport`` that sends each attempt with `URLSession`.
///
/// One `send` is one `URLSession` task and nothing else: retries, timeouts beyond the
/// per-request one, logging and compression belong in middleware. Every `URLError` becomes a
/// ``CourierError`` with a matching kind (see ``URLErrorMapping``), and cancelling the calling
/// `Task` cancels the `URLSession` task. Call ``shutdown()`` when you are done with it.
///
/// ```swift
/// let transport = URLSessionTransport()      // ephemeral, no URLCache, no cookies
/// let custom = URLSessionTransport(configuration: {
///   let configuration = URLSessionTransport.defaultConfiguration
///   configuration.httpMaximumConnectionsPerHost = 12
///   return configuration
/// }())
/// ```
///
/// ## Platform notes (Linux, where URLSession is libcurl)
/// - ``Request/timeout`` is a total limit for the attempt, enforced by this transport (as by
///   `CurlTransport`): URLSession's `timeoutInterval` is only an idle timeout there (no bytes
///   for that long), in whole seconds, so it is set a second past the limit as a backstop.
/// - libcurl decodes gzip responses itself but leaves `Content-Encoding` in place; a streamed
///   body (`Client.stream`) arrives decoded without `Content-Encoding` and `Content-Length`.
/// - At most 6 connections per host unless the configuration says otherwise.
/// - ``Response/Timings``: FoundationNetworking declares `urlSession(_:task:didFinishCollecting:)`
///   but never calls it (Swift 6.3.1), so the transport measures what its delegate sees:
///   ``Response/Timings/firstByte`` is when the response head reached it (the whole head, a
///   little after its first byte) and ``Response/Timings/bodyComplete`` when the task completed
///   (for a streamed body: its head), both from the attempt's start, or the last redirect
///   hop's. `nameLookup`, `connect`, `tlsHandshake`, `requestSent`, `connectionReused`,
///   `remoteAddress` and `httpVersion` stay `nil` there; an error carries `firstByte` when the
///   head had arrived. Where URLSession delivers task metrics (Apple platforms), they fill every
///   field from the last transaction. `CurlTransport` reports every phase on Linux.
/// - Proxies: the `http_proxy`, `HTTPS_PROXY`, `ALL_PROXY` and `NO_PROXY` environment is
///   followed (libcurl inside FoundationNetworking reads it); `connectionProxyDictionary` is
///   ignored there, so a configuration that sets it fails every request with
///   ``CourierError/Kind/invalidRequest`` instead of going around the proxy.
/// - A streamed body (`Client.stream`) arrives as URLSession reads it: a transfer cannot be
///   paused there (suspending a task and resuming it sends the request again), so at most the
///   body limit is kept ahead of the reader, and a reader further behind gets
///   ``CourierError/Kind/bodyTooLarge``. `CurlTransport` pauses the transfer instead.
/// - A body from a sequence (`RequestBody.stream`) is written whole to a temporary file
///   (`0600`, deleted when the attempt ends) and sent with its length once it is produced:
///   URLSession reads an `httpBodyStream` on the one queue every session shares, and takes a
///   stream with no bytes ready for the end of the body.
/// - Bytes a server sends on a kept-alive connection once a response has been read (a
///   response nobody asked for, the tail of a body longer than its `Content-Length`, a body
///   after a `HEAD` or `204` answer) become the next request's answer on that connection, and
///   every later answer there is one behind: libcurl 7.88 takes a connection with unread input
///   again, and FoundationNetworking, which owns the sockets and the libcurl handles, watches
///   no idle socket. No `URLSessionConfiguration` setting turns the reuse off, and a
///   `Connection: close` request header does not either (libcurl keeps the connection unless
///   the server closes it), so this transport cannot prevent it. What arrives in the same read
///   as the end of a response libcurl handles itself. `CurlTransport` drops an idle connection
///   on which input arrives: use it with servers, or proxies, you do not control.
public struct URLSessionTransport: Transport {
  /// The session every request is sent with.
  public let session: URLSession

  /// The most bytes of response body kept in memory; a request may set its own with
  /// ``ResponseBodyLimitAttribute``. Default ``ResponsePipeline/defaultMaximumDecodedBodySize``
  /// (32 MiB), the pipeline's own limit: a body the pipeline would refuse to decode is not
  /// worth receiving. A negative value counts as 0.
  public let maximumResponseBodySize: Int

  /// What happens to redirects unless a request sets ``RedirectPolicyAttribute``; default
  /// ``RedirectPolicy/standard`` (follow at most 10 hops). Applied only to a session this
  /// transport created: with ``init(session:maximumResponseBodySize:)``, URLSession's own
  /// rules apply (on Linux: up to 20 hops, credentials sent to every host).
  public let redirectPolicy: RedirectPolicy

  /// The session's delegate, when this transport created the session.
  private let delegate: SessionDelegate?

  /// Whether ``shutdown()`` was called; shared by every copy of this transport.
  let lifecycle = Lifecycle()

  /// Whether the session's configuration names a proxy in `connectionProxyDictionary`, which
  /// URLSession on Linux ignores (it follows only the `http_proxy`, `HTTPS_PROXY` and
  /// `NO_PROXY` environment, as libcurl reads it): every send then fails rather than go
  /// around the proxy the caller asked for.
  private let ignoresProxyDictionary: Bool

  /// Where this transport calls URLSession's methods that wait for its work queue (creating,
  /// resuming and cancelling a stream's task, `invalidateAndCancel()`, and the async calls
  /// of a send through a caller's session with their cancellation), which on Linux does
  /// every session's work and can be busy for seconds while a body keeps arriving. A serial
  /// queue of its own, so a thread is made for it when it blocks: `DispatchQueue.global()`
  /// shares its threads — one per core — with Swift's concurrency executor, and on a 2-core
  /// machine two such waits on them stall every task in the process. One queue per
  /// transport, so one transport's waits never hold up another's.
  private var controlQueue: DispatchQueue { controlExecutor.queue }

  /// Runs jobs on ``controlQueue``: the executor preference of sends through a caller's
  /// session (``sendOnCallersSession(_:body:observer:)``).
  private let controlExecutor = QueueTaskExecutor(
    queue: DispatchQueue(label: "Courier.URLSessionTransport.control"))

  /// Creates a transport with its own session.
  ///
  /// - Parameters:
  ///   - configuration: Copied when the session is created; default ``defaultConfiguration``
  ///     (ephemeral, no `URLCache`, no cookies: nothing leaks between requests or clients).
  ///   - cookieStorage: A cookie jar to opt in to: the session then stores every `Set-Cookie`
  ///     it receives there and sends matching cookies on every request, whichever user the
  ///     request is for. `nil` (the default) leaves the configuration's cookie settings as
  ///     they are. A jar of its own, in memory:
  ///     `URLSessionConfiguration.ephemeral.httpCookieStorage`.
  ///   - maximumResponseBodySize: The most bytes of response body kept in memory; default
  ///     ``ResponsePipeline/defaultMaximumDecodedBodySize`` (32 MiB).
  ///   - redirectPolicy: What happens to redirects; default ``RedirectPolicy/standard``.
  public init(
    configuration: URLSessionConfiguration = URLSessionTransport.defaultConfiguration,
    cookieStorage: HTTPCookieStorage? = nil,
    maximumResponseBodySize: Int = ResponsePipeline.defaultMaximumDecodedBodySize,
    redirectPolicy: RedirectPolicy = .standard
  ) {
    var configuration = configuration
    if let cookieStorage {
      // Never change the caller's object: URLSessionConfiguration is a class.
      let copy = (configuration.copy() as? URLSessionConfiguration) ?? .ephemeral
      copy.httpCookieStorage = cookieStorage
      copy.httpShouldSetCookies = true
      copy.httpCookieAcceptPolicy = .always
      configuration = copy
    }
    let delegate = SessionDelegate()
    #if canImport(FoundationNetworking)
      let queue: OperationQueue? = InlineDelegateQueue()
    #else
      let queue: OperationQueue? = nil
    #endif
    self.session = URLSession(
      configuration: configuration, delegate: delegate, delegateQueue: queue)
    self.delegate = delegate
    self.maximumResponseBodySize = maximumResponseBodySize
    self.redirectPolicy = redirectPolicy
    ignoresProxyDictionary = Self.namesProxy(configuration)
  }

  /// Whether `configuration` names a proxy that URLSession on Linux would ignore.
  private static func namesProxy(_ configuration: URLSessionConfiguration) -> Bool {
    #if canImport(FoundationNetworking)
      return !(configuration.connectionProxyDictionary?.isEmpty ?? true)
    #else
      return false
    #endif
  }

  /// `.ephemeral` without a `URLCache` and without cookies: nothing is stored between
  /// requests or clients, and HTTP caching is left to middleware.
  ///
  /// - No `URLCache`: on Linux the ephemeral configuration still consults a `URLCache` on
  ///   every request (hashing the request and listing a cache directory), which costs more
  ///   CPU than the whole of Courier's own work on the request.
  /// - No cookie jar (`httpCookieStorage = nil`, `httpShouldSetCookies = false`,
  ///   `httpCookieAcceptPolicy = .never`): the ephemeral configuration keeps one in-memory jar
  ///   for every request of the session, so a `Set-Cookie` answered to one user would be sent
  ///   on the next user's request. Opt in with `URLSessionTransport(cookieStorage:)`.
  public static var defaultConfiguration: URLSessionConfiguration {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.urlCache = nil
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.httpCookieStorage = nil
    configuration.httpShouldSetCookies = false
    configuration.httpCookieAcceptPolicy = .never
    return configuration
  }

  /// Creates a transport that sends with an existing session.
  ///
  /// The body limit and progress work as with a session of the transport's own; downloads to
  /// a file fail with ``CourierError/Kind/invalidRequest``, and the ``redirectPolicy`` does
  /// not apply (URLSession on Linux tells only the session's delegate about redirects and
  /// about the body of a task without a completion handler). As with a session of its own,
  /// the transport creates, resumes and cancels each task on its own serial queue, never on
  /// Swift's executor threads: on Linux those calls wait for URLSession's work queue, which a
  /// body arriving on any session can keep busy.
  public init(
    session: URLSession,
    maximumResponseBodySize: Int = ResponsePipeline.defaultMaximumDecodedBodySize
  ) {
    self.session = session
    self.delegate = nil
    self.maximumResponseBodySize = maximumResponseBodySize
    self.redirectPolicy = .standard
    ignoresProxyDictionary = Self.namesProxy(session.configuration)
  }

  /// Ends the session: requests still in flight fail with kind
  /// ``CourierError/Kind/cancelled``, and every later ``send(_:)`` fails with kind
  /// ``CourierError/Kind/invalidRequest`` without touching the network. Calling it again does
  /// nothing.
  ///
  /// It cancels, as `invalidateAndCancel()` does, rather than letting tasks finish as
  /// `finishTasksAndInvalidate()` would: a transport is shut down when its owner is done with
  /// it, and a request still hanging then (a server that never answers, with only libcurl's
  /// idle timeout to end it) would otherwise keep the session and its libcurl handles alive
  /// for as long as the server likes. A caller who wants requests to finish awaits them
  /// before shutting down. The session is invalidated once no send is under way (URLSession
  /// on Linux traps when a task is created in an invalidated session); a send that had not
  /// yet created its URLSession task when `shutdown()` ran is not cancelled and finishes. A
  /// session passed to ``init(session:maximumResponseBodySize:)`` is invalidated too, except `URLSession.shared`:
  /// other code may still use it, and its tasks cannot be told from this transport's, so
  /// nothing is cancelled there; later sends through this transport are still refused.
  ///
  /// It returns at once: the session is invalidated on the transport's own serial queue,
  /// since URLSession's queue can be busy for seconds with a body still arriving.
  public func shutdown() {
    let (first, invalidate) = lifecycle.shutDown()
    guard first, session !== URLSession.shared else { return }
    if invalidate {
      invalidateSession()
    } else {
      // Sends are under way: cancel their tasks now; the last send to end invalidates.
      let queue = controlQueue
      session.getAllTasks { tasks in
        // The callback may run on URLSession's own queue (InlineDelegateQueue).
        for task in tasks { AttemptObserver.cancel(task, on: queue) }
      }
    }
  }

  /// Whether ``shutdown()`` was called.
  public var isShutDown: Bool { lifecycle.isShutDown }

  /// How many URLSession tasks of this transport's own session still have an observer: the
  /// tasks not completed yet.
  var observedTaskCount: Int { delegate?.observedTaskCount ?? 0 }

  /// Invalidates and cancels the session from ``controlQueue``, so that neither
  /// ``shutdown()`` nor a send's clean-up blocks its caller.
  ///
  /// `invalidateAndCancel()` waits for URLSession's work queue, which on Linux can stay busy
  /// for as long as a server keeps sending: a body cut off at the limit goes on arriving
  /// until the task's cancellation gets its turn on that queue: seconds, or minutes on a
  /// loaded machine.
  private func invalidateSession() {
    let session = self.session
    controlQueue.async { session.invalidateAndCancel() }
  }

  /// Sends `request` once.
  ///
  /// The body is counted as it arrives (after libcurl's decoding) and receiving stops as
  /// soon as it passes the limit (``ResponseBodyLimitAttribute``, else
  /// ``maximumResponseBodySize``). A request with a ``DownloadAttribute`` streams a `2xx`
  /// body to its file instead of memory. Redirects follow ``RedirectPolicyAttribute``, else
  /// ``redirectPolicy``. Progress goes to ``UploadProgressAttribute`` and
  /// ``DownloadProgressAttribute`` when set.
  ///
  /// - Throws: ``CourierError`` with a kind from ``URLErrorMapping`` (for example
  ///   ``CourierError/Kind/cannotConnect`` or ``CourierError/Kind/timedOut``),
  ///   ``CourierError/Kind/cancelled`` when the calling task or the request was cancelled,
  ///   ``CourierError/Kind/bodyTooLarge`` past the limit,
  ///   ``CourierError/Kind/tooManyRedirects`` past the redirect policy's hops or on a loop,
  ///   ``CourierError/Kind/invalidRequest`` after ``shutdown()``.
  public func send(_ request: Request) async throws -> Response {
    #if canImport(FoundationNetworking)
      if let limit = request.timeout {
        guard limit > .zero else {
          // CurlTransport gives libcurl 1 ms for such a limit; nothing can be sent in none.
          throw CourierError(
            kind: .timedOut,
            debugMessage:
              "Request.timeout is \(DescriptionText.duration(limit)): the attempt had no time left "
              + "and was not sent",
            request: request, attempts: 0, stage: "transport")
        }
        return try await send(request, within: limit)
      }
    #endif
    return try await attempt(request)
  }

  /// The longest `timeoutInterval` this transport gives URLSession: `Int32.max` milliseconds
  /// (24.8 days), the same bound `CurlTransport` gives libcurl. FoundationNetworking turns the
  /// interval into whole milliseconds with trapping arithmetic, so a larger one
  /// (`.timeout(.seconds(Int64.max / 4))`) would crash the process.
  static let maximumTimeoutInterval = Double(Int32.max) / 1000

  #if canImport(FoundationNetworking)
    /// Sends `request`, cancelling it once `limit` has passed in all: URLSession on Linux
    /// enforces `timeoutInterval` only while no byte arrives, so a server that trickles its
    /// answer is never cut off, where `CurlTransport` ends the attempt at the limit.
    ///
    /// The same design as `TimeoutMiddleware`: the attempt runs under a
    /// ``RequestCancellation`` of its own, a child of the caller's, which the process's timer
    /// thread cancels at the limit, and with it the attempt's URLSession task.
    /// URLSession's own idle timeout is set a second later (``urlRequest(for:)``), so the two
    /// never fire together, which can deadlock URLSession on Linux.
    private func send(_ request: Request, within limit: Duration) async throws -> Response {
      let outer = RequestCancellation.current
      let token = RequestCancellation(parent: outer)
      CancellationTimer.shared.arm(after: limit, cancelling: token)
      defer {
        CancellationTimer.shared.disarm(token)
        token.detachFromParent()
      }
      do {
        return try await RequestCancellation.$current.withValue(token) {
          try await attempt(request)
        }
      } catch let error as CourierError {
        // The timer cancelled the attempt, not the caller; an attempt that failed for its own
        // reason (a bad URL, a refused connection) reports that reason, however late.
        guard error.kind == .cancelled, token.isCancelled, !(outer?.isCancelled ?? false),
          !Task.isCancelled
        else { throw error }
        let limitText = DescriptionText.duration(limit)
        var timedOut = CourierError(
          kind: .timedOut,
          debugMessage: request.attributes[ResponseStreamAttribute.self] != nil
            ? "no response head within the request's timeout (\(limitText)); the task was "
              + "cancelled (for a streamed body the timeout covers the head)"
            : "the attempt passed its Request.timeout of \(limitText) in all and was cancelled "
              + "(URLSession on Linux enforces timeoutInterval only while no byte arrives; "
              + "URLSessionTransport enforces the total)",
          underlying: error, request: request, attempts: 1, stage: "transport")
        // The phases the attempt reached before the limit: no first byte, when it had none.
        timedOut.timings = error.timings
        throw timedOut
      }
    }
  #endif

  /// One attempt of ``send(_:)``, within no limit but URLSession's own.
  private func attempt(_ request: Request) async throws -> Response {
    // A directory as an upload hangs URLSession until its timeout, and a Content-Length of
    // the caller's over a shorter body until the server gives up (CurlTransport checks too).
    try RequestFraming.check(request)
    if ignoresProxyDictionary {
      throw CourierError(
        kind: .invalidRequest,
        debugMessage: "the session's configuration sets connectionProxyDictionary, which "
          + "URLSession on Linux ignores; the request was not sent rather than go around the "
          + "proxy. Name the proxy in the http_proxy / HTTPS_PROXY environment (URLSession "
          + "follows it), or use CurlTransport's proxy setting",
        request: request, attempts: 1, stage: "transport")
    }
    let observer = attemptObserver(for: request)
    // However the attempt ends, a file body's length watch ends with it.
    defer { observer.endUpload() }
    try lifecycle.begin(request)
    defer {
      if lifecycle.end(), session !== URLSession.shared { invalidateSession() }
    }
    do {
      try RequestCancellation.checkCancellation()
      let (data, urlResponse) = try await exchange(observer.request, observer: observer)
      return try response(to: request, data: data, urlResponse: urlResponse, observer: observer)
    } catch let error as CourierError {
      var error = observer.withTimings(error)
      error.request = request
      throw error
    } catch {
      throw observer.withTimings(Self.failure(error, of: request, observer: observer))
    }
  }

  /// The observer of one attempt at `request`, with the body limit and the redirect policy
  /// the request asks for (else this transport's) and its download's file, if any.
  private func attemptObserver(for request: Request) -> AttemptObserver {
    AttemptObserver(
      request: request,
      limit: max(
        0, request.attributes[ResponseBodyLimitAttribute.self] ?? maximumResponseBodySize),
      policy: request.attributes[RedirectPolicyAttribute.self] ?? redirectPolicy,
      destination: request.attributes[DownloadAttribute.self], controlQueue: controlQueue,
      headIdle: headIdle(for: request))
  }

  /// The idle timeout that bounds the wait for a streamed request's head when it has no
  /// ``Request/timeout``: the session's `timeoutIntervalForRequest` (URLSession's own timer is
  /// off for a streamed request, ``urlRequest(for:)``); `nil` otherwise, or when the session
  /// has none.
  private func headIdle(for request: Request) -> Duration? {
    guard request.attributes[ResponseStreamAttribute.self] != nil, request.timeout == nil
    else { return nil }
    let seconds = session.configuration.timeoutIntervalForRequest
    guard seconds.isFinite, seconds > 0 else { return nil }
    return .seconds(min(seconds, Self.maximumTimeoutInterval))
  }

  /// Sends `sent` (the observer's request) and returns the last hop's body and response.
  private func exchange(
    _ sent: Request, observer: AttemptObserver
  ) async throws -> (Data, URLResponse) {
    let urlRequest = Self.urlRequest(for: sent)
    guard let delegate else {
      guard observer.streamBufferSize == nil else {
        throw CourierError(
          kind: .invalidRequest,
          debugMessage: "streamed response bodies need a session URLSessionTransport created: "
            + "URLSession on Linux hands a task's body piece by piece only to the session's "
            + "own delegate",
          request: sent, attempts: 1, stage: "transport")
      }
      guard !observer.isDownload else {
        throw CourierError(
          kind: .invalidRequest,
          debugMessage: "downloads to a file need a session URLSessionTransport created",
          request: sent, attempts: 1, stage: "transport")
      }
      return try await withSendableBody(sent.body, of: sent) { body in
        try await sendOnCallersSession(urlRequest, body: body, observer: observer)
      }
    }
    // Our session: the body comes to the observer piece by piece and is kept (or written to
    // the download's file) there, never buffered by URLSession. A hop URLSession does not
    // send itself (a body to send again) is a task of its own.
    var (current, body) = (urlRequest, sent.body)
    while true {
      let (data, response) = try await withSendableBody(body, of: sent) { [current] body in
        try await stream(current, body: body, observer: observer, delegate: delegate)
      }
      guard let next = observer.takePendingRedirect() else { return (data, response) }
      current = Self.urlRequest(for: next)
      body = next.body
    }
  }

  /// The attempt's response from what the last hop returned, unless a callback recorded a
  /// failure (the limit, the redirect policy, the download's file) or the body is over the
  /// limit.
  private func response(
    to request: Request, data: Data, urlResponse: URLResponse, observer: AttemptObserver
  ) throws(CourierError) -> Response {
    if let stream = observer.takeStream(), let http = urlResponse as? HTTPURLResponse {
      // A streamed `2xx`: what goes wrong from here on reaches the reader through the stream.
      var response = Response(
        status: http.statusCode, headers: Self.headers(of: http), request: request,
        timings: observer.timings(complete: true, streamed: true))
      if request.method != .head, response.headers[.contentEncoding] != nil {
        // libcurl inside URLSession decodes every coding it is sent (or fails the body), so
        // the stream carries decoded bytes. A body in memory keeps the headers, and its size
        // against `Content-Length` tells `GzipMiddleware` it was decoded; a stream has no such
        // sign, and a `.gz` file served with `Content-Encoding: gzip` would be unpacked twice.
        response.headers.remove(.contentEncoding)
        response.headers.remove(.contentLength)
      }
      response.bodyStream = stream
      return response
    }
    if let failure = observer.failure { throw failure }
    guard let http = urlResponse as? HTTPURLResponse else {
      throw CourierError(
        kind: .badResponse, debugMessage: "URLSession returned a non-HTTP response",
        request: request, attempts: 1, stage: "transport")
    }
    var response = Response(
      status: http.statusCode, headers: Self.headers(of: http), body: data, request: request,
      timings: observer.timings(complete: true))
    if data.count > observer.limit {
      // The whole body arrived before the cancellation took effect.
      throw CourierError.bodyTooLarge(limit: observer.limit, request: request)
    }
    response.downloadedFile = observer.downloadedFile
    observer.downloadProgress?.completeAttempt(
      total: response.downloadedFile?.byteCount ?? Int64(data.count))
    return response
  }

  /// What an error from URLSession means for the attempt: the failure a callback recorded,
  /// else the `URLError`'s kind (see ``URLErrorMapping``), `cancelled` when the request was.
  private static func failure(
    _ error: any Error, of request: Request, observer: AttemptObserver
  ) -> CourierError {
    if let failure = observer.failure { return failure }
    var mapped = URLErrorMapping.courierError(for: error, request: request)
    if RequestCancellation.isCancelled, mapped.kind != .cancelled {
      mapped.debugMessage += "; the request was cancelled"
      mapped.kind = .cancelled
    }
    return mapped
  }

  /// Sends through a session this transport did not create, with URLSession's async calls.
  ///
  /// On Linux they run in a task of their own that prefers the control queue as its executor:
  /// each creates and resumes its URLSession task before it suspends, and both wait for
  /// URLSession's work queue, which a body arriving on any session can keep busy. On Swift's
  /// executor those waits held its threads — one per core — and with them every task in the
  /// process. A task of their own, rather than a preference in the caller's, because
  /// URLSession cancels its task from the cancelling thread (`URLSessionTask.cancel()` waits
  /// for that queue as well): this task is cancelled from the control queue instead.
  private func sendOnCallersSession(
    _ urlRequest: URLRequest, body: RequestBody, observer: AttemptObserver
  ) async throws -> (Data, URLResponse) {
    let session = self.session
    let send: @Sendable () async throws -> (Data, URLResponse) = {
      if let file = body.fileURL {
        return try await session.upload(for: urlRequest, fromFile: file, delegate: observer)
      } else if let data = body.data, !data.isEmpty {
        return try await session.upload(for: urlRequest, from: data, delegate: observer)
      }
      return try await session.data(for: urlRequest, delegate: observer)
    }
    #if canImport(FoundationNetworking)
      let inner = Task(executorPreference: controlExecutor, operation: send)
      return try await RequestCancellation.withCancellationHandler {
        try await inner.value
      } onCancel: { [queue = controlQueue] in
        queue.async { inner.cancel() }
      }
    #else
      return try await send()
    #endif
  }

  /// Runs a task whose body the observer receives piece by piece, without URLSession
  /// buffering it.
  ///
  /// Why not `data(for:delegate:)`, which would be simpler: URLSession on Linux keeps that
  /// task's whole decoded body itself, and libcurl decodes all the bytes it has read in one
  /// go on URLSession's queue before a cancellation can run there, so a small gzip bomb
  /// grows the process by gigabytes before the task stops. Here the observer keeps at most
  /// the limit and drops the rest until the cancellation lands. A data task also sends
  /// `httpBody` again on a 307/308 hop; an upload task sends its body once.
  ///
  /// The task is created here, so a cancellation of either kind (the calling `Task`, or the
  /// request's ``RequestCancellation``) cancels it directly.
  private func stream(
    _ urlRequest: URLRequest, body: RequestBody, observer: AttemptObserver,
    delegate: SessionDelegate
  )
    async throws -> (Data, URLResponse)
  {
    var urlRequest = urlRequest
    if let data = body.data, !data.isEmpty { urlRequest.httpBody = data }
    let (session, queue, started) = (self.session, controlQueue, StartedTask())
    let (data, response) = try await RequestCancellation.withCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<(Data, HTTPURLResponse), any Error>) in
        observer.state.withLock { $0.continuation = continuation }
        // Created and started on the control queue, not on this thread: URLSession on Linux
        // does the work of every session on one queue, and creating or resuming a task waits
        // for it. From Swift's executor (one thread per core) that wait would stall every task
        // in the process while another session's body is arriving.
        queue.async { [urlRequest] in
          let task: URLSessionTask
          if let file = body.fileURL {
            task = session.uploadTask(with: urlRequest, fromFile: file)
          } else {
            task = session.dataTask(with: urlRequest)
          }
          #if canImport(FoundationNetworking)
            delegate.register(observer, for: task)
          #else
            task.delegate = observer
          #endif
          let cancelledFirst = started.attach(task)
          observer.watchHead(of: task)
          task.resume()
          // Cancelled before it existed: cancelled now, so it ends through the delegate as
          // any cancelled task does.
          if cancelledFirst { task.cancel() }
        }
      }
    } onCancel: {
      // A streamed body whose head was handed over belongs to its reader: a cancellation
      // that comes now (the request's timeout firing as the head arrived) ends nothing.
      guard observer.cancelUnlessStreaming() else { return }
      // A task not created yet is cancelled by the block that creates it; one that exists was
      // resumed by that block, which ran before this one on the same serial queue.
      if let task = started.cancel() { AttemptObserver.cancel(task, on: queue) }
    }
    return (data, response)
  }

  #if canImport(FoundationNetworking)
    /// `true` on Linux: a cancelled ``RequestCancellation`` cancels the attempt's URLSession
    /// task as the calling `Task`'s cancellation does.
    public var observesRequestCancellation: Bool { true }
  #endif

  /// The `URLRequest` for `request`.
  ///
  /// A name with several values is set once, its values joined in order: `Cookie` with `"; "`
  /// (RFC 6265 §5.4: one `Cookie` field, pairs separated by `"; "`), any other name with
  /// `", "` (RFC 9110 §5.3). Left to `addValue`, URLSession would join every name with `","`,
  /// which breaks `Cookie`.
  static func urlRequest(for request: Request) -> URLRequest {
    var urlRequest = URLRequest(url: request.url)
    if request.method != .get {
      // GET is URLRequest's default; setting it anyway copies the request's storage.
      urlRequest.httpMethod = request.method.rawValue
    }
    let headers = request.headers
    if !headers.isEmpty {
      // All fields in one assignment: `setValue(_:forHTTPHeaderField:)` capitalizes the name
      // through `NSString` and copies the whole dictionary out and back for every field, a few
      // microseconds each on Linux. Names are capitalized here as it would have done, so a
      // name meets a session's `httpAdditionalHeaders` the same way as before.
      var fields: [String: String] = [:]
      fields.reserveCapacity(headers.count)
      var position = 0
      for field in headers {
        defer { position += 1 }
        // A repeated name was set with its first occurrence.
        if headers.prefix(position).contains(where: { $0.name == field.name }) { continue }
        var value = field.value
        let separator = field.name == .cookie ? "; " : ", "
        for later in headers.dropFirst(position + 1) where later.name == field.name {
          value += separator
          value += later.value
        }
        fields[Self.capitalized(field.name.rawName)] = value
      }
      urlRequest.allHTTPHeaderFields = fields
    }
    if request.attributes[ResponseStreamAttribute.self] != nil {
      // URLSession's timer is an idle timeout over the whole transfer. A streamed body has
      // its own limits (the head within `Request.timeout`, enforced by `send`; the idle
      // timeout and the deadline by the observer), so URLSession's is turned off.
      urlRequest.timeoutInterval = maximumTimeoutInterval
    } else if let timeout = request.timeout {
      let seconds = min(timeout.inSeconds, maximumTimeoutInterval)
      #if canImport(FoundationNetworking)
        // URLSession on Linux truncates the interval to whole seconds (1.5 s fires after 1 s,
        // and 0.5 s at once), so round up; and a second more, since `send` ends the
        // attempt at the exact limit itself and URLSession's timer must not fire with it.
        urlRequest.timeoutInterval = max(1, seconds.rounded(.up)) + 1
      #else
        urlRequest.timeoutInterval = max(seconds, 0.001)
      #endif
    }
    return urlRequest
  }

  /// `name` (an ASCII token) as Foundation's `capitalized` writes it: a letter that follows
  /// a letter in lower case, any other letter in upper case (`x-api-key` → `X-Api-Key`,
  /// `WWW-Authenticate` → `Www-Authenticate`, `a1b2` → `A1B2`).
  static func capitalized(_ name: String) -> String {
    var name = name
    return name.withUTF8 { bytes in
      String(unsafeUninitializedCapacity: bytes.count) { buffer in
        var inWord = false
        for (index, byte) in bytes.enumerated() {
          buffer[index] = inWord ? ASCII.lowercased(byte) : ASCII.uppercased(byte)
          inWord = ASCII.isLetter(byte)
        }
        return bytes.count
      }
    }
  }

  /// The response's headers.
  ///
  /// `HTTPURLResponse` keeps one value per name: on Linux it joins repeated fields with
  /// `", "`. `Set-Cookie` is split back into one field per cookie with
  /// ``SetCookieSplitter`` (a comma inside `Expires=Wed, 21 Oct 2015 …` stays); every other
  /// repeated name stays one field with the values joined, which RFC 9110 §5.3 makes
  /// equivalent.
  static func headers(of response: HTTPURLResponse) -> HTTPHeaders {
    var fields: [(String, String)] = []
    for (key, value) in response.allHeaderFields {
      guard let name = key as? String, let value = value as? String else { continue }
      if name.caseInsensitiveCompare("Set-Cookie") == .orderedSame {
        for cookie in SetCookieSplitter.split(value) { fields.append((name, cookie)) }
      } else {
        fields.append((name, value))
      }
    }
    return HTTPHeaders(received: fields)
  }
}

/// The URLSession task of one ``URLSessionTransport`` stream, created on the transport's
/// control queue, and whether a cancellation came before it existed.
private final class StartedTask: Sendable {
  private struct State {
    var task: URLSessionTask?
    var cancelled = false
  }
  private let state = Mutex(State())

  /// Records the task; `true` when a cancellation came first.
  func attach(_ task: URLSessionTask) -> Bool {
    state.withLock { state in
      state.task = task
      return state.cancelled
    }
  }

  /// Records a cancellation; the task to cancel, if it exists already.
  func cancel() -> URLSessionTask? {
    state.withLock { state in
      state.cancelled = true
      return state.task
    }
  }
}

/// Whether a ``URLSessionTransport`` was shut down, and how many of its sends are under way.
///
/// URLSession on Linux traps (`Fatal error: Session invalidated`) when a task is created in an
/// invalidated session, and the async `data(for:)` creates its task out of our sight. So the
/// session is invalidated only when no send is between its check and its end: at once by
/// ``URLSessionTransport/shutdown()`` when none is, else by the last send to end.
///
/// A class so that every copy of the transport (a struct) shares it; `Sendable` because its
/// only stored property is a `Mutex`.
final class Lifecycle: Sendable {
  private struct State {
    var isShutDown = false
    var active = 0
    var invalidated = false
    /// What ends each stream body being written to its temporary file (``BodySpool``): no
    /// URLSession task exists yet for ``URLSessionTransport/shutdown()`` to cancel.
    var spools: [Int: @Sendable () -> Void] = [:]
    var nextSpool = 0
  }

  private let state = Mutex(State())

  var isShutDown: Bool { state.withLock { $0.isShutDown } }

  /// Counts a send in; throws when the transport was shut down.
  func begin(_ request: Request) throws(CourierError) {
    let open = state.withLock { state in
      guard !state.isShutDown else { return false }
      state.active += 1
      return true
    }
    guard open else {
      throw CourierError(
        kind: .invalidRequest,
        debugMessage: "URLSessionTransport was shut down; create a new transport to send more",
        request: request, attempts: 1, stage: "transport")
    }
  }

  /// Counts a send out; `true` when the session must be invalidated now.
  func end() -> Bool {
    state.withLock { state in
      state.active -= 1
      return claimInvalidation(&state)
    }
  }

  /// Marks the transport shut down and ends every stream body being spooled. `first` is
  /// `false` when it already was; `invalidate` is `true` when no send is under way, so the
  /// session can be invalidated at once.
  func shutDown() -> (first: Bool, invalidate: Bool) {
    let (result, spools) = state.withLock { state in
      let first = !state.isShutDown
      state.isShutDown = true
      defer { state.spools = [:] }
      return ((first, claimInvalidation(&state)), Array(state.spools.values))
    }
    for cancel in spools { cancel() }
    return result
  }

  /// Runs `cancel` when the transport shuts down before ``endSpool(_:)``, at once if it has;
  /// the number to end it with.
  func beginSpool(_ cancel: @escaping @Sendable () -> Void) -> Int {
    let number = state.withLock { state -> Int? in
      guard !state.isShutDown else { return nil }
      defer { state.nextSpool += 1 }
      state.spools[state.nextSpool] = cancel
      return state.nextSpool
    }
    guard let number else {
      cancel()
      return -1
    }
    return number
  }

  /// The spool `number` ended.
  func endSpool(_ number: Int) {
    _ = state.withLock { $0.spools.removeValue(forKey: number) }
  }

  private func claimInvalidation(_ state: inout State) -> Bool {
    guard state.isShutDown, state.active == 0, !state.invalidated else { return false }
    state.invalidated = true
    return true
  }
}

extension URLSessionTransport: CustomStringConvertible {
  /// The session's settings that change what goes on the wire:
  /// `URLSessionTransport(cookies: off; cache: off; idle timeout 60 s; 6 connections per host)`.
  public var description: String {
    let configuration = session.configuration
    let cookies =
      configuration.httpShouldSetCookies && configuration.httpCookieStorage != nil ? "on" : "off"
    let cache = configuration.urlCache == nil ? "off" : "on"
    let idle = DescriptionText.duration(.seconds(configuration.timeoutIntervalForRequest))
    return "URLSessionTransport(cookies: \(cookies); cache: \(cache); idle timeout \(idle); "
      + "\(configuration.httpMaximumConnectionsPerHost) connections per host)"
  }
}
