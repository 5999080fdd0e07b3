/// A position in JSON bytes, and the lexing both of Courier's JSON readers share: white
/// space, strings (UTF-8 and escapes checked), literals and numbers.
///
/// ``JSONScanner`` finds the envelope's members with it and ``FastJSONDocument`` builds its
/// node list on it, so the two accept exactly the same tokens: RFC 8259's, with strings that
/// are well-formed UTF-8 (no overlongs, no encoded surrogates, nothing above U+10FFFF) and
/// whose `\u` escapes pair every surrogate, as Foundation's parser requires. What each reader
/// does with containers (depth, trailing commas, what it records) is its own.
struct JSONCursor {
  /// Why a scan failed, for developer messages.
  struct Failure: Error, CustomStringConvertible {
    let message: String
    let offset: Int
    var description: String { "\(message) at byte \(offset)" }
  }

  /// What a string's bytes hold, learnt while skipping it.
  struct StringShape {
    /// No byte of the string is above 0x7F.
    var isASCII = true
    /// The string holds at least one `\` escape.
    var hasEscapes = false
    /// Plain ASCII without escapes: the bytes are the text, and compare byte by byte.
    var isPlain: Bool { isASCII && !hasEscapes }
  }

  let bytes: UnsafeBufferPointer<UInt8>
  var offset = 0

  var atEnd: Bool { offset >= bytes.count }

  func peek() -> UInt8? { offset < bytes.count ? bytes[offset] : nil }

  func failure(_ message: String) -> Failure {
    Failure(
      message: atEnd && message.hasPrefix("expected")
        ? "truncated JSON: " + message
        : message, offset: offset)
  }

  mutating func skipWhitespace() {
    while offset < bytes.count {
      switch bytes[offset] {
      case 0x20, 0x09, 0x0A, 0x0D: offset += 1
      default: return
      }
    }
  }

  /// Skips a string at `"`, checking its UTF-8 and escapes, and ends after the closing quote.
  mutating func skipString() throws -> StringShape {
    offset += 1
    var shape = StringShape()
    while true {
      skipPlainCharacters()
      guard offset < bytes.count else { throw failure("expected the end of a string") }
      let byte = bytes[offset]
      if byte == UInt8(ascii: "\"") {
        offset += 1
        return shape
      }
      if byte >= 0x80 {
        let length = multiByteLength(at: offset)
        guard length > 0 else { throw failure("invalid UTF-8 in a string") }
        shape.isASCII = false
        offset += length
      } else if byte == UInt8(ascii: "\\") {
        shape.hasEscapes = true
        try skipEscape()
      } else {
        throw failure("control character in a string")
      }
    }
  }

  /// Whether `byte` needs a look inside a string: a control character, `"`, `\`, or not
  /// ASCII.
  @inline(__always)
  static func isSpecialInString(_ byte: UInt8) -> Bool {
    byte &- 0x20 >= 0x60 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
  }

  /// Skips printable ASCII other than `"` and `\`, the bytes of almost every string: eight
  /// bytes at a time while none of them is special, then byte by byte, on locals so that the
  /// index stays in a register.
  @inline(__always)
  mutating func skipPlainCharacters() {
    var index = offset
    let end = bytes.count
    // Text that is not ASCII stops here at once, without trying a word.
    guard index < end, !Self.isSpecialInString(bytes[index]) else { return }
    if let base = bytes.baseAddress {
      let ones: UInt64 = 0x0101_0101_0101_0101
      let high: UInt64 = 0x8080_8080_8080_8080
      while end - index >= 8 {
        let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
        let quote = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let backslash = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        // A byte below 0x20 (x - n borrows into a clear high bit), a `"` or `\` (a zero byte
        // after the XOR), or a byte with its high bit set: the word holds a special byte.
        // False positives only send the word to the byte loop.
        let control = (word &- ones &* 0x20) & ~word
        let zeroQuote = (quote &- ones) & ~quote
        let zeroBackslash = (backslash &- ones) & ~backslash
        if (control | zeroQuote | zeroBackslash | word) & high != 0 { break }
        index += 8
      }
    }
    while index < end, !Self.isSpecialInString(bytes[index]) { index += 1 }
    offset = index
  }

  /// The length of the well-formed UTF-8 sequence of two to four bytes at `index`, or 0
  /// (Unicode Table 3-7): no overlong forms, no encoded surrogates, nothing above U+10FFFF.
  @inline(__always)
  func multiByteLength(at index: Int) -> Int {
    let lead = bytes[index]
    let remaining = bytes.count - index
    let isContinuation = { (offset: Int) in self.bytes[index + offset] & 0xC0 == 0x80 }
    if lead &- 0xC2 < 0x1E {  // C2...DF
      return remaining >= 2 && isContinuation(1) ? 2 : 0
    }
    if lead & 0xF0 == 0xE0 {  // E0...EF
      guard remaining >= 3, isContinuation(1), isContinuation(2) else { return 0 }
      let second = bytes[index + 1]
      if lead == 0xE0 && second < 0xA0 { return 0 }  // overlong
      if lead == 0xED && second > 0x9F { return 0 }  // a surrogate
      return 3
    }
    if lead &- 0xF0 < 5 {  // F0...F4
      guard remaining >= 4, isContinuation(1), isContinuation(2), isContinuation(3) else {
        return 0
      }
      let second = bytes[index + 1]
      if lead == 0xF0 && second < 0x90 { return 0 }  // overlong
      if lead == 0xF4 && second > 0x8F { return 0 }  // above U+10FFFF
      return 4
    }
    return 0
  }

  /// Skips an escape at `\`; a `\u` high surrogate must be followed by a `\u` low surrogate,
  /// and a low surrogate must not stand alone, as in Foundation.
  mutating func skipEscape() throws {
    guard offset + 1 < bytes.count else { throw failure("expected an escape") }
    switch bytes[offset + 1] {
    case UInt8(ascii: "u"):
      guard let unit = Self.codeUnit(in: bytes, at: offset) else {
        throw failure("bad \\u escape")
      }
      switch unit {
      case 0xD800...0xDBFF:
        guard let low = Self.codeUnit(in: bytes, at: offset + 6),
          (0xDC00...0xDFFF).contains(low)
        else { throw failure("unpaired surrogate in a \\u escape") }
        offset += 12
      case 0xDC00...0xDFFF:
        throw failure("unpaired surrogate in a \\u escape")
      default:
        offset += 6
      }
    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
      UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
      offset += 2
    default:
      throw failure("bad escape")
    }
  }

  /// The code unit of a `\uXXXX` escape whose backslash is at `start`, or `nil` when the
  /// bytes there are not one.
  static func codeUnit(in bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> UInt16? {
    guard start + 5 < bytes.count, bytes[start] == UInt8(ascii: "\\"),
      bytes[start + 1] == UInt8(ascii: "u")
    else { return nil }
    var unit: UInt16 = 0
    for index in (start + 2)...(start + 5) {
      guard let digit = ASCII.hexValue(bytes[index]) else { return nil }
      unit = unit << 4 | UInt16(digit)
    }
    return unit
  }

  mutating func skipLiteral(_ literal: StaticString) throws {
    let count = literal.utf8CodeUnitCount
    guard offset + count <= bytes.count else { throw failure("expected \(literal)") }
    let expected = UnsafeBufferPointer(start: literal.utf8Start, count: count)
    for index in 0..<count where bytes[offset + index] != expected[index] {
      throw failure("expected \(literal)")
    }
    offset += count
  }

  /// Skips a number and returns whether it is written as an integer (no fraction, no
  /// exponent).
  @discardableResult
  mutating func skipNumber() throws -> Bool {
    let start = offset
    var isInteger = true
    if peek() == UInt8(ascii: "-") { offset += 1 }
    guard let first = peek(), ASCII.isDigit(first) else { throw failure("expected a digit") }
    offset += 1
    if first != UInt8(ascii: "0") { skipDigits() }
    if peek() == UInt8(ascii: ".") {
      isInteger = false
      offset += 1
      guard peek().map(ASCII.isDigit) == true else { throw failure("expected a digit after '.'") }
      skipDigits()
    }
    if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
      isInteger = false
      offset += 1
      if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { offset += 1 }
      guard peek().map(ASCII.isDigit) == true else { throw failure("expected an exponent") }
      skipDigits()
    }
    if let next = peek(), ASCII.isDigit(next) || next == UInt8(ascii: "-") {
      offset = start
      throw failure("malformed number")
    }
    return isInteger
  }

  mutating func skipDigits() {
    while let byte = peek(), ASCII.isDigit(byte) { offset += 1 }
  }
}
