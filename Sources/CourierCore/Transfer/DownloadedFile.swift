import Foundation

/// A body a transport wrote to disk, on ``Response/downloadedFile``.
public struct DownloadedFile: Sendable, Hashable {
  /// The complete temporary file (``DownloadDestination/partialURL``).
  public var url: URL
  /// The file's size.
  public var byteCount: Int64
  /// How many bytes were already on disk from an earlier attempt (0 when not resumed).
  public var resumedFrom: Int64

  /// Creates a description of a downloaded file.
  public init(url: URL, byteCount: Int64, resumedFrom: Int64) {
    self.url = url
    self.byteCount = byteCount
    self.resumedFrom = resumedFrom
  }
}
