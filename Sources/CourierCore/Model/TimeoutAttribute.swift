/// The per-attempt timeout a transport should apply. `nil` leaves the transport's own default.
public enum TimeoutAttribute: RequestAttributeKey {
  /// No timeout override by default.
  public static let defaultValue: Duration? = nil
}
