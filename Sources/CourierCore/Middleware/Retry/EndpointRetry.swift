extension Endpoint {
  /// Uses `policy` for this endpoint instead of the ``RetryMiddleware``'s;
  /// ``RetryPolicy/disabled`` turns retrying off.
  public func retry(_ policy: RetryPolicy) -> Self {
    attribute(RetryPolicyAttribute.self, policy)
  }

  /// Marks the request as safe to send twice although its method is not idempotent (a
  /// `POST` the server deduplicates). Prefer an `Idempotency-Key` header where the server
  /// supports one.
  public func retryable() -> Self {
    attribute(RetryableAttribute.self, true)
  }
}
