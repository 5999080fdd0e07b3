/// Whether and within which limit ``GzipMiddleware`` decodes gzip and deflate responses.
///
/// In the style of async-http-client's `.enabled(limit: .ratio(25))`.
///
/// ```swift
/// let relaxed = GzipMiddleware(responseDecompression: .enabled(limit: .size(128 * 1024 * 1024)))
/// ```
public struct ResponseDecompression: Sendable, Hashable, CustomStringConvertible {
  /// Whether responses are decoded.
  public var isEnabled: Bool
  /// The bounds on a decoded body.
  public var limit: DecompressionLimit

  /// Creates a setting.
  public init(isEnabled: Bool, limit: DecompressionLimit = .standard) {
    self.isEnabled = isEnabled
    self.limit = limit
  }

  /// Decode responses within `limit`; default ``DecompressionLimit/standard`` (32 MiB, 100×
  /// past 1 MiB).
  public static func enabled(limit: DecompressionLimit = .standard) -> ResponseDecompression {
    ResponseDecompression(isEnabled: true, limit: limit)
  }

  /// The default: decode within ``DecompressionLimit/standard``.
  public static let standard = ResponseDecompression.enabled()

  /// Leave responses as the transport delivered them, headers included.
  public static let disabled = ResponseDecompression(isEnabled: false)

  /// `gzip, deflate; limit 32 MiB, ratio 100×` or `off`.
  public var description: String {
    isEnabled ? "gzip, deflate; \(limit)" : "off"
  }
}
