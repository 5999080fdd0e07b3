/// The version of this Courier source tree, as sent in the default `User-Agent`.
public enum CourierVersion {
  /// `major.minor.patch`.
  public static let current = "0.4.0"
}
