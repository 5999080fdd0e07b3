/// Which attempt of a logical request this is: 1 for the first, 2 for the first retry, …
///
/// Retrying middleware sets it on each attempt's request; logging and error descriptions read
/// it.
public enum AttemptAttribute: RequestAttributeKey {
  /// The first attempt.
  public static let defaultValue = 1
}
