/// How hard the compressor works: zlib's levels, from 0 (store only) to 9 (smallest output).
///
/// ```swift
/// let level = CompressionLevel.fastest
/// let custom = CompressionLevel(4)
/// ```
public struct CompressionLevel: Sendable, Hashable, CustomStringConvertible {
  /// zlib's level, `0...9`.
  public let value: Int

  /// Creates a level; values outside `0...9` are clamped into that range.
  public init(_ value: Int) {
    self.value = min(max(value, 0), 9)
  }

  /// Level 0: the data is stored in deflate blocks without compressing it.
  public static let none = CompressionLevel(0)
  /// Level 1: the fastest compression.
  public static let fastest = CompressionLevel(1)
  /// Level 6: zlib's default, a good balance of speed and size for JSON and text.
  public static let `default` = CompressionLevel(6)
  /// Level 9: the smallest output, several times slower than ``default`` on text.
  public static let best = CompressionLevel(9)

  /// `level 6`.
  public var description: String { "level \(value)" }
}
