import Foundation

/// A JSON text parsed once into a flat list of nodes, for ``FastJSONDecoder``.
///
/// The parser is stricter than Foundation's `JSONDecoder`: whatever it is unsure of makes
/// `init` return `nil`, and the caller decodes with `JSONDecoder` instead. It accepts only
/// UTF-8 without a byte order mark, an object or an array at the top, RFC 8259's grammar with
/// nothing after the value but white space, at most ``maximumDepth`` levels of nesting,
/// strings whose bytes are valid UTF-8 and whose `\u` escapes pair their surrogates.
///
/// Nodes are in document order. A container is followed by its children: an object's are
/// its keys and values alternately, each value with its own subtree, and ``Node/next`` of
/// any node is the index just past its subtree.
final class FastJSONDocument {
  /// What a node is.
  enum Kind: UInt8 {
    case object, array, string, escapedString, integer, number, trueValue, falseValue, null
  }

  /// One value (or an object's key).
  struct Node {
    var kind: Kind
    /// Strings: the first byte after the opening quote. Numbers: the first byte. Containers:
    /// the opening bracket.
    var start: Int32
    /// Strings: the closing quote. Numbers: one past the last byte. Objects: 1 when two of
    /// their keys hash the same (then `JSONDecoder` decides what they mean), else 0.
    var end: Int32
    /// The index of the first node after this one's subtree.
    var next: Int32
    /// Containers: the number of members or elements. Keys: ``FastJSONDocument/hash(_:)`` of
    /// their text.
    var count: UInt32
  }

  /// Nesting deeper than this is left to `JSONDecoder` (which allows 512 levels).
  static let maximumDepth = 256

  let bytes: [UInt8]
  private(set) var nodes: [Node] = []

  init?(_ data: Data) {
    // Offsets are 32-bit; a body of 2 GiB or more is left to JSONDecoder.
    guard data.count < Int(Int32.max) else { return nil }
    bytes = [UInt8](data)
    var nodes: [Node] = []
    nodes.reserveCapacity(bytes.count / 8 + 4)
    let parsed = bytes.withUnsafeBufferPointer { buffer in
      var parser = Parser(cursor: JSONCursor(bytes: buffer))
      parser.cursor.skipWhitespace()
      guard parser.cursor.peek() == 0x7B || parser.cursor.peek() == 0x5B,
        (try? parser.value(depth: 0, into: &nodes)) != nil
      else { return false }
      parser.cursor.skipWhitespace()
      return parser.cursor.atEnd
    }
    guard parsed else { return nil }
    self.nodes = nodes
  }

  // MARK: - Reading nodes

  /// The bytes of a string node as a `String` (escapes decoded).
  func string(_ node: Node) -> String {
    let start = Int(node.start)
    let end = Int(node.end)
    if node.kind == .string {
      return bytes.withUnsafeBufferPointer {
        String(decoding: UnsafeBufferPointer(rebasing: $0[start..<end]), as: UTF8.self)
      }
    }
    return String(decoding: unescaped(start, end), as: UTF8.self)
  }

  /// Whether a key node's text is `key` as `String` compares them, by canonical equivalence,
  /// as `JSONDecoder` finds members (callers compare the hashes first). Equal bytes are equal
  /// text; different bytes are different text when both are ASCII, and are compared as
  /// `String`s otherwise (`"cafe\u{301}"` is `"café"`).
  func keyEquals(_ node: Node, _ key: String) -> Bool {
    let start = Int(node.start)
    let end = Int(node.end)
    var key = key
    let text: [UInt8]? = node.kind == .string ? nil : unescaped(start, end)
    let sameBytes = key.withUTF8 { utf8 in
      if let text { return utf8.elementsEqual(text) }
      return utf8.count == end - start
        && bytes.withUnsafeBufferPointer {
          utf8.elementsEqual(UnsafeBufferPointer(rebasing: $0[start..<end]))
        }
    }
    if sameBytes { return true }
    let keyIsASCII = key.utf8.allSatisfy { $0 < 0x80 }
    let nodeIsASCII =
      if let text { text.allSatisfy { $0 < 0x80 } } else {
        bytes[start..<end].allSatisfy { $0 < 0x80 }
      }
    guard !keyIsASCII || !nodeIsASCII else { return false }
    return string(node) == key
  }

  /// FNV-1a over the UTF-8 of a key's text in Unicode's canonical composition (NFC), as stored
  /// in key nodes: two keys that `String` calls equal (canonically equivalent) hash alike, so
  /// a lookup finds a key however it is composed, and duplicate detection sees keys equal
  /// only after normalisation. ASCII text is its own NFC: its bytes are hashed as they are,
  /// and only a key with a byte above 0x7F pays for the normalisation.
  static func hash<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> UInt32 {
    var hash: UInt32 = 0x811C_9DC5
    var bits: UInt8 = 0
    for byte in bytes {
      hash = (hash ^ UInt32(byte)) &* 0x0100_0193
      bits |= byte
    }
    guard bits >= 0x80 else { return hash }
    hash = 0x811C_9DC5
    // The standard library's own NFC, by which `String` compares and hashes.
    String(decoding: bytes, as: UTF8.self)._withNFCCodeUnits { byte in
      hash = (hash ^ UInt32(byte)) &* 0x0100_0193
    }
    return hash
  }

  /// The decoded bytes of an escaped string between `start` and `end` (already validated).
  func unescaped(_ start: Int, _ end: Int) -> [UInt8] {
    bytes.withUnsafeBufferPointer { Self.unescape($0, start, end) }
  }

  // MARK: - Parsing

  /// Builds the node list on ``JSONCursor``'s lexing, so it accepts the same tokens as the
  /// envelope scan; containers are its own (no trailing commas, ``maximumDepth``).
  private struct Parser {
    var cursor: JSONCursor

    mutating func value(depth: Int, into nodes: inout [Node]) throws {
      guard let byte = cursor.peek() else { throw cursor.failure("expected a value") }
      let start = cursor.offset
      let kind: Kind
      switch byte {
      case 0x7B: return try container(object: true, depth: depth, into: &nodes)
      case 0x5B: return try container(object: false, depth: depth, into: &nodes)
      case 0x22: return try string(into: &nodes, key: false)
      case 0x74:
        try cursor.skipLiteral("true")
        kind = .trueValue
      case 0x66:
        try cursor.skipLiteral("false")
        kind = .falseValue
      case 0x6E:
        try cursor.skipLiteral("null")
        kind = .null
      case 0x2D, 0x30...0x39:
        kind = try cursor.skipNumber() ? .integer : .number
      default: throw cursor.failure("unexpected byte")
      }
      nodes.append(
        Node(
          kind: kind, start: Int32(start), end: Int32(cursor.offset),
          next: Int32(nodes.count + 1), count: 0))
    }

    private mutating func container(object: Bool, depth: Int, into nodes: inout [Node]) throws {
      guard depth < FastJSONDocument.maximumDepth else { throw cursor.failure("too deep") }
      let position = nodes.count
      nodes.append(
        Node(
          kind: object ? .object : .array, start: Int32(cursor.offset), end: 0, next: 0,
          count: 0))
      cursor.offset += 1
      cursor.skipWhitespace()
      let close: UInt8 = object ? 0x7D : 0x5D
      var count: UInt32 = 0
      if cursor.peek() == close {
        cursor.offset += 1
      } else {
        while true {
          if object {
            guard cursor.peek() == 0x22 else { throw cursor.failure("expected a member name") }
            try string(into: &nodes, key: true)
            cursor.skipWhitespace()
            guard cursor.peek() == 0x3A else { throw cursor.failure("expected ':'") }
            cursor.offset += 1
            cursor.skipWhitespace()
          }
          try value(depth: depth + 1, into: &nodes)
          count += 1
          cursor.skipWhitespace()
          let next = cursor.peek()
          cursor.offset += 1
          if next == 0x2C {
            cursor.skipWhitespace()
            continue
          }
          guard next == close else { throw cursor.failure("expected ',' or a close") }
          break
        }
      }
      guard nodes.count < Int(Int32.max) else { throw cursor.failure("too many values") }
      nodes[position].count = count
      nodes[position].next = Int32(nodes.count)
      if object, count > 1, Self.hasDuplicateKeys(nodes, object: position) {
        nodes[position].end = 1
      }
    }

    /// Whether two keys of the object at `position` hash the same (then `JSONDecoder`
    /// decides, even when the keys only collide). Keys equal only after normalisation hash
    /// the same (see ``FastJSONDocument/hash(_:)``).
    private static func hasDuplicateKeys(_ nodes: [Node], object position: Int) -> Bool {
      let count = Int(nodes[position].count)
      if count > 16 {
        var seen = Set<UInt32>(minimumCapacity: count)
        var child = position + 1
        for _ in 0..<count {
          guard seen.insert(nodes[child].count).inserted else { return true }
          child = Int(nodes[child + 1].next)
        }
        return false
      }
      var first = position + 1
      for remaining in stride(from: count - 1, to: 0, by: -1) {
        let hash = nodes[first].count
        var second = Int(nodes[first + 1].next)
        for _ in 0..<remaining {
          if nodes[second].count == hash { return true }
          second = Int(nodes[second + 1].next)
        }
        first = Int(nodes[first + 1].next)
      }
      return false
    }

    private mutating func string(into nodes: inout [Node], key: Bool) throws {
      let start = cursor.offset + 1
      let shape = try cursor.skipString()
      let end = cursor.offset - 1
      var node = Node(
        kind: shape.hasEscapes ? .escapedString : .string, start: Int32(start), end: Int32(end),
        next: Int32(nodes.count + 1), count: 0)
      if key {
        // Hash what the key means, not how it is written (escapes decoded, NFC).
        node.count =
          shape.hasEscapes
          ? FastJSONDocument.hash(FastJSONDocument.unescape(cursor.bytes, start, end))
          : FastJSONDocument.hash(UnsafeBufferPointer(rebasing: cursor.bytes[start..<end]))
      }
      nodes.append(node)
    }
  }

  /// The decoded bytes of the escaped string `bytes[start..<end]` (already validated).
  fileprivate static func unescape(
    _ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int
  ) -> [UInt8] {
    var output: [UInt8] = []
    output.reserveCapacity(end - start)
    var index = start
    while index < end {
      let byte = bytes[index]
      guard byte == 0x5C else {
        output.append(byte)
        index += 1
        continue
      }
      let escape = bytes[index + 1]
      if escape == 0x75 {
        var scalar = UInt32(JSONCursor.codeUnit(in: bytes, at: index) ?? 0xFFFD)
        index += 6
        if scalar >= 0xD800, scalar < 0xDC00, let low = JSONCursor.codeUnit(in: bytes, at: index) {
          scalar = 0x10000 + ((scalar - 0xD800) << 10) + (UInt32(low) - 0xDC00)
          index += 6
        }
        output.append(contentsOf: String(Unicode.Scalar(scalar) ?? "\u{FFFD}").utf8)
        continue
      }
      index += 2
      switch escape {
      case 0x62: output.append(0x08)
      case 0x66: output.append(0x0C)
      case 0x6E: output.append(0x0A)
      case 0x72: output.append(0x0D)
      case 0x74: output.append(0x09)
      default: output.append(escape)  // " \ /
      }
    }
    return output
  }
}
