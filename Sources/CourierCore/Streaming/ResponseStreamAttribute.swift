/// Asks the transport for a `2xx` response body as a ``ResponseBodyStream``
/// (``Response/bodyStream``) instead of ``Response/body``, buffering at most this many bytes
/// ahead of the reader; `nil` (the default) for a body in memory. `Client.stream` sets
/// it; a transport that cannot stream ignores it and the client wraps the whole body.
///
/// Other statuses keep their body in memory, within the transport's body limit, so that the
/// response pipeline can read an error's message from it.
public enum ResponseStreamAttribute: RequestAttributeKey {
  /// Not streamed.
  public static let defaultValue: Int? = nil
}
