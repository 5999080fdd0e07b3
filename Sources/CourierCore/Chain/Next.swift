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
