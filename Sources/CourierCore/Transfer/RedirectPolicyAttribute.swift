/// A request's own ``RedirectPolicy``; `nil` (the default) uses the transport's.
public enum RedirectPolicyAttribute: RequestAttributeKey {
  /// No override.
  public static let defaultValue: RedirectPolicy? = nil
}

extension Endpoint {
  /// Uses `policy` for this endpoint's redirects instead of the transport's.
  public func redirects(_ policy: RedirectPolicy) -> Self {
    attribute(RedirectPolicyAttribute.self, policy)
  }
}
