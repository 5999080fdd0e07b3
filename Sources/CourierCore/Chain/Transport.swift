/// Sends one HTTP request and returns the response: the last link of a ``Client``'s chain.
///
/// ## When to use it
/// A transport does exactly one attempt and nothing else. Retries, timeouts, logging,
/// compression and reachability live in ``Middleware``, so every transport — the production
/// one, a stub in tests, one you write — runs behind the same policy code.
///
/// ## Using a built-in transport
/// - `URLSessionTransport` (module `CourierURLSession`) sends over `URLSession`.
/// - `CurlTransport` (module `CourierCurl`) drives libcurl's multi interface from one thread;
///   the default of `Client.standard` on Linux, where it costs a fraction of URLSession's CPU
///   per request.
/// - `StubTransport` (module `CourierTesting`) answers from scripted responses and records
///   what it was asked.
///
/// ```swift
/// let client = Client(
///   baseURL: URL(string: "https://api.example.com/")!,
///   transport: URLSessionTransport())
/// ```
///
/// ## Writing your own
/// Conform a `Sendable` type and implement ``send(_:)``. Apply ``Request/timeout`` when it is
/// set, and map your failures to ``CourierError`` kinds such as
/// ``CourierError/Kind/cannotConnect`` or ``CourierError/Kind/timedOut``. Any other error
/// you throw reaches the caller as kind ``CourierError/Kind/transport``, with your error as
/// ``CourierError/underlying``. An HTTP error status is a normal response, not an error: the
/// client's ``ResponsePipeline`` decides what it means.
///
/// ```swift
/// struct EchoTransport: Transport {
///   func send(_ request: Request) async throws -> Response {
///     try Task.checkCancellation()
///     return Response(status: 200, body: request.body.data ?? Data(), request: request)
///   }
/// }
/// ```
///
/// ## Cancellation
/// Honour `Task` cancellation: when the task running ``send(_:)`` is cancelled, end the
/// attempt and throw `CancellationError` or a ``CourierError`` of kind
/// ``CourierError/Kind/cancelled``. That is all a transport must do.
/// ``Client/cancelAll()`` and `TimeoutMiddleware`'s per-attempt limit cancel the request's
/// ``RequestCancellation`` instead of a task, so the client runs each attempt of such a
/// transport in a task of its own and cancels that task — a thread hop per attempt.
/// To save it, wait inside ``RequestCancellation/withCancellationHandler(operation:onCancel:)``
/// (which ends on either kind of cancellation) and declare
/// ``observesRequestCancellation``: the attempt then runs inline in the caller's task, as
/// with the built-in transports.
public protocol Transport: Sendable {
  /// Sends `request` once and returns what the server answered, whatever its status.
  func send(_ request: Request) async throws -> Response

  /// Whether ``send(_:)`` ends by itself when ``RequestCancellation/current`` is cancelled
  /// (by ``Client/cancelAll()`` or a per-attempt timeout), as well as on `Task` cancellation,
  /// for example by waiting inside
  /// ``RequestCancellation/withCancellationHandler(operation:onCancel:)``. Default `false`:
  /// the client then runs each attempt in a task of its own that the token cancels. `true`
  /// runs the attempt inline in the caller's task, without that hop.
  var observesRequestCancellation: Bool { get }

  /// Stops the transport for good: ends what it still has in flight, closes its connections
  /// and stops its threads; later sends fail without touching the network. Calling it again
  /// does nothing. The default does nothing, for a transport that holds no such resources.
  ///
  /// A ``Client`` never calls it: several clients may share one transport. Whoever made the
  /// transport calls it when done, after ``Client/shutdown(gracePeriod:)`` has let the
  /// requests in flight finish.
  func shutdown()

  /// How the transport's connections stand now (open, idle, in use, and requests waiting
  /// for one), for ``MetricsObserver`` and your own monitoring; `nil` when the transport does
  /// not know them. The default is `nil`. A transport that keeps its own connections reports
  /// them here; one that wraps another transport may forward the wrapped one's.
  var connectionPool: ConnectionPoolFigures? { get }
}

extension Transport {
  /// `false`: the client runs each attempt in a task of its own, which the request's
  /// ``RequestCancellation`` cancels.
  public var observesRequestCancellation: Bool { false }

  /// Does nothing: the transport holds nothing to release.
  public func shutdown() {}

  /// `nil`: the transport does not say how its connections stand.
  public var connectionPool: ConnectionPoolFigures? { nil }
}
