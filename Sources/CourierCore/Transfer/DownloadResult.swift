import Foundation

/// What ``Client/download(_:to:resume:maximumSize:)`` returns.
public struct DownloadResult: Sendable {
  /// The destination, now holding the whole body.
  public var fileURL: URL
  /// The file's size.
  public var byteCount: Int64
  /// How many bytes came from an earlier, interrupted download (0 when not resumed).
  public var resumedFrom: Int64
  /// The final response (its body is empty: the bytes are in the file).
  public var response: Response
}
