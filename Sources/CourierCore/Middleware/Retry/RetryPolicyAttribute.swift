/// A per-endpoint or per-request retry policy that replaces the middleware's; set it with
/// `Endpoint.retry(_:)` (``RetryPolicy/disabled`` turns retrying off for that endpoint).
public enum RetryPolicyAttribute: RequestAttributeKey {
  /// No override.
  public static let defaultValue: RetryPolicy? = nil
}
