/// The rest of a middleware chain after the current middleware: call it to pass the request on.
///
/// A class so that each layer's `Next` is made once, when the client composes its chain, and
/// passed by reference on every request.
public final class Next: Sendable {
  /// What calling this runs.
  private enum Step: Sendable {
    /// A function (the transport's end of the chain, or one a test gives).
    case handler(@Sendable (Request) async throws -> Response)
    /// A middleware, with what runs after it and the stage name its errors carry.
    case layer(any Middleware, next: Next, stage: String)
  }

  private let step: Step

  /// Wraps a function that runs the rest of the chain.
  public init(_ handler: @escaping @Sendable (Request) async throws -> Response) {
    step = .handler(handler)
  }

  /// `layer` in front of `next`: the chain's own links. A link calls the middleware
  /// directly, without a closure in between, so each layer costs one call.
  init(_ layer: any Middleware, before next: Next, stage: String) {
    step = .layer(layer, next: next, stage: stage)
  }

  /// Sends `request` through the rest of the chain and returns its response.
  public func callAsFunction(_ request: Request) async throws -> Response {
    switch step {
    case .handler(let handler):
      return try await handler(request)
    case .layer(let layer, let next, let stage):
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
