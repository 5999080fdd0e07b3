/// The progress object told about the request body as it is sent; `nil` by default.
public enum UploadProgressAttribute: RequestAttributeKey {
  /// No progress reporting.
  public static let defaultValue: TransferProgress? = nil
}

extension Endpoint {
  /// Reports the request body's progress to `progress` as it is sent.
  public func uploadProgress(_ progress: TransferProgress) -> Self {
    attribute(UploadProgressAttribute.self, progress)
  }
}
