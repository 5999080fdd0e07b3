/// A small strict JSON parser (RFC 8259) over UTF-8 bytes that records the line and column
/// of every key and value. Duplicate keys in one object are an error, because in a spec the
/// second would silently win.
package struct JSONParser {
  private let bytes: [UInt8]
  private var index = 0
  private var line = 1
  private var lineStart = 0
  private var depth = 0

  /// The deepest nesting accepted; a spec is a few levels deep, and recursion must stay bounded.
  package static let maximumDepth = 64

  private init(_ bytes: [UInt8]) {
    self.bytes = bytes
  }

  /// Parses one JSON document.
  ///
  /// - Throws: ``Diagnostic`` at the first character that is not valid JSON.
  package static func parse(_ bytes: [UInt8]) throws(Diagnostic) -> JSONNode {
    var parser = JSONParser(bytes)
    // A UTF-8 byte order mark is tolerated, as editors on some platforms write one.
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
      parser.index = 3
      parser.lineStart = 3
    }
    parser.skipWhitespace()
    let node = try parser.parseValue()
    parser.skipWhitespace()
    if parser.index < bytes.count {
      throw parser.error("invalid JSON: unexpected \(parser.describeCurrent()) after the document")
    }
    return node
  }

  private var location: SourceLocation {
    SourceLocation(line: line, column: index - lineStart + 1)
  }

  private func error(_ message: String) -> Diagnostic {
    Diagnostic(message, at: location)
  }

  private func describeCurrent() -> String {
    guard index < bytes.count else { return "end of file" }
    let byte = bytes[index]
    if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
    return "byte 0x" + String(byte, radix: 16, uppercase: true)
  }

  private mutating func skipWhitespace() {
    while index < bytes.count {
      switch bytes[index] {
      case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
        index += 1
      case UInt8(ascii: "\n"):
        index += 1
        line += 1
        lineStart = index
      default:
        return
      }
    }
  }

  private mutating func parseValue() throws(Diagnostic) -> JSONNode {
    guard index < bytes.count else { throw error("invalid JSON: unexpected end of file") }
    let start = location
    switch bytes[index] {
    case UInt8(ascii: "{"):
      return JSONNode(value: try parseObject(), location: start)
    case UInt8(ascii: "["):
      return JSONNode(value: try parseArray(), location: start)
    case UInt8(ascii: "\""):
      let (text, plain) = try parseString()
      let inside = SourceLocation(line: start.line, column: start.column + 1)
      return JSONNode(value: .string(text), location: start, plainStringStart: plain ? inside : nil)
    case UInt8(ascii: "t"):
      try expectWord("true")
      return JSONNode(value: .bool(true), location: start)
    case UInt8(ascii: "f"):
      try expectWord("false")
      return JSONNode(value: .bool(false), location: start)
    case UInt8(ascii: "n"):
      try expectWord("null")
      return JSONNode(value: .null, location: start)
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      return JSONNode(value: .number(try parseNumber()), location: start)
    default:
      throw error("invalid JSON: expected a value, found \(describeCurrent())")
    }
  }

  private mutating func enter() throws(Diagnostic) {
    depth += 1
    if depth > Self.maximumDepth {
      throw error("invalid JSON: nested deeper than \(Self.maximumDepth) levels")
    }
  }

  private mutating func parseObject() throws(Diagnostic) -> JSONNode.Value {
    try enter()
    defer { depth -= 1 }
    index += 1  // {
    var members: [JSONNode.Member] = []
    var seen: Set<String> = []
    skipWhitespace()
    if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
      index += 1
      return .object([])
    }
    while true {
      skipWhitespace()
      guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
        throw error("invalid JSON: expected a key in quotes, found \(describeCurrent())")
      }
      let keyLocation = location
      let (key, _) = try parseString()
      if !seen.insert(key).inserted {
        throw Diagnostic("duplicate key '\(key)'", at: keyLocation)
      }
      skipWhitespace()
      guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
        throw error("invalid JSON: expected ':' after key '\(key)', found \(describeCurrent())")
      }
      index += 1
      skipWhitespace()
      let value = try parseValue()
      members.append(JSONNode.Member(key: key, keyLocation: keyLocation, value: value))
      skipWhitespace()
      guard index < bytes.count else { throw error("invalid JSON: unexpected end of file") }
      if bytes[index] == UInt8(ascii: ",") {
        index += 1
        continue
      }
      if bytes[index] == UInt8(ascii: "}") {
        index += 1
        return .object(members)
      }
      throw error("invalid JSON: expected ',' or '}' in an object, found \(describeCurrent())")
    }
  }

  private mutating func parseArray() throws(Diagnostic) -> JSONNode.Value {
    try enter()
    defer { depth -= 1 }
    index += 1  // [
    var elements: [JSONNode] = []
    skipWhitespace()
    if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
      index += 1
      return .array([])
    }
    while true {
      skipWhitespace()
      elements.append(try parseValue())
      skipWhitespace()
      guard index < bytes.count else { throw error("invalid JSON: unexpected end of file") }
      if bytes[index] == UInt8(ascii: ",") {
        index += 1
        continue
      }
      if bytes[index] == UInt8(ascii: "]") {
        index += 1
        return .array(elements)
      }
      throw error("invalid JSON: expected ',' or ']' in an array, found \(describeCurrent())")
    }
  }

  private mutating func expectWord(_ word: String) throws(Diagnostic) {
    let utf8 = Array(word.utf8)
    guard bytes.count - index >= utf8.count, Array(bytes[index..<index + utf8.count]) == utf8
    else {
      throw error("invalid JSON: expected a value, found \(describeCurrent())")
    }
    index += utf8.count
  }

  private mutating func parseNumber() throws(Diagnostic) -> String {
    let start = index
    func digits(_ parser: inout JSONParser) -> Int {
      let from = parser.index
      while parser.index < parser.bytes.count,
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(parser.bytes[parser.index])
      {
        parser.index += 1
      }
      return parser.index - from
    }
    if bytes[index] == UInt8(ascii: "-") { index += 1 }
    let integerStart = index
    let integerDigits = digits(&self)
    guard integerDigits > 0 else { throw error("invalid JSON: expected a digit") }
    if integerDigits > 1 && bytes[integerStart] == UInt8(ascii: "0") {
      throw Diagnostic(
        "invalid JSON: a number cannot start with 0",
        at: SourceLocation(line: line, column: integerStart - lineStart + 1))
    }
    if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
      index += 1
      guard digits(&self) > 0 else { throw error("invalid JSON: expected a digit after '.'") }
    }
    if index < bytes.count && (bytes[index] | 0x20) == UInt8(ascii: "e") {
      index += 1
      if index < bytes.count
        && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-"))
      {
        index += 1
      }
      guard digits(&self) > 0 else { throw error("invalid JSON: expected a digit in the exponent") }
    }
    return String(decoding: bytes[start..<index], as: UTF8.self)
  }

  /// Parses a string at the opening quote; also says whether it held no escape.
  private mutating func parseString() throws(Diagnostic) -> (String, plain: Bool) {
    index += 1  // "
    var scalars = String.UnicodeScalarView()
    var plain = true
    var runStart = index
    func flush(_ parser: JSONParser, upTo end: Int, into scalars: inout String.UnicodeScalarView) {
      scalars.append(
        contentsOf: String(decoding: parser.bytes[runStart..<end], as: UTF8.self).unicodeScalars)
    }
    while true {
      guard index < bytes.count else { throw error("invalid JSON: unterminated string") }
      let byte = bytes[index]
      switch byte {
      case UInt8(ascii: "\""):
        flush(self, upTo: index, into: &scalars)
        index += 1
        return (String(scalars), plain)
      case UInt8(ascii: "\\"):
        flush(self, upTo: index, into: &scalars)
        plain = false
        index += 1
        guard index < bytes.count else { throw error("invalid JSON: unterminated string") }
        let escape = bytes[index]
        index += 1
        switch escape {
        case UInt8(ascii: "\""): scalars.append("\"")
        case UInt8(ascii: "\\"): scalars.append("\\")
        case UInt8(ascii: "/"): scalars.append("/")
        case UInt8(ascii: "b"): scalars.append("\u{8}")
        case UInt8(ascii: "f"): scalars.append("\u{C}")
        case UInt8(ascii: "n"): scalars.append("\n")
        case UInt8(ascii: "r"): scalars.append("\r")
        case UInt8(ascii: "t"): scalars.append("\t")
        case UInt8(ascii: "u"):
          scalars.append(try parseUnicodeEscape())
        default:
          index -= 1
          throw error("invalid JSON: unknown escape '\\\(describeCurrent())'")
        }
        runStart = index
      case 0x00..<0x20:
        throw error("invalid JSON: control character in a string (escape it)")
      case 0x80...:
        try validateUTF8Sequence()
      default:
        index += 1
      }
    }
  }

  /// Reads the four hex digits after `\u` (and a low surrogate's escape after a high one).
  private mutating func parseUnicodeEscape() throws(Diagnostic) -> Unicode.Scalar {
    let high = try readHex4()
    if (0xD800..<0xDC00).contains(high) {
      guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"),
        bytes[index + 1] == UInt8(ascii: "u")
      else { throw error("invalid JSON: unpaired surrogate escape") }
      index += 2
      let low = try readHex4()
      guard (0xDC00..<0xE000).contains(low),
        let scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
      else { throw error("invalid JSON: unpaired surrogate escape") }
      return scalar
    }
    guard let scalar = Unicode.Scalar(high) else {
      throw error("invalid JSON: unpaired surrogate escape")
    }
    return scalar
  }

  private mutating func readHex4() throws(Diagnostic) -> UInt32 {
    var value: UInt32 = 0
    for _ in 0..<4 {
      guard index < bytes.count, let digit = Self.hexValue(bytes[index]) else {
        throw error("invalid JSON: expected four hex digits after \\u")
      }
      value = value << 4 | digit
      index += 1
    }
    return value
  }

  private static func hexValue(_ byte: UInt8) -> UInt32? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
    case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
    case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
    default: nil
    }
  }

  /// Checks one multi-byte UTF-8 sequence at `index` and moves past it.
  private mutating func validateUTF8Sequence() throws(Diagnostic) {
    let lead = bytes[index]
    let length: Int
    let minimum: UInt32
    switch lead {
    case 0xC2...0xDF: (length, minimum) = (2, 0x80)
    case 0xE0...0xEF: (length, minimum) = (3, 0x800)
    case 0xF0...0xF4: (length, minimum) = (4, 0x10000)
    default: throw error("invalid UTF-8 in a string")
    }
    guard bytes.count - index >= length else { throw error("invalid UTF-8 in a string") }
    var scalar = UInt32(lead) & (0xFF >> (length + 1))
    for offset in 1..<length {
      let byte = bytes[index + offset]
      guard byte & 0xC0 == 0x80 else { throw error("invalid UTF-8 in a string") }
      scalar = scalar << 6 | UInt32(byte & 0x3F)
    }
    guard scalar >= minimum, scalar <= 0x10FFFF, !(0xD800..<0xE000).contains(scalar) else {
      throw error("invalid UTF-8 in a string")
    }
    index += length
  }
}
