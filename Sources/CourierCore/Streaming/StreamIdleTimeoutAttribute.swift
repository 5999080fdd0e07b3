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
