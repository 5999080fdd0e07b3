extension Client {
  /// Shuts the client down gracefully: it takes no new requests, lets the ones in flight
  /// finish for up to `gracePeriod`, then cancels the rest, and returns once none is left.
  ///
  /// From the moment it is called:
  ///
  /// - a new request fails at once with kind ``CourierError/Kind/shutDown``, without reaching
  ///   any middleware or the transport;
  /// - a request in flight goes on — retries, backoff waits and the reading of a streamed
  ///   body (``Response/bodyStream``) included — and ends as it would have;
  /// - when `gracePeriod` runs out, every request still in flight is cancelled and fails with
  ///   kind ``CourierError/Kind/shutDown``, whose ``CourierError/debugMessage`` names the
  ///   grace period; a streamed body still being read ends with that error.
  ///
  /// `shutDown` rather than ``CourierError/Kind/cancelled``: code that sees `cancelled`
  /// usually takes it for its own caller having gone away and reports nothing, whereas a
  /// request cut short by the process stopping is a failure its caller may want to log or
  /// answer with a 503. The request was cancelled all the same: its transfer ended and its
  /// connection closed.
  ///
  /// It does not shut the ``transport`` down: a transport may be shared by several clients.
  /// The owner of the transport calls ``Transport/shutdown()`` afterwards to close its
  /// connections and stop its threads:
  ///
  /// ```swift
  /// await client.shutdown(gracePeriod: .seconds(20))
  /// client.transport.shutdown()
  /// ```
  ///
  /// Calling it again, or from several tasks at once, is safe: every call returns once
  /// nothing is in flight, and the first grace period to run out ends the wait for all of
  /// them, so a second call with a shorter period (a second signal, say) cuts the first
  /// short. Cancelling the task that awaits it ends its grace period at once.
  /// The shutdown is final; ``cancelAll()`` is the call that leaves the client usable.
  ///
  /// - Parameter gracePeriod: How long requests in flight may go on; `.zero` cancels them at
  ///   once.
  public func shutdown(gracePeriod: Duration) async {
    await shutdown(gracePeriod: gracePeriod, clock: ContinuousClock())
  }

  /// ``shutdown(gracePeriod:)``, with the grace period measured on `clock`: inject a test
  /// clock so that tests do not wait for it.
  public func shutdown(gracePeriod: Duration, clock: any Clock<Duration>) async {
    let inFlight = self.inFlight
    inFlight.beginShutdown()
    let timer: Task<Void, Never>?
    if gracePeriod > .zero {
      timer = Task {
        do { try await clock.sleep(for: gracePeriod) } catch { return }
        inFlight.endGracePeriod(gracePeriod)
      }
    } else {
      timer = nil
      inFlight.endGracePeriod(.zero)
    }
    await withTaskCancellationHandler {
      await inFlight.waitUntilEmpty()
    } onCancel: {
      inFlight.endGracePeriod(gracePeriod)
    }
    timer?.cancel()
  }

  /// Whether ``shutdown(gracePeriod:)`` has been called: the client takes no new requests.
  public var isShuttingDown: Bool { inFlight.isShuttingDown }
}

extension CourierError {
  /// The error of a request sent after the client's shutdown began.
  static func refusedAtShutdown(_ request: Request) -> CourierError {
    CourierError(
      kind: .shutDown,
      debugMessage: "the client is shutting down (Client.shutdown(gracePeriod:) was called) "
        + "and takes no new requests; this one was not sent",
      request: request, stage: "client")
  }

  /// Makes this the error of a request the shutdown cancelled when `gracePeriod` ran out,
  /// keeping what the request failed with below it in the message.
  mutating func noteShutdown(_ gracePeriod: Duration) {
    let was = debugMessage.isEmpty ? "" : "; \(kind): \(debugMessage)"
    kind = .shutDown
    debugMessage =
      "cancelled by Client.shutdown(gracePeriod:): the grace period of "
      + "\(DescriptionText.duration(gracePeriod)) ran out while the request was in flight\(was)"
  }
}
