/// The rest of a middleware chain after the current middleware: call it to pass the request on.
///
/// A class so that each layer's `Next` is made once, when the client composes its chain, and
/// passed by reference on every request.
public final class Next: Sendable {
  /// The middleware this link runs; ``ChainEnd`` at the chain's end (or a function a test
  /// gives), the link without a ``following`` one.
  ///
  /// A plain `let` of a non-optional existential, called in place: binding an optional one
  /// (`guard let layer`) copied the middleware out of this object on every request — a
  /// retain and release of its box or of each reference it holds, on objects every request
  /// of the client shares, so the count bounced between the cores — and matching an enum of
  /// the two kinds of link copied the payload too.
  private let layer: any Middleware
  /// What runs after ``layer``; `nil` at the chain's end, where ``handler`` runs instead.
  private let following: Next?
  /// The stage name the errors of ``layer`` carry.
  private let stage: String
  /// The function the chain's end runs; for a middleware's link, one that is never called.
  /// Not an optional: a closure stored in an `Optional` is kept at the most general
  /// abstraction, and calling it back out went through a reabstraction thunk that allocated
  /// once per request (`courier-bench chain`).
  private let handler: Chain.Handler

  /// Wraps a function that runs the rest of the chain.
  public convenience init(_ handler: @escaping @Sendable (Request) async throws -> Response) {
    self.init(innermost: handler)
  }

  /// Wraps the chain's own innermost function, which runs on its caller's executor.
  init(innermost handler: @escaping Chain.Handler) {
    layer = ChainEnd()
    following = nil
    stage = ""
    self.handler = handler
  }

  /// `layer` in front of `next`: the chain's own links. A link calls the middleware
  /// directly, without a closure in between, so each layer costs one call.
  init(_ layer: any Middleware, before next: Next, stage: String) {
    self.layer = layer
    following = next
    self.stage = stage
    handler = Next.neverCalled
  }

  /// The handler of a middleware's link, which calls its middleware instead.
  private static let neverCalled: Chain.Handler = { request in
    throw CourierError(kind: .invalidRequest, debugMessage: "unreachable", request: request)
  }

  /// Sends `request` through the rest of the chain and returns its response.
  nonisolated(nonsending) public func callAsFunction(_ request: Request) async throws -> Response {
    if following == nil {
      // The chain's end (`init(innermost:)`).
      return try await handler(request)
    }
    do {
      // Safe: a link with a middleware is made only by `init(_:before:stage:)`, with a next.
      return try await layer.intercept(request, next: following.unsafelyUnwrapped)
    } catch {
      // A middleware's own error is not a network failure: unless it says otherwise (a
      // CourierError, a cancellation), it is kind `middleware`.
      throw CourierError(error, request: request, stage: stage, otherwise: .middleware)
    }
  }
}

/// The placeholder middleware of a chain's last link, which runs its handler instead.
private struct ChainEnd: Middleware {
  nonisolated(nonsending) func intercept(_ request: Request, next: Next) async throws -> Response {
    throw CourierError(kind: .invalidRequest, debugMessage: "unreachable", request: request)
  }
}
