/// Whether and how ``GzipMiddleware`` compresses request bodies.
///
/// Off by default, because many servers reject a compressed request body (`415`) or read it
/// as garbage: turn it on for a client whose server accepts `Content-Encoding: gzip`, or per
/// endpoint with `Endpoint.compressRequestBody()`. Either way only in-memory bodies of at
/// least ``threshold`` bytes are compressed (below ~1 KiB the gzip header and the CPU cost
/// outweigh the bytes saved). File bodies and bodies read from a sequence (`RequestBody.stream`)
/// go out as they are: their size is not known up front to weigh against the threshold, and a
/// sequence's bytes are made once, for the transport.
///
/// ```swift
/// let everyRequest = GzipMiddleware(requestCompression: .enabled())
/// let bigOnly = GzipMiddleware(requestCompression: .enabled(threshold: 64 * 1024, level: .fastest))
/// ```
public struct RequestCompression: Sendable, Hashable, CustomStringConvertible {
  /// Whether requests are compressed unless their endpoint opts out.
  public var isEnabled: Bool
  /// The smallest body, in bytes, that is compressed.
  public var threshold: Int
  /// The compression level.
  public var level: CompressionLevel

  /// Creates a setting.
  ///
  /// - Parameters:
  ///   - isEnabled: Compress every request unless its endpoint opts out; when `false` only
  ///     endpoints that opt in are compressed.
  ///   - threshold: The smallest body compressed, in bytes; default 1 KiB
  ///     (``defaultThreshold``).
  ///   - level: The compression level; default ``CompressionLevel/default`` (6).
  public init(
    isEnabled: Bool, threshold: Int = RequestCompression.defaultThreshold,
    level: CompressionLevel = .default
  ) {
    self.isEnabled = isEnabled
    self.threshold = max(threshold, 0)
    self.level = level
  }

  /// 1 KiB (1,024 bytes): smaller bodies gain little (gzip adds 18 bytes of framing) and
  /// often fit in one packet anyway.
  public static let defaultThreshold = 1024

  /// The default: no request is compressed unless its endpoint opts in with
  /// `Endpoint.compressRequestBody()`; those are compressed from 1 KiB at level 6.
  public static let disabled = RequestCompression(isEnabled: false)

  /// Every request body of at least `threshold` bytes is compressed, unless its endpoint opts
  /// out with `Endpoint.compressRequestBody(false)`.
  public static func enabled(
    threshold: Int = RequestCompression.defaultThreshold, level: CompressionLevel = .default
  ) -> RequestCompression {
    RequestCompression(isEnabled: true, threshold: threshold, level: level)
  }

  /// `on (≥ 1 KiB)` or `off (≥ 1 KiB when on)`.
  public var description: String {
    let size = "≥ \(ByteCount.describe(threshold))"
    return isEnabled ? "on (\(size))" : "off (\(size) when on)"
  }
}
