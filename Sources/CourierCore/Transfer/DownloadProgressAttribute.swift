/// The progress object told about the response body as it arrives; `nil` by default.
public enum DownloadProgressAttribute: RequestAttributeKey {
  /// No progress reporting.
  public static let defaultValue: TransferProgress? = nil
}

extension Endpoint {
  /// Reports the response body's progress to `progress` as it arrives.
  public func downloadProgress(_ progress: TransferProgress) -> Self {
    attribute(DownloadProgressAttribute.self, progress)
  }
}
