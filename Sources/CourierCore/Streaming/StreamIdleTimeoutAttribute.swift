/// The longest a streamed body (``ResponseStreamAttribute``) may go without a byte once its
/// head has arrived, while its reader is waiting for more; `nil` (the default) for no limit.
/// Past it, the read fails with ``CourierError/Kind/timedOut``, naming the idle timeout.
///
/// The time the transport waits on a slow reader (its buffer full, the transfer paused) does
/// not count: only the server's silence does. For a streamed request, ``Request/timeout``
/// covers the wait for the head, not the body, and an overall deadline
/// (``DeadlineAttribute``) covers the whole transfer.
public enum StreamIdleTimeoutAttribute: RequestAttributeKey {
  /// No idle limit.
  public static let defaultValue: Duration? = nil
}

extension Endpoint {
  /// Fails a streamed body (`Client.stream`, `Client.events`) whose server sends nothing for
  /// `duration` once the head has arrived; see ``StreamIdleTimeoutAttribute``.
  public func streamIdleTimeout(_ duration: Duration) -> Self {
    attribute(StreamIdleTimeoutAttribute.self, duration)
  }
}

extension CourierError {
  /// A streamed body whose server sent nothing for its idle timeout
  /// (``StreamIdleTimeoutAttribute``): what every transport throws from the body's iterator.
  package static func streamIdle(_ idle: Duration, request: Request) -> CourierError {
    CourierError(
      kind: .timedOut,
      debugMessage: "the streamed body received no byte for its idle timeout (\(idle), "
        + "StreamIdleTimeoutAttribute); the transfer was ended",
      request: request, attempts: 1, stage: "transport")
  }

  /// A streamed body still arriving when the request's overall deadline
  /// (``DeadlineAttribute``) passed.
  package static func streamDeadlinePassed(request: Request) -> CourierError {
    CourierError(
      kind: .timedOut,
      debugMessage: "the request's overall deadline passed while its streamed body was read; "
        + "the transfer was ended",
      request: request, attempts: 1, stage: "transport")
  }
}
