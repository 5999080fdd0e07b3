/// Marks a request whose method is not idempotent (`POST`, `PATCH`) as safe to retry; set it
/// with `Endpoint.retryable()`. A request with an `Idempotency-Key` header is retryable too.
public enum RetryableAttribute: RequestAttributeKey {
  /// Not marked.
  public static let defaultValue = false
}
