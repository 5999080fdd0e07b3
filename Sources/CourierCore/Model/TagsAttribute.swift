/// Free-form labels for a request (for logging, metrics, or selecting requests in tests).
public enum TagsAttribute: RequestAttributeKey {
  /// No tags by default.
  public static let defaultValue: Set<String> = []
}
