import Foundation

/// Where a download goes, stored on a request as ``DownloadAttribute``.
///
/// A transport that sees it streams a successful (`2xx`) body into a temporary file in the
/// destination's folder (``DownloadWriter``) instead of memory; ``Client/download(_:to:resume:maximumSize:)``
/// moves that file into place once the whole chain and the pipeline's status check accepted
/// the response.
public struct DownloadDestination: Sendable, Hashable {
  /// The file the body ends up in.
  public var url: URL
  /// Whether a partial file left by an earlier attempt is resumed with `Range`/`If-Range`.
  public var resumes: Bool
  /// The most bytes the file may hold, or `nil` (the default) for no limit: a larger body
  /// fails with ``CourierError/Kind/bodyTooLarge`` — before anything is written when the
  /// response announces its size — and its partial file is deleted. Without it a server that
  /// sends for ever fills the disk until a timeout ends the attempt.
  public var maximumSize: Int64?

  /// Creates a destination.
  public init(url: URL, resumes: Bool = true, maximumSize: Int64? = nil) {
    self.url = url
    self.resumes = resumes
    self.maximumSize = maximumSize.map { max(0, $0) }
  }

  /// The temporary file the body is written to: `.<name>.courier-download` beside the
  /// destination, so the final move is a rename within one file system.
  public var partialURL: URL {
    url.deletingLastPathComponent().appendingPathComponent(
      ".\(url.lastPathComponent).courier-download")
  }

  /// What the partial file was downloaded from, for a resume: the format line, the SHA-256
  /// of the URL it came from (never the URL itself, which may hold a token), and the
  /// validator (`ETag` or `Last-Modified`) for `If-Range`. A partial file from another URL is
  /// never resumed, even when the two answer with the same validator.
  var validatorURL: URL {
    url.deletingLastPathComponent().appendingPathComponent(
      ".\(url.lastPathComponent).courier-download.validator")
  }
}
