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
  typealias Failure = JSONCursor.Failure

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
      var cursor = JSONCursor(bytes: bytes)
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
}

// MARK: - The envelope scan

extension JSONCursor {
  /// Skips a UTF-8 byte order mark at the start, which Foundation's parser accepts too.
  fileprivate mutating func skipByteOrderMark() {
    if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { offset = 3 }
  }

  fileprivate mutating func expect(_ byte: UInt8, _ what: String) throws {
    skipWhitespace()
    guard peek() == byte else { throw failure("expected \(what)") }
    offset += 1
  }

  /// Scans an object starting at `{` whose members are at component `level` of the paths,
  /// recording the ranges of wanted members and descending into the first member that leads
  /// to a deeper wanted path. Later members with the same key are validated and ignored.
  fileprivate mutating func scanObject(
    paths: [[Substring]], slots: inout [JSONScanner.Slot], level: Int, depth: Int
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
      let keyIsPlain = try skipString().isPlain
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
  fileprivate mutating func skipObject(depth: Int) throws {
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
  fileprivate mutating func closesContainer(_ closing: UInt8, in container: String) throws -> Bool {
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
  fileprivate struct Key {
    let range: Range<Int>
    let isPlain: Bool
  }

  /// Whether `key` names `component`, compared as `String`s are (canonical equivalence),
  /// which is how `JSONDecoder` finds a member. Plain ASCII on both sides compares bytes;
  /// anything else decodes the key once into `decoded`.
  fileprivate func matches(_ key: Key, _ component: Substring, decoded: inout String?) -> Bool {
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
  fileprivate func decodeKey(_ key: Key) -> String? {
    let inner = UnsafeBufferPointer(rebasing: bytes[key.range])
    if !inner.contains(UInt8(ascii: "\\")) { return String(decoding: inner, as: UTF8.self) }
    let quoted = UnsafeBufferPointer(
      rebasing: bytes[(key.range.lowerBound - 1)..<(key.range.upperBound + 1)])
    return try? JSONDecoder().decode(String.self, from: Data(quoted))
  }

  fileprivate mutating func skipValue(depth: Int) throws {
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

}
