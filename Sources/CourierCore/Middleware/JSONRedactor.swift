import Foundation

/// Hides the values of listed member names in JSON text at any depth, keeping everything
/// else as written. Works token by token, so malformed or truncated JSON is redacted too.
enum JSONRedactor {
  static func redact(_ text: String, keys: Set<String>) -> String {
    guard !keys.isEmpty else { return text }
    let bytes = Array(text.utf8)
    var output = [UInt8]()
    output.reserveCapacity(bytes.count)
    var index = 0
    while index < bytes.count {
      guard bytes[index] == UInt8(ascii: "\"") else {
        output.append(bytes[index])
        index += 1
        continue
      }
      let end = stringEnd(bytes, from: index)
      output.append(contentsOf: bytes[index..<end])
      var cursor = skipSpace(bytes, from: end)
      guard cursor < bytes.count, bytes[cursor] == UInt8(ascii: ":"),
        keys.contains(key(bytes[index..<end]).lowercased())
      else {
        index = end
        continue
      }
      let colon = cursor
      cursor = skipSpace(bytes, from: colon + 1)
      output.append(contentsOf: bytes[end..<cursor])  // the spaces, ':' and spaces
      output.append(contentsOf: Array("\"\(Redaction.marker)\"".utf8))
      index = valueEnd(bytes, from: cursor)
    }
    return String(decoding: output, as: UTF8.self)
  }

  /// The index after the string that starts at `start` (or the end of the text).
  private static func stringEnd(_ bytes: [UInt8], from start: Int) -> Int {
    var index = start + 1
    while index < bytes.count {
      switch bytes[index] {
      case UInt8(ascii: "\\"): index += 2
      case UInt8(ascii: "\""): return index + 1
      default: index += 1
      }
    }
    return bytes.count
  }

  private static func skipSpace(_ bytes: [UInt8], from start: Int) -> Int {
    var index = start
    while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    return index
  }

  /// The index after the value that starts at `start`: a string, a balanced object or
  /// array, or a number or literal.
  private static func valueEnd(_ bytes: [UInt8], from start: Int) -> Int {
    guard start < bytes.count else { return bytes.count }
    switch bytes[start] {
    case UInt8(ascii: "\""):
      return stringEnd(bytes, from: start)
    case UInt8(ascii: "{"), UInt8(ascii: "["):
      var depth = 0
      var index = start
      while index < bytes.count {
        switch bytes[index] {
        case UInt8(ascii: "\""):
          index = stringEnd(bytes, from: index)
          continue
        case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
          depth -= 1
          if depth == 0 { return index + 1 }
        default: break
        }
        index += 1
      }
      return bytes.count
    default:
      var index = start
      while index < bytes.count,
        ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D]
          .contains(bytes[index])
      {
        index += 1
      }
      return index
    }
  }

  /// The member name a string token spells, with escapes resolved when it has any.
  private static func key(_ token: ArraySlice<UInt8>) -> String {
    let inner = token.dropFirst().dropLast(token.last == UInt8(ascii: "\"") ? 1 : 0)
    if !inner.contains(UInt8(ascii: "\\")) { return String(decoding: inner, as: UTF8.self) }
    return (try? JSONDecoder().decode(String.self, from: Data(token)))
      ?? String(decoding: inner, as: UTF8.self)
  }
}
