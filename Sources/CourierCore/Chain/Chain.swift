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
