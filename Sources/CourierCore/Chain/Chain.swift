/// Composes middleware around a transport into one function, once.
enum Chain {
  typealias Handler = @Sendable (Request) async throws -> Response

  /// Folds `middleware` from the innermost to the outermost around `transport`. Each layer
  /// wraps what it throws in a ``CourierError`` naming itself as the stage, unless an inner
  /// layer already did.
  static func compose(_ middleware: [any Middleware], around transport: any Transport) -> Handler {
    var handler: Handler = { request in
      do {
        // Checked before every attempt, so a retry loop ends once the request is cancelled.
        try Task.checkCancellation()
        return try await transport.send(request)
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
