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
/// Errors a middleware throws leave the client as ``CourierError``; a plain `Error` becomes
/// kind ``CourierError/Kind/transport`` with ``CourierError/stage`` naming the middleware, so
/// throw a ``CourierError`` with the right kind when you know it. Middleware must be
/// `Sendable`: keep mutable state behind a `Mutex` or in an actor.
public protocol Middleware: Sendable {
  /// Handles `request`, calling `next` zero or more times to run the rest of the chain.
  func intercept(_ request: Request, next: Next) async throws -> Response
}

/// The rest of a middleware chain after the current middleware: call it to pass the request on.
///
/// A class so that each layer's `Next` is made once, when the client composes its chain, and
/// passed by reference on every request.
public final class Next: Sendable {
  private let handler: @Sendable (Request) async throws -> Response

  /// Wraps a function that runs the rest of the chain.
  public init(_ handler: @escaping @Sendable (Request) async throws -> Response) {
    self.handler = handler
  }

  /// Sends `request` through the rest of the chain and returns its response.
  public func callAsFunction(_ request: Request) async throws -> Response {
    try await handler(request)
  }
}

/// Composes middleware around a transport into one function, once.
enum Chain {
  typealias Handler = @Sendable (Request) async throws -> Response

  /// Folds `middleware` from the innermost to the outermost around `transport`. Each layer
  /// wraps what it throws in a ``CourierError`` naming itself as the stage, unless an inner
  /// layer already did.
  static func compose(_ middleware: [any Middleware], around transport: any Transport) -> Handler {
    let observes = transport.observesRequestCancellation
    var handler: Handler = { request in
      do {
        guard let token = RequestCancellation.current else {
          return try await transport.send(request)
        }
        if token.isCancelled { throw CancellationError() }
        if observes { return try await transport.send(request) }
        // A transport that only knows Task cancellation runs in a task the token can cancel.
        let attempt = Task { try await transport.send(request) }
        return try await RequestCancellation.withCancellationHandler {
          try await attempt.value
        } onCancel: {
          attempt.cancel()
        }
      } catch {
        var wrapped = CourierError(error, request: request, stage: "transport")
        wrapped.attempts = max(wrapped.attempts, 1)
        throw wrapped
      }
    }
    for layer in middleware.reversed() {
      let next = Next(handler)
      let stage = "middleware \(type(of: layer))"
      handler = { request in
        do {
          return try await layer.intercept(request, next: next)
        } catch {
          throw CourierError(error, request: request, stage: stage)
        }
      }
    }
    return handler
  }
}
