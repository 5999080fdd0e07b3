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
  /// before the transport sees the request. With `observed`, the innermost layer reports each
  /// attempt to the request's ``ObservationAttribute`` (see ``observingAttempts(_:)``).
  static func compose(
    _ middleware: [any Middleware], around transport: any Transport, observed: Bool = false
  ) -> Next {
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
    var next = Next(innermost: observed ? observingAttempts(handler) : handler)
    for layer in middleware.reversed() {
      next = Next(layer, before: next, stage: "middleware \(type(of: layer))")
    }
    return next
  }

  /// `handler`, reporting each attempt it sends to the request's observation: a separate
  /// layer that only a client with observers or a tracer composes.
  private static func observingAttempts(_ handler: @escaping Handler) -> Handler {
    { request in
      guard let observation = request.attributes[ObservationAttribute.self] else {
        return try await handler(request)
      }
      var request = request
      let (attempt, span) = observation.attemptStarted(&request)
      do {
        let response = try await handler(request)
        observation.attemptEnded(attempt, span: span, result: .success(response))
        return response
      } catch {
        var failure = error as? CourierError ?? CourierError(error, request: request)
        if failure.kind == .cancelled, !Task.isCancelled,
          RequestCancellation.current?.isCancelledApartFromParent == true
        {
          // The attempt's own token fired, not the request's: a limit ended it, and the
          // timeout middleware reports it as timed out; so does the attempt's event.
          failure.kind = .timedOut
        }
        observation.attemptEnded(attempt, span: span, result: .failure(failure))
        throw failure
      }
    }
  }
}
