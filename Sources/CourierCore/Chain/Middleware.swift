/// One layer of a ``Client``'s request chain: sees each request on its way to the
/// ``Transport`` and each response on its way back.
///
/// ## When to use it
/// Anything that should apply to many endpoints belongs in middleware: default headers and
/// auth, retry, timeouts, logging, compression, metrics, request signing. The chain is an
/// onion: the first middleware in the client's list is the outermost, it sees the request
/// first and the response last.
///
/// ## How it works
/// ``intercept(_:next:)`` receives the request and a ``Next`` that runs the rest of the chain.
/// A middleware may
/// - change the request before calling `next`;
/// - answer without calling `next` at all (a cache hit, a fail-fast check);
/// - call `next` more than once (retry);
/// - change the response, or throw.
///
/// The client composes the chain once, when it is created, so a middleware adds one function
/// call per request and nothing else.
///
/// ## Writing your own
/// ```swift
/// struct UserAgentMiddleware: Middleware {
///   let value: String
///   func intercept(_ request: Request, next: Next) async throws -> Response {
///     var request = request
///     try request.headers.set(.userAgent, value)
///     return try await next(request)
///   }
/// }
///
/// let client = Client(baseURL: base, transport: URLSessionTransport(),
///                     middleware: [UserAgentMiddleware(value: "MyApp/1.0")])
/// ```
/// ## Where it runs
/// The requirement is `nonisolated(nonsending)`: the chain runs on the executor of whoever
/// called ``Next``, with no hop between layers (``Client`` hops off the caller's actor once,
/// when a request starts). A hop is a `swift_task_switch`, which can cost more than a simple
/// middleware's own work.
/// A conformance written as a plain `func intercept…` (as above) works unchanged: Swift
/// adds one hop into it. Write `nonisolated(nonsending) func intercept…`, as the built-in
/// middleware do, to avoid that hop too.
///
/// Errors a middleware throws leave the client as ``CourierError``; a plain `Error` becomes
/// kind ``CourierError/Kind/middleware`` (not a network error) with ``CourierError/stage``
/// naming the middleware and your error as ``CourierError/underlying``, so throw a
/// ``CourierError`` with the right kind when you know it. Middleware must be
/// `Sendable`: keep mutable state behind a `Mutex` or in an actor.
public protocol Middleware: Sendable {
  /// Handles `request`, calling `next` zero or more times to run the rest of the chain.
  nonisolated(nonsending) func intercept(_ request: Request, next: Next) async throws -> Response

  /// Whether this middleware turns the bodies of responses into other bytes (decompression,
  /// decryption), so that the response pipeline's checks must read its output, not its
  /// input. The client then runs its ``ResponseValidation`` just outside the first such
  /// middleware rather than innermost. Default `false`; `GzipMiddleware` says `true` while
  /// it decodes responses.
  var decodesResponseBodies: Bool { get }
}

extension Middleware {
  /// `false`: most middleware leave response bodies as they are.
  public var decodesResponseBodies: Bool { false }
}
