/// The rest of a middleware chain after the current middleware: call it to pass the request on.
///
/// A class so that each layer's `Next` is made once, when the client composes its chain, and
/// passed by reference on every request.
public final class Next: Sendable {
  /// What this link runs.
  private enum Link {
    /// A middleware, the link after it, and the stage name its errors carry.
    case middleware(any Middleware, next: Next, stage: String)
    /// The chain's end: a function that sends the request.
    case end(Chain.Handler)
  }

  private let link: Link

  /// Wraps a function that runs the rest of the chain.
  public convenience init(_ handler: @escaping @Sendable (Request) async throws -> Response) {
    self.init(innermost: handler)
  }

  /// Wraps the chain's own innermost function, which runs on its caller's executor.
  init(innermost handler: @escaping Chain.Handler) {
    link = .end(handler)
  }

  /// `layer` in front of `next`: the chain's own links. A link calls the middleware
  /// directly, without a closure in between, so each layer costs one call.
  init(_ layer: any Middleware, before next: Next, stage: String) {
    link = .middleware(layer, next: next, stage: stage)
  }

  /// Sends `request` through the rest of the chain and returns its response.
  nonisolated(nonsending) public func callAsFunction(_ request: Request) async throws -> Response {
    switch link {
    case .end(let handler):
      return try await handler(request)
    case .middleware(let layer, let next, let stage):
      do {
        return try await layer.intercept(request, next: next)
      } catch {
        // A middleware's own error is not a network failure: unless it says otherwise (a
        // CourierError, a cancellation), it is kind `middleware`.
        throw CourierError(error, request: request, stage: stage, otherwise: .middleware)
      }
    }
  }
}
