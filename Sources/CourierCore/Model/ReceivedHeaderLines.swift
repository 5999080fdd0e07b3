/// A response's header block as a transport that reads header lines from the wire collects
/// it: each field line without its CR LF, followed by LF (`Name: value\n…`).
/// ``HTTPHeaders/init(receivedLines:)`` turns it into headers.
package enum ReceivedHeaderLines {
  /// The fields in `lines`, in order. A line that starts with a space or a tab continues the
  /// previous field's value (obs-fold, RFC 9112 §5.2); a line without a colon is dropped.
  package static func parse(_ lines: [UInt8]) -> [(String, String)] {
    var fields: [(String, String)] = []
    for line in lines.split(separator: 0x0A) {
      if let first = line.first, ASCII.isOptionalWhitespace(first) {
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
    while let first = slice.first, ASCII.isOptionalWhitespace(first) { slice = slice.dropFirst() }
    while let last = slice.last, ASCII.isOptionalWhitespace(last) { slice = slice.dropLast() }
    return String(decoding: slice, as: UTF8.self)
  }
}
