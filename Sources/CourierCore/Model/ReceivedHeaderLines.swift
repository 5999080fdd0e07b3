#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A response's header block as a transport received it: each field line without its CR LF,
/// followed by LF (`Name: value\n…`), kept as bytes until someone reads a header.
///
/// A transport that reads header lines from the wire (``HTTPHeaders/init(receivedLines:)``)
/// hands them over like this. Reading one field (``HTTPHeaders/subscript(_:)-(HTTPHeaders.Name)``,
/// ``HTTPHeaders/contains(_:)``) scans the bytes for that name without building every field:
/// `GzipMiddleware` reads `Content-Encoding` on every response, and building the whole list
/// for it cost more than the rest of the middleware together. Any other read builds the list
/// once (``parse(_:)``).
package enum ReceivedHeaderLines {
  /// The fields in `lines`, in order. A line that starts with a space or a tab continues the
  /// previous field's value (obs-fold, RFC 9112 §5.2); a line without a colon is dropped.
  package static func parse(_ lines: [UInt8]) -> [(String, String)] {
    var fields: [(String, String)] = []
    for line in lines.split(separator: 0x0A) {
      if let first = line.first, first == 0x20 || first == 0x09 {
        if let last = fields.popLast() { fields.append((last.0, last.1 + " " + trimmed(line))) }
        continue
      }
      guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
      fields.append(
        (
          String(decoding: line[line.startIndex..<colon], as: UTF8.self),
          trimmed(line[(colon + 1)...])
        ))
    }
    return fields
  }

  /// The first raw value of the field named `name` (compared ignoring case), from after its
  /// colon to the end of its line: `.some(nil)` when no line has that name, `nil` when a
  /// continuation line follows it (only the whole list can join them). The caller applies the
  /// received fields' rules (``HTTPHeaders/init(receivedLines:)``).
  package static func firstValue(named name: String, in lines: [UInt8]) -> String?? {
    lines.withUnsafeBytes { bytes -> String?? in
      guard let base = bytes.baseAddress else { return .some(nil) }
      var start = 0
      while start < bytes.count {
        // memchr: a byte-by-byte loop here was most of the lookup's cost (about 550
        // instructions for nginx's head, callgrind).
        let end =
          memchr(base + start, 0x0A, bytes.count - start)
          .map { base.distance(to: UnsafeRawPointer($0)) } ?? bytes.count
        defer { start = end + 1 }
        let line = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
        guard let valueStart = valueStart(in: line, named: name) else { continue }
        if end + 1 < bytes.count, bytes[end + 1] == 0x20 || bytes[end + 1] == 0x09 { return nil }
        return .some(String(decoding: line[valueStart...], as: UTF8.self))
      }
      return .some(nil)
    }
  }

  /// Where the value starts in `line` (just after the colon) when `line` is a field named
  /// `name`, compared ignoring ASCII case; `nil` for any other line.
  package static func valueStart(in line: UnsafeRawBufferPointer, named name: String) -> Int? {
    let index = name.utf8.count
    guard index < line.count, line[index] == UInt8(ascii: ":"),
      ASCII.equalIgnoringCase(line[..<index], name.utf8)
    else { return nil }
    return index + 1
  }

  private static func trimmed<Bytes: BidirectionalCollection<UInt8>>(_ bytes: Bytes) -> String {
    var slice = bytes[...]
    while let first = slice.first, first == 0x20 || first == 0x09 { slice = slice.dropFirst() }
    while let last = slice.last, last == 0x20 || last == 0x09 { slice = slice.dropLast() }
    return String(decoding: slice, as: UTF8.self)
  }
}
