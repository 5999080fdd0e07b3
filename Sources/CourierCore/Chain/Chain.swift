/// Composes middleware around a transport into a chain of ``Next`` links, once.
enum Chain {
  /// The chain's functions run on their caller's executor (`nonisolated(nonsending)`), as
  /// ``Middleware/intercept(_:next:)`` and ``Next/callAsFunction(_:)`` do: a plain
  /// `nonisolated` async function hops to the global executor when it starts, a
  /// `swift_task_switch` per layer per request, which costs more than most middleware's own
  /// work. ``Client`` hops off the caller's actor once, when a request starts.
  typealias Handler = nonisolated(nonsending) @Sendable (Request) async throws -> Response

  /// Folds `middleware` from the innermost to the outermost around `transport`. Each layer
  /// wraps what it throws in a ``CourierError`` naming itself as the stage, unless an inner
  /// layer already did. The innermost layer refuses any URL scheme but `http` and `https`
  /// before the transport sees the request.
  static func compose(_ middleware: [any Middleware], around transport: any Transport) -> Next {
    let observes = transport.observesRequestCancellation
    let handler: Handler = { request in
      do {
        try URLBuilder.checkScheme(of: request.url)
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
          // Not `attempt.cancel()` here: that runs the transport's cancellation handlers on
          // this thread, for a timeout the process's timer thread, and a handler that waits
          // (`URLSessionTask.cancel()` waits for URLSession's queue on Linux) would make every
          // other timeout in the process late by as long.
          Task.detached { attempt.cancel() }
        }
      } catch {
        var wrapped = CourierError(error, request: request, stage: "transport")
        wrapped.attempts = max(wrapped.attempts, 1)
        throw wrapped
      }
    }
    var next = Next(innermost: handler)
    for layer in middleware.reversed() {
      next = Next(layer, before: next, stage: "middleware \(type(of: layer))")
    }
    return next
  }
}
