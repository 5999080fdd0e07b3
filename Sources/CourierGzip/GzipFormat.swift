/// The container around a deflate stream: gzip (RFC 1952), zlib (RFC 1950) or none (raw
/// deflate, RFC 1951).
///
/// HTTP's `Content-Encoding: gzip` is ``gzip``; `Content-Encoding: deflate` is meant to be
/// zlib-wrapped (RFC 9110 §8.4.1.2), but some servers send raw deflate, so ``deflate``
/// accepts either when decompressing.
public struct GzipFormat: Sendable, Hashable, CustomStringConvertible {
  enum Storage: Sendable, Hashable {
    case gzip
    case zlib
    case raw
    case deflate
  }

  let storage: Storage

  /// gzip: a 10-byte header, the deflate stream, then CRC-32 and length. Decompression accepts
  /// several members one after another (RFC 1952 §2.2) and returns them joined.
  public static let gzip = GzipFormat(storage: .gzip)

  /// zlib: a 2-byte header, the deflate stream, then an Adler-32 checksum. This is what
  /// zlib's own `compress2` and `uncompress` produce and read.
  public static let zlib = GzipFormat(storage: .zlib)

  /// Raw deflate with no header and no checksum.
  public static let rawDeflate = GzipFormat(storage: .raw)

  /// HTTP's `deflate` content coding: decompression takes zlib-wrapped data when the first
  /// two bytes are a valid zlib header and raw deflate otherwise; compression writes
  /// zlib-wrapped data, as RFC 9110 asks.
  public static let deflate = GzipFormat(storage: .deflate)

  /// `gzip`, `zlib`, `raw deflate` or `deflate`.
  public var description: String {
    switch storage {
    case .gzip: "gzip"
    case .zlib: "zlib"
    case .raw: "raw deflate"
    case .deflate: "deflate"
    }
  }

  /// zlib's `windowBits` for this format (15 = a 32 KiB window; +16 gzip, negative raw).
  var windowBits: Int32 {
    switch storage {
    case .gzip: 15 + 16
    case .zlib, .deflate: 15
    case .raw: -15
    }
  }
}
