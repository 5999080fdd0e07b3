/// The largest response body a transport keeps in memory, in bytes; `nil` (the default)
/// leaves the transport's own limit, which for ``URLSessionTransport`` is
/// ``ResponsePipeline/defaultMaximumDecodedBodySize`` (32 MiB).
///
/// The transport counts bytes as they arrive, after any decoding it applies itself
/// (URLSession on Linux decodes gzip), and stops receiving as soon as the count passes the
/// limit, failing with ``CourierError/Kind/bodyTooLarge``. A download to a file is not held
/// in memory and is not limited by it.
public enum ResponseBodyLimitAttribute: RequestAttributeKey {
  /// No override.
  public static let defaultValue: Int? = nil
}

extension Endpoint {
  /// Keeps at most `bytes` of response body in memory instead of the transport's limit;
  /// more fails with ``CourierError/Kind/bodyTooLarge`` as soon as it arrives. A negative
  /// value counts as 0: no body is accepted.
  public func maximumResponseBodySize(_ bytes: Int) -> Self {
    attribute(ResponseBodyLimitAttribute.self, max(0, bytes))
  }
}

extension CourierError {
  /// The error a transport throws when a response body passes `limit` bytes.
  public static func bodyTooLarge(
    limit: Int, request: Request, response: Response? = nil
  )
    -> CourierError
  {
    CourierError(
      kind: .bodyTooLarge,
      debugMessage: "the response body passed the limit of \(limit) bytes; receiving stopped",
      request: request, response: response, attempts: 1, stage: "transport")
  }
}
