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
/// `Task` cancels the `URLSession` task.
///
/// ```swift
/// let transport = URLSessionTransport()               // ephemeral, no URLCache
/// let custom = URLSessionTransport(configuration: {
///   let configuration = URLSessionConfiguration.ephemeral
///   configuration.httpMaximumConnectionsPerHost = 12
///   return configuration
/// }())
/// ```
///
/// ## Platform notes (Linux, where URLSession is libcurl)
/// - ``Request/timeout`` becomes `URLRequest.timeoutInterval`, which libcurl enforces as an
///   idle timeout (no bytes for that long), not a total deadline.
/// - libcurl decodes gzip responses itself but leaves `Content-Encoding` in place.
/// - At most 6 connections per host unless the configuration says otherwise.
public struct URLSessionTransport: Transport {
  /// The session every request is sent with.
  public let session: URLSession

  #if canImport(FoundationNetworking)
    /// Reusable markers that let `cancelAll()` find an attempt's URLSession task.
    private let markers = MarkerPool()
  #endif

  /// Creates a transport with its own session.
  ///
  /// - Parameter configuration: Copied when the session is created; default
  ///   ``defaultConfiguration`` (ephemeral, no `URLCache`: nothing leaks between clients).
  public init(configuration: URLSessionConfiguration = URLSessionTransport.defaultConfiguration) {
    self.session = URLSession(configuration: configuration)
  }

  /// `.ephemeral` without a `URLCache`: nothing is stored between requests or clients, and
  /// HTTP caching is left to middleware.
  ///
  /// On Linux the ephemeral configuration still consults a `URLCache` on every request
  /// (hashing the request and listing a cache directory), which costs about 50 µs of CPU per
  /// request on loopback — more than the whole of Courier. Measured with `courier-bench e2e`.
  public static var defaultConfiguration: URLSessionConfiguration {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.urlCache = nil
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    return configuration
  }

  /// Creates a transport that sends with an existing session.
  public init(session: URLSession) {
    self.session = session
  }

  /// Sends `request` once.
  ///
  /// - Throws: ``CourierError`` with a kind from ``URLErrorMapping`` (for example
  ///   ``CourierError/Kind/cannotConnect`` or ``CourierError/Kind/timedOut``),
  ///   ``CourierError/Kind/cancelled`` when the calling task was cancelled.
  public func send(_ request: Request) async throws -> Response {
    var urlRequest = Self.urlRequest(for: request)
    do {
      let (data, urlResponse): (Data, URLResponse)
      #if canImport(FoundationNetworking)
        // Courier's requests run inline in the caller's task, so `Client.cancelAll()` cannot
        // reach them through Task cancellation. The async URLSession calls are the cheapest on
        // Linux (completion handlers cost an extra queue hop, ~50 µs CPU a request), but hide
        // the URLSessionTask; a marker on the request lets a cancellation find it.
        let attempt = MarkedAttempt(session: session, host: request.url.host, pool: markers)
        urlRequest.mainDocumentURL = attempt.marker
        let token = RequestCancellation.current
        let handler = token?.addHandler { attempt.cancel() }
        defer {
          token?.removeHandler(handler)
          attempt.finish()
        }
        try RequestCancellation.checkCancellation()
      #endif
      if let file = request.body.fileURL {
        (data, urlResponse) = try await session.upload(for: urlRequest, fromFile: file)
      } else if let body = request.body.data, !body.isEmpty {
        (data, urlResponse) = try await session.upload(for: urlRequest, from: body)
      } else {
        (data, urlResponse) = try await session.data(for: urlRequest)
      }
      guard let http = urlResponse as? HTTPURLResponse else {
        throw CourierError(
          kind: .badResponse, debugMessage: "URLSession returned a non-HTTP response",
          request: request, attempts: 1, stage: "transport")
      }
      return Response(
        status: http.statusCode, headers: Self.headers(of: http), body: data, request: request)
    } catch let error as CourierError {
      throw error
    } catch {
      var mapped = URLErrorMapping.courierError(for: error, request: request)
      if RequestCancellation.isCancelled, mapped.kind != .cancelled {
        mapped.debugMessage += "; the request was cancelled"
        mapped.kind = .cancelled
      }
      throw mapped
    }
  }

  #if canImport(FoundationNetworking)
    /// `true` on Linux: `cancelAll()` finds the URLSession task by its marker.
    public var observesRequestCancellation: Bool { true }
  #endif

  /// The `URLRequest` for `request`. Courier's headers are set one by one, so a name with
  /// several values is sent as several fields joined by URLSession.
  static func urlRequest(for request: Request) -> URLRequest {
    var urlRequest = URLRequest(url: request.url)
    if request.method != .get {
      // GET is URLRequest's default; setting it anyway copies the request's storage.
      urlRequest.httpMethod = request.method.rawValue
    }
    for field in request.headers {
      urlRequest.addValue(field.value, forHTTPHeaderField: field.name.rawName)
    }
    if let timeout = request.timeout {
      let seconds =
        Double(timeout.components.seconds)
        + Double(timeout.components.attoseconds) / 1e18
      urlRequest.timeoutInterval = max(seconds, 0.001)
    }
    return urlRequest
  }

  /// The response's headers, converted only when first read (the conversion bridges every
  /// field through `[AnyHashable: Any]` on Linux and is often not needed).
  static func headers(of response: HTTPURLResponse) -> HTTPHeaders {
    HTTPHeaders(receivedLazily: {
      response.allHeaderFields.compactMap { key, value in
        guard let name = key as? String, let value = value as? String else { return nil }
        return (name, value)
      }
    })
  }

}

#if canImport(FoundationNetworking)
  /// Finds and cancels the URLSession task of one attempt from outside the sending task.
  ///
  /// The attempt's `URLRequest` carries a `mainDocumentURL` no other attempt in flight on the
  /// session carries (`http://<host>/#courier-attempt-N`: the request's own host, so cookie
  /// policies that compare the main document's domain are unaffected). `cancel()` looks the
  /// task up with `getAllTasks` and cancels it, looking again every millisecond (for at most a
  /// second) while the task is not registered yet and the attempt has not finished.
  ///
  /// Markers come from a ``MarkerPool`` and go back to it when the attempt finishes, because
  /// parsing a new URL for every request costs about 1% of a loopback request. A marker that
  /// a cancellation looked up is never reused, so a late lookup cannot find a later attempt.
  private final class MarkedAttempt: Sendable {
    private struct State {
      var finished = false
      var lookedUp = false
    }

    let session: URLSession
    let marker: URL?
    private let host: String
    private let pool: MarkerPool
    private let state = Mutex(State())

    init(session: URLSession, host: String?, pool: MarkerPool) {
      self.session = session
      self.host = host ?? "localhost"
      self.pool = pool
      self.marker = pool.take(host: self.host)
    }

    /// Ends the attempt; its marker goes back to the pool unless a lookup used it.
    func finish() {
      let reusable = state.withLock { state in
        state.finished = true
        return !state.lookedUp
      }
      if reusable, let marker { pool.give(marker, host: host) }
    }

    func cancel(triesLeft: Int = 1000) {
      guard let marker else { return }
      let active = state.withLock { state in
        guard !state.finished else { return false }
        state.lookedUp = true
        return true
      }
      guard active else { return }
      session.getAllTasks { [self] tasks in
        if let task = tasks.first(where: { $0.originalRequest?.mainDocumentURL == marker }) {
          task.cancel()
        } else if triesLeft > 0 {
          DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(1)) {
            self.cancel(triesLeft: triesLeft - 1)
          }
        }
      }
    }
  }

  /// Marker URLs by host, free for the next attempt. Holds at most 64 per host (the most
  /// attempts a session is likely to have in flight to one host); more are simply dropped.
  private final class MarkerPool: Sendable {
    private struct State {
      var nextID: UInt64 = 0
      var free: [String: [URL]] = [:]
    }

    private let state = Mutex(State())

    func take(host: String) -> URL? {
      let taken = state.withLock { state -> (reused: URL?, newID: UInt64) in
        if let url = state.free[host]?.popLast() { return (url, 0) }
        state.nextID &+= 1
        return (nil, state.nextID)
      }
      if let url = taken.reused { return url }
      return URL(string: "http://\(host)/#courier-attempt-\(taken.newID)")
    }

    func give(_ url: URL, host: String) {
      state.withLock { state in
        if state.free[host, default: []].count < 64 { state.free[host, default: []].append(url) }
      }
    }
  }
#endif
