import Foundation

/// A validating, non-allocating scan over JSON bytes that finds where values are without
/// building them.
///
/// The business envelope check uses it to read `code` and `msg` and to find the byte range of
/// `data`, so that `JSONDecoder` parses the payload once instead of the whole body twice.
/// Every byte of the document is checked against the JSON grammar (RFC 8259, plus the
/// trailing commas Foundation's own parser accepts, so the two agree) on the way, nesting is
/// limited to ``maximumDepth``, and no value is copied.
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
      cursor.skipWhitespace()
      guard cursor.peek() == UInt8(ascii: "{") else {
        throw cursor.failure(
          cursor.atEnd ? "empty body where a JSON object was expected" : "not a JSON object")
      }
      var found = [Range<Int>?](repeating: nil, count: paths.count)
      let wanted = paths.indices.map { (index: $0, components: paths[$0][...]) }
      try cursor.scanObject(wanted: wanted, found: &found, depth: 0)
      cursor.skipWhitespace()
      guard cursor.atEnd else { throw cursor.failure("unexpected bytes after the JSON value") }
      let base = data.startIndex
      return found.map { $0.map { ($0.lowerBound + base)..<($0.upperBound + base) } }
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

    /// Scans an object starting at `{`, recording the ranges of wanted members and
    /// descending into members that lead to deeper wanted paths.
    mutating func scanObject(
      wanted: [(index: Int, components: ArraySlice<Substring>)], found: inout [Range<Int>?],
      depth: Int
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
        let keyHasEscape = try skipString()
        let keyRange = (keyStart + 1)..<(offset - 1)
        try expect(UInt8(ascii: ":"), "':' after a member name")
        skipWhitespace()
        var matches: [(index: Int, components: ArraySlice<Substring>)] = []
        if !wanted.isEmpty {
          for entry in wanted
          where keyMatches(keyRange, entry.components[entry.components.startIndex], keyHasEscape) {
            matches.append(entry)
          }
        }
        let valueStart = offset
        let deeper = matches.filter { $0.components.count > 1 }
        if !deeper.isEmpty, peek() == UInt8(ascii: "{") {
          try scanObject(
            wanted: deeper.map { ($0.index, $0.components.dropFirst()) }, found: &found,
            depth: depth + 1)
        } else {
          try skipValue(depth: depth + 1)
        }
        for entry in matches where entry.components.count == 1 && found[entry.index] == nil {
          found[entry.index] = valueStart..<offset
        }
        if try closesContainer(UInt8(ascii: "}"), in: "an object") { return }
      }
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

    func keyMatches(_ range: Range<Int>, _ name: Substring, _ hasEscape: Bool) -> Bool {
      if hasEscape {
        let quoted = UnsafeBufferPointer(
          rebasing: bytes[(range.lowerBound - 1)..<(range.upperBound + 1)])
        let key = try? JSONDecoder().decode(String.self, from: Data(quoted))
        return key.map { $0[...] == name } ?? false
      }
      let utf8 = name.utf8
      guard utf8.count == range.count else { return false }
      var index = range.lowerBound
      for byte in utf8 {
        if bytes[index] != byte { return false }
        index += 1
      }
      return true
    }

    mutating func skipValue(depth: Int) throws {
      guard depth < JSONScanner.maximumDepth else { throw failure("JSON nested too deeply") }
      skipWhitespace()
      guard let byte = peek() else { throw failure("expected a value") }
      switch byte {
      case UInt8(ascii: "{"):
        var none: [Range<Int>?] = []
        try scanObject(wanted: [], found: &none, depth: depth)
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
        throw failure("unexpected character '\(Character(Unicode.Scalar(byte)))'")
      }
    }

    /// Skips a string at `"`; returns whether it held an escape.
    mutating func skipString() throws -> Bool {
      offset += 1
      var hasEscape = false
      while offset < bytes.count {
        let byte = bytes[offset]
        switch byte {
        case UInt8(ascii: "\""):
          offset += 1
          return hasEscape
        case UInt8(ascii: "\\"):
          hasEscape = true
          guard offset + 1 < bytes.count else { throw failure("expected an escape") }
          switch bytes[offset + 1] {
          case UInt8(ascii: "u"):
            guard offset + 5 < bytes.count,
              (2...5).allSatisfy({ ASCII.isHexDigit(bytes[offset + $0]) })
            else { throw failure("bad \\u escape") }
            offset += 6
          case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
            UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            offset += 2
          default:
            throw failure("bad escape")
          }
        case 0..<0x20:
          throw failure("control character in a string")
        default:
          offset += 1
        }
      }
      throw failure("expected the end of a string")
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
