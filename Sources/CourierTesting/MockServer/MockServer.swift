import Foundation

/// A real HTTP/1.1 server on the loopback interface, for exercising an HTTP client end to end.
///
/// `MockServer` is modelled on OkHttp's `MockWebServer`. It listens on an ephemeral port of
/// `127.0.0.1` from the moment it is created, answers each request with the next scripted
/// ``MockResponse`` (or a dispatcher's answer, or `404`), and records every request so a test
/// can inspect exactly what went over the wire with ``takeRequest(timeout:)``.
///
/// ```swift
/// let server = try MockServer()
/// defer { server.shutdown() }
///
/// server.enqueue(.json(#"{"temperature": 21}"#))
///
/// var request = URLRequest(url: server.url("/weather?city=Oslo"))
/// request.setValue("Bearer token", forHTTPHeaderField: "Authorization")
/// let (data, response) = try await URLSession.shared.data(for: request)
///
/// let recorded = try await server.takeRequest()
/// #expect(recorded.method == "GET")
/// #expect(recorded.path == "/weather")
/// #expect(recorded.query == "city=Oslo")
/// #expect(recorded.header("authorization") == "Bearer token")
/// ```
///
/// ## Scripting responses
///
/// Responses queued with ``enqueue(_:)`` are used first, in order, one per request. When the
/// queue is empty the dispatcher set with ``setDispatcher(_:)`` answers; without one the
/// server answers `404 Not Found` with an empty body. A response can be delayed
/// (``MockResponse/delay``), sent chunked (``MockResponse/chunked``), or replaced by a fault
/// such as a dropped connection (``MockFault``).
///
/// ## Connections
///
/// Each accepted connection is served by its own thread; keep-alive is the HTTP/1.1 default
/// and `Connection: close` is honoured. ``RecordedRequest/connectionIndex`` tells which
/// connection carried a request, so a test can check connection reuse. Request bodies may be
/// sent with `Content-Length` or chunked, and `Expect: 100-continue` is answered.
///
/// ## Lifetime
///
/// Call ``shutdown()`` when done; it closes every socket, fails pending
/// ``takeRequest(timeout:)`` calls and joins every thread before returning. Dropping the last
/// reference to the server shuts it down too.
///
/// ## Limits
///
/// Header blocks over 64 KiB are answered with `431`, bodies over 256 MiB with `413` (64 GiB
/// when they go to files, see ``requestBodyDirectory``), and
/// malformed requests with `400`; all three close the connection. There is no TLS and no
/// HTTP/2; pipelined requests are answered one after another. Every request is kept
/// until it is taken; a long benchmark that never calls ``takeRequest(timeout:)`` should set
/// ``recordsRequests`` to `false`.
public final class MockServer: Sendable {
  private let core: ServerCore

  /// The URL of the server's root, such as `http://127.0.0.1:49152/`.
  public let baseURL: URL

  /// Binds a port on `host`, starts listening and starts accepting connections.
  ///
  /// - Parameters:
  ///   - host: A numeric IPv4 or IPv6 address to listen on; the loopback address by default.
  ///     Any `127.x.y.z` works on Linux without configuration (all of `127/8` is loopback),
  ///     which gives a test a second host.
  ///   - port: The port; 0 (the default) lets the kernel pick a free one. Pass the ``port``
  ///     of a server that was shut down to start it again where clients expect it.
  /// - Throws: ``MockServerError`` if the address is not numeric or the socket cannot be
  ///   bound.
  public init(host: String = "127.0.0.1", port: Int = 0) throws {
    let core = try ServerCore(host: host, port: port)
    guard let baseURL = URL(string: "http://\(core.urlHost):\(core.port)/") else {
      throw MockServerError("cannot form a URL for host '\(host)'")
    }
    try core.start()
    self.core = core
    self.baseURL = baseURL
  }

  deinit {
    core.shutdown()
  }

  /// The TCP port the server listens on.
  public var port: Int { core.port }

  /// The URL for `path` on this server; a leading `/` is optional.
  ///
  /// `path` may carry a query string and percent-escapes, which are kept as written:
  /// `server.url("/a%20b?x=1")` is `http://127.0.0.1:<port>/a%20b?x=1`. Characters that
  /// cannot appear in a URL are percent-encoded.
  public func url(_ path: String) -> URL { Self.url(path, on: baseURL) }

  /// `path` below `baseURL`, as ``url(_:)`` makes it (``RefusingPort`` too).
  static func url(_ path: String, on baseURL: URL) -> URL {
    let relative = path.hasPrefix("/") ? String(path.dropFirst()) : path
    let base = baseURL.absoluteString
    if let url = URL(string: base + relative) { return url }
    var allowed = CharacterSet.urlQueryAllowed
    allowed.insert(charactersIn: "%#")
    if let encoded = relative.addingPercentEncoding(withAllowedCharacters: allowed),
      let url = URL(string: base + encoded)
    {
      return url
    }
    return baseURL.appendingPathComponent(relative)
  }

  /// Queues `response` as the answer to the next request that finds it first in line.
  ///
  /// Queued responses are used in FIFO order, one per request, before the dispatcher.
  public func enqueue(_ response: MockResponse) {
    core.enqueue(response)
  }

  /// Sets the closure that answers requests while the response queue is empty, or removes it
  /// with `nil`. Without a dispatcher, such requests get `404 Not Found`.
  ///
  /// The dispatcher runs on the connection's thread, after the request has been recorded;
  /// it may be called concurrently for requests on different connections.
  public func setDispatcher(_ dispatcher: (@Sendable (RecordedRequest) -> MockResponse)?) {
    core.setDispatcher(dispatcher)
  }

  /// Returns the oldest request not yet taken, waiting for one to arrive if necessary.
  ///
  /// Requests are returned in the order they arrived, each once. Waiting suspends the task
  /// without polling.
  ///
  /// - Parameter timeout: How long to wait for a request.
  /// - Throws: ``MockServerError`` if no request arrives within `timeout` or the server is
  ///   shut down while waiting (or was already, with no requests left), and
  ///   `CancellationError` if the task is cancelled.
  public func takeRequest(timeout: Duration = .seconds(10)) async throws -> RecordedRequest {
    try await core.takeRequest(timeout: timeout)
  }

  /// The number of requests received so far, whether or not they have been taken.
  public var requestCount: Int { core.requestCount }

  /// Whether requests are kept for ``takeRequest(timeout:)``; `true` by default.
  ///
  /// Set it to `false` for benchmarks and other long runs that never take their requests, so
  /// they do not accumulate in memory. Requests are still counted and passed to the
  /// dispatcher, and a ``takeRequest(timeout:)`` call that is already waiting still receives
  /// the next one; requests that arrive while nobody waits are dropped. Requests already kept
  /// stay available.
  public var recordsRequests: Bool {
    get { core.recordsRequests }
    set { core.recordsRequests = newValue }
  }

  /// A directory to write request bodies to, one new file per request with a body, instead
  /// of holding them in memory; `nil` (the default) keeps bodies in ``RecordedRequest/body``.
  ///
  /// For tests of large uploads: the server then receives a body of any size (up to 64 GiB)
  /// through a fixed 256 KiB buffer, and ``RecordedRequest/bodyFile`` names the file
  /// (``RecordedRequest/body`` stays empty). The files belong to the test, which deletes them
  /// (or the directory). If a file cannot be created or written, the connection is dropped
  /// without an answer.
  ///
  /// ```swift
  /// import CourierTesting
  /// import Foundation
  ///
  /// let server = try MockServer()
  /// let folder = FileManager.default.temporaryDirectory.appendingPathComponent("uploads")
  /// try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
  /// server.requestBodyDirectory = folder
  /// // … upload; then `try await server.takeRequest().bodyFile` is the body on disk.
  /// ```
  public var requestBodyDirectory: URL? {
    get { core.requestBodyDirectory }
    set { core.requestBodyDirectory = newValue }
  }

  /// Stops the server: closes the listening socket and every open connection, fails pending
  /// ``takeRequest(timeout:)`` calls, and waits for all of the server's threads to exit.
  ///
  /// Safe to call more than once and from any thread; later calls return immediately.
  /// Requests received before shutdown can still be taken afterwards.
  public func shutdown() {
    core.shutdown()
  }
}
