import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Substring search over bytes: `memchr` for the first byte, `memcmp` for the rest (Glibc's
/// `memmem` needs `_GNU_SOURCE`, which Swift's module does not define).
///
/// `package` so that `CourierTesting`'s multipart parser searches the same way.
package enum ByteSearch {
  /// Whether `data` holds the UTF-8 bytes of `needle`.
  package static func contains(_ data: Data, _ needle: String) -> Bool {
    data.withUnsafeBytes { firstOffset(of: Array(needle.utf8), in: $0, from: 0) != nil }
  }

  /// Whether `bytes` holds the UTF-8 bytes of `needle`.
  package static func contains(_ bytes: UnsafeRawBufferPointer, _ needle: String) -> Bool {
    firstOffset(of: Array(needle.utf8), in: bytes, from: 0) != nil
  }

  /// The offset of the first occurrence of `needle` in `bytes` at or after `from`.
  package static func firstOffset(
    of needle: [UInt8], in bytes: UnsafeRawBufferPointer, from: Int
  ) -> Int? {
    guard let base = bytes.baseAddress, let first = needle.first,
      bytes.count - from >= needle.count
    else { return nil }
    return needle.withUnsafeBytes { pattern -> Int? in
      guard let patternBase = pattern.baseAddress else { return nil }
      let last = bytes.count - pattern.count
      var offset = from
      while offset <= last {
        guard let found = memchr(base + offset, Int32(first), last - offset + 1) else {
          return nil
        }
        offset = base.distance(to: UnsafeRawPointer(found))
        if memcmp(base + offset, patternBase, pattern.count) == 0 { return offset }
        offset += 1
      }
      return nil
    }
  }
}
