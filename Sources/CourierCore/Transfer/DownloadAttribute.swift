/// Sends the response body to a file instead of memory; `nil` by default.
public enum DownloadAttribute: RequestAttributeKey {
  /// Not a download.
  public static let defaultValue: DownloadDestination? = nil
}
