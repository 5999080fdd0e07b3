import Foundation

/// A validating scan over JSON bytes that finds where values are without building them.
///
/// The business envelope check uses it to read `code` and `msg` and to find the byte range of
/// `data`, so that `JSONDecoder` parses the payload once instead of the whole body twice.
///
/// It accepts exactly the documents Foundation's parser accepts on Linux (checked by a
/// differential test against `JSONSerialization`): RFC 8259 grammar, the trailing commas and
/// leading UTF-8 byte order mark Foundation allows, strings that are well-formed UTF-8
/// (no overlongs, no encoded surrogates, nothing above U+10FFFF) and whose `\u` escapes pair
/// every surrogate. Nesting is limited to ``maximumDepth``. Only the number grammar is
/// checked, not its range, as `JSONDecoder` does for members it does not decode.
///
/// **Duplicate keys: the first one wins**, for the whole value, as in `JSONDecoder` (Swift
/// 6.3 on Linux; `JSONSerialization` keeps the last one instead, so the two disagree). Courier
/// decodes payloads and whole bodies with `JSONDecoder`, so the envelope's `code` is the
/// `code` a decoded model sees. Keys are compared as `String`s are (canonical equivalence),
/// again as `JSONDecoder` compares them.
///
/// The scan copies nothing and allocates two small arrays per call (the state of each path
/// and the result); only a key with an escape or non-ASCII bytes is decoded to compare it.
enum JSONScanner {
  /// Why a scan failed, for developer messages.
  struct Failure: Error, CustomStringConvertible {
    let message: String
    let offset: Int
    var description: String { "\(message) at byte \(offset)" }
  }

  /// Deeper nesting than this is rejected rather than risking the stack.
  static let maximumDepth = 512

  /// The kind of a JSON value, told from its first byte.
  enum ValueKind: Equatable {
    case object, array, string, number, bool, null
  }

  /// Where the search for one path stands.
  fileprivate enum Slot: Equatable {
    /// Looking for the member at this component index, in the object being scanned at that
    /// level.
    case waiting(level: Int)
    /// The last component matched the member being scanned in the object at this level;
    /// its range is set once the value is skipped.
    case matched(level: Int)
    /// Found.
    case found(Range<Int>)
    /// A component is missing, or a step is not an object.
    case absent
  }

  /// Finds the values at several dotted paths (`"code"`, `"meta.status"`) in one pass over the
  /// root object of `data`, validating the whole document.
  ///
  /// - Returns: For each path, the byte range of its value in `data`'s indices, or `nil` when
  ///   a key on the way is missing or a step is not an object.
  /// - Throws: ``Failure`` when `data` is not a JSON document whose root is an object.
  static func locate(_ paths: [[Substring]], in data: Data) throws -> [Range<Int>?] {
    try data.withUnsafeBytes { raw -> [Range<Int>?] in
      let bytes = raw.bindMemory(to: UInt8.self)
      var cursor = Cursor(bytes: bytes)
      cursor.skipByteOrderMark()
      cursor.skipWhitespace()
      guard cursor.peek() == UInt8(ascii: "{") else {
        throw cursor.failure(
          cursor.atEnd ? "empty body where a JSON object was expected" : "not a JSON object")
      }
      var slots = [Slot](repeating: .waiting(level: 0), count: paths.count)
      try cursor.scanObject(paths: paths, slots: &slots, level: 0, depth: 0)
      cursor.skipWhitespace()
      guard cursor.atEnd else { throw cursor.failure("unexpected bytes after the JSON value") }
      let base = data.startIndex
      return slots.map { slot in
        guard case .found(let range) = slot else { return nil }
        return (range.lowerBound + base)..<(range.upperBound + base)
      }
    }
  }

  /// The kind of the value whose range `locate` returned.
  static func kind(of range: Range<Int>, in data: Data) -> ValueKind {
    switch data[range.lowerBound] {
    case UInt8(ascii: "{"): .object
    case UInt8(ascii: "["): .array
    case UInt8(ascii: "\""): .string
    case UInt8(ascii: "t"), UInt8(ascii: "f"): .bool
    case UInt8(ascii: "n"): .null
    default: .number
    }
  }

  /// The text of a JSON string value (with its quotes) at `range`.
  static func string(at range: Range<Int>, in data: Data) -> String? {
    let inner = data[(range.lowerBound + 1)..<(range.upperBound - 1)]
    if !inner.contains(UInt8(ascii: "\\")) {
      return String(bytes: inner, encoding: .utf8)
    }
    return try? JSONDecoder().decode(String.self, from: data[range])
  }

  /// The value at `range` as source text: a string's contents, or a number or literal as
  /// written.
  static func scalarText(at range: Range<Int>, in data: Data) -> String? {
    if kind(of: range, in: data) == .string { return string(at: range, in: data) }
    return String(bytes: data[range], encoding: .utf8)
  }

  private struct Cursor {
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

    /// Skips a UTF-8 byte order mark at the start, which Foundation's parser accepts too.
    mutating func skipByteOrderMark() {
      if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { offset = 3 }
    }

    mutating func skipWhitespace() {
      while offset < bytes.count {
        switch bytes[offset] {
        case 0x20, 0x09, 0x0A, 0x0D: offset += 1
        default: return
        }
      }
    }

    mutating func expect(_ byte: UInt8, _ what: String) throws {
      skipWhitespace()
      guard peek() == byte else { throw failure("expected \(what)") }
      offset += 1
    }

    /// Scans an object starting at `{` whose members are at component `level` of the paths,
    /// recording the ranges of wanted members and descending into the first member that leads
    /// to a deeper wanted path. Later members with the same key are validated and ignored.
    mutating func scanObject(
      paths: [[Substring]], slots: inout [Slot], level: Int, depth: Int
    ) throws {
      guard depth < JSONScanner.maximumDepth else { throw failure("JSON nested too deeply") }
      offset += 1  // {
      skipWhitespace()
      if peek() == UInt8(ascii: "}") {
        offset += 1
        return
      }
      while true {
        skipWhitespace()
        guard peek() == UInt8(ascii: "\"") else { throw failure("expected a member name") }
        let keyStart = offset
        let keyIsPlain = try skipString()
        let key = Key(range: (keyStart + 1)..<(offset - 1), isPlain: keyIsPlain)
        try expect(UInt8(ascii: ":"), "':' after a member name")
        skipWhitespace()
        var decodedKey: String?
        var matchedLeaf = false
        var descends = false
        for index in slots.indices where slots[index] == .waiting(level: level) {
          let components = paths[index]
          guard level < components.count,
            matches(key, components[components.startIndex + level], decoded: &decodedKey)
          else { continue }
          if level == components.count - 1 {
            slots[index] = .matched(level: level)
            matchedLeaf = true
          } else {
            slots[index] = .waiting(level: level + 1)
            descends = true
          }
        }
        let valueStart = offset
        if descends && peek() == UInt8(ascii: "{") {
          try scanObject(paths: paths, slots: &slots, level: level + 1, depth: depth + 1)
        } else {
          try skipValue(depth: depth + 1)
        }
        if descends {
          // The first member with this key decided these paths: whatever was not found in it
          // is absent, whatever later duplicates hold.
          for index in slots.indices where slots[index] == .waiting(level: level + 1) {
            slots[index] = .absent
          }
        }
        if matchedLeaf {
          for index in slots.indices where slots[index] == .matched(level: level) {
            slots[index] = .found(valueStart..<offset)
          }
        }
        if try closesContainer(UInt8(ascii: "}"), in: "an object") { return }
      }
    }

    /// Scans an object starting at `{` that holds nothing wanted.
    mutating func skipObject(depth: Int) throws {
      offset += 1  // {
      skipWhitespace()
      if peek() == UInt8(ascii: "}") {
        offset += 1
        return
      }
      repeat {
        skipWhitespace()
        guard peek() == UInt8(ascii: "\"") else { throw failure("expected a member name") }
        _ = try skipString()
        try expect(UInt8(ascii: ":"), "':' after a member name")
        try skipValue(depth: depth + 1)
      } while try !closesContainer(UInt8(ascii: "}"), in: "an object")
    }

    /// After a member or element: consumes `,` and returns `false` when another one follows,
    /// or consumes the closing byte (after an optional trailing comma, which Foundation's
    /// parser allows) and returns `true`.
    mutating func closesContainer(_ closing: UInt8, in container: String) throws -> Bool {
      skipWhitespace()
      switch peek() {
      case UInt8(ascii: ","):
        offset += 1
        skipWhitespace()
        guard peek() == closing else { return false }
        offset += 1
        return true
      case closing:
        offset += 1
        return true
      default:
        throw failure(
          "expected ',' or '\(Character(Unicode.Scalar(closing)))' in \(container)")
      }
    }

    /// A member name: the bytes between its quotes, and whether they are plain ASCII without
    /// escapes (so they compare byte by byte).
    struct Key {
      let range: Range<Int>
      let isPlain: Bool
    }

    /// Whether `key` names `component`, compared as `String`s are (canonical equivalence),
    /// which is how `JSONDecoder` finds a member. Plain ASCII on both sides compares bytes;
    /// anything else decodes the key once into `decoded`.
    func matches(_ key: Key, _ component: Substring, decoded: inout String?) -> Bool {
      if key.isPlain {
        let utf8 = component.utf8
        if utf8.count == key.range.count
          && zip(utf8, key.range).allSatisfy({ bytes[$0.1] == $0.0 })
        {
          return true
        }
        // Two different ASCII strings are never canonically equivalent.
        if utf8.allSatisfy({ $0 < 0x80 }) { return false }
      }
      if decoded == nil { decoded = decodeKey(key) }
      return decoded.map { $0[...] == component } ?? false
    }

    /// The text of a validated member name.
    func decodeKey(_ key: Key) -> String? {
      let inner = UnsafeBufferPointer(rebasing: bytes[key.range])
      if !inner.contains(UInt8(ascii: "\\")) { return String(decoding: inner, as: UTF8.self) }
      let quoted = UnsafeBufferPointer(
        rebasing: bytes[(key.range.lowerBound - 1)..<(key.range.upperBound + 1)])
      return try? JSONDecoder().decode(String.self, from: Data(quoted))
    }

    mutating func skipValue(depth: Int) throws {
      guard depth < JSONScanner.maximumDepth else { throw failure("JSON nested too deeply") }
      skipWhitespace()
      guard let byte = peek() else { throw failure("expected a value") }
      switch byte {
      case UInt8(ascii: "{"):
        try skipObject(depth: depth)
      case UInt8(ascii: "["):
        offset += 1
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
          offset += 1
          return
        }
        repeat {
          try skipValue(depth: depth + 1)
        } while try !closesContainer(UInt8(ascii: "]"), in: "an array")
      case UInt8(ascii: "\""):
        _ = try skipString()
      case UInt8(ascii: "t"): try skipLiteral("true")
      case UInt8(ascii: "f"): try skipLiteral("false")
      case UInt8(ascii: "n"): try skipLiteral("null")
      case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        try skipNumber()
      default:
        throw failure(
          byte < 0x80
            ? "unexpected character '\(Character(Unicode.Scalar(byte)))'"
            : "unexpected byte 0x\(String(byte, radix: 16, uppercase: true))")
      }
    }

    /// Skips a string at `"`, checking its UTF-8 and escapes; returns whether it was plain
    /// ASCII without escapes.
    mutating func skipString() throws -> Bool {
      offset += 1
      var isPlain = true
      while true {
        skipPlainCharacters()
        guard offset < bytes.count else { throw failure("expected the end of a string") }
        let byte = bytes[offset]
        if byte == UInt8(ascii: "\"") {
          offset += 1
          return isPlain
        }
        isPlain = false
        if byte >= 0x80 {
          let length = multiByteLength(at: offset)
          guard length > 0 else { throw failure("invalid UTF-8 in a string") }
          offset += length
        } else if byte == UInt8(ascii: "\\") {
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
    /// bytes at a time while none of them is special, then byte by byte, on locals so that
    /// the index stays in a register.
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
          // A byte below 0x20 (x - n borrows into a clear high bit), a `"` or `\` (a zero
          // byte after the XOR), or a byte with its high bit set: the word holds a special
          // byte. False positives only send the word to the byte loop.
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
        let unit = try hexEscape(at: offset)
        switch unit {
        case 0xD800...0xDBFF:
          guard offset + 7 < bytes.count, bytes[offset + 6] == UInt8(ascii: "\\"),
            bytes[offset + 7] == UInt8(ascii: "u")
          else { throw failure("unpaired surrogate in a \\u escape") }
          let low = try hexEscape(at: offset + 6)
          guard (0xDC00...0xDFFF).contains(low) else {
            throw failure("unpaired surrogate in a \\u escape")
          }
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

    /// The code unit of the `\uXXXX` escape starting at `start`.
    func hexEscape(at start: Int) throws -> UInt16 {
      guard start + 5 < bytes.count else { throw failure("bad \\u escape") }
      var unit: UInt16 = 0
      for index in (start + 2)...(start + 5) {
        guard let digit = ASCII.hexValue(bytes[index]) else { throw failure("bad \\u escape") }
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

    mutating func skipNumber() throws {
      let start = offset
      if peek() == UInt8(ascii: "-") { offset += 1 }
      guard let first = peek(), ASCII.isDigit(first) else { throw failure("expected a digit") }
      offset += 1
      if first != UInt8(ascii: "0") { skipDigits() }
      if peek() == UInt8(ascii: ".") {
        offset += 1
        guard peek().map(ASCII.isDigit) == true else { throw failure("expected a digit after '.'") }
        skipDigits()
      }
      if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
        offset += 1
        if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { offset += 1 }
        guard peek().map(ASCII.isDigit) == true else { throw failure("expected an exponent") }
        skipDigits()
      }
      if let next = peek(), ASCII.isDigit(next) || next == UInt8(ascii: "-") {
        offset = start
        throw failure("malformed number")
      }
    }

    mutating func skipDigits() {
      while let byte = peek(), ASCII.isDigit(byte) { offset += 1 }
    }
  }
}
