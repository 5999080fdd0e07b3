/// Sends one HTTP request and returns the response: the last link of a ``Client``'s chain.
///
/// ## When to use it
/// A transport does exactly one attempt and nothing else. Retries, timeouts, logging,
/// compression and reachability live in ``Middleware``, so every transport — the production
/// one, a stub in tests, one you write — runs behind the same policy code.
///
/// ## Using a built-in transport
/// - `URLSessionTransport` (module `CourierURLSession`) sends over `URLSession`.
/// - `CurlTransport` (module `CourierCurl`) drives libcurl's multi interface from one thread:
///   on Linux about a quarter of URLSession's CPU per request.
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
/// Conform a `Sendable` type and implement ``send(_:)``. Honour `Task` cancellation (throw
/// `CancellationError` or a ``CourierError`` of kind ``CourierError/Kind/cancelled``), apply
/// ``Request/timeout`` when it is set, and map your failures to ``CourierError`` kinds such
/// as ``CourierError/Kind/cannotConnect`` or ``CourierError/Kind/timedOut``. Any other error
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
public protocol Transport: Sendable {
  /// Sends `request` once and returns what the server answered, whatever its status.
  func send(_ request: Request) async throws -> Response

  /// Whether ``send(_:)`` ends by itself when ``RequestCancellation/current`` is cancelled (by
  /// ``Client/cancelAll()``), for example by waiting inside
  /// ``RequestCancellation/withCancellationHandler(operation:onCancel:)``. Default `false`:
  /// the client then runs each attempt in an unstructured task it can cancel, which costs a
  /// thread hop per request (about 20 µs of CPU end to end).
  var observesRequestCancellation: Bool { get }
}

extension Transport {
  /// `false`: the client runs each attempt in an unstructured task so that
  /// ``Client/cancelAll()`` can cancel it.
  public var observesRequestCancellation: Bool { false }
}
