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
    /// Containers: the number of members or elements. Keys: their FNV-1a hash.
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
      var parser = Parser(bytes: buffer)
      parser.skipWhitespace()
      guard parser.index < buffer.count,
        buffer[parser.index] == 0x7B || buffer[parser.index] == 0x5B,
        parser.value(depth: 0, into: &nodes)
      else { return false }
      parser.skipWhitespace()
      return parser.index == buffer.count
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

  /// Whether a key node's text is `key`'s UTF-8 bytes (callers compare the hashes first).
  func keyEquals(_ node: Node, _ key: String) -> Bool {
    let start = Int(node.start)
    let end = Int(node.end)
    var key = key
    if node.kind == .string {
      return key.withUTF8 { utf8 in
        utf8.count == end - start
          && bytes.withUnsafeBufferPointer {
            utf8.elementsEqual(UnsafeBufferPointer(rebasing: $0[start..<end]))
          }
      }
    }
    let decoded = unescaped(start, end)
    return key.withUTF8 { $0.elementsEqual(decoded) }
  }

  /// FNV-1a over a key's UTF-8 bytes, as stored in key nodes.
  static func hash<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt32 {
    var hash: UInt32 = 0x811C_9DC5
    for byte in bytes { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
    return hash
  }

  /// The decoded bytes of an escaped string between `start` and `end` (already validated).
  func unescaped(_ start: Int, _ end: Int) -> [UInt8] {
    Self.unescape(bytes, start, end)
  }

  // MARK: - Parsing

  private struct Parser {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    mutating func skipWhitespace() {
      while index < bytes.count {
        switch bytes[index] {
        case 0x20, 0x09, 0x0A, 0x0D: index += 1
        default: return
        }
      }
    }

    mutating func value(depth: Int, into nodes: inout [Node]) -> Bool {
      guard index < bytes.count else { return false }
      switch bytes[index] {
      case 0x7B: return container(object: true, depth: depth, into: &nodes)
      case 0x5B: return container(object: false, depth: depth, into: &nodes)
      case 0x22: return string(into: &nodes, key: false)
      case 0x74: return literal("true", .trueValue, into: &nodes)
      case 0x66: return literal("false", .falseValue, into: &nodes)
      case 0x6E: return literal("null", .null, into: &nodes)
      case 0x2D, 0x30...0x39: return number(into: &nodes)
      default: return false
      }
    }

    private mutating func container(object: Bool, depth: Int, into nodes: inout [Node]) -> Bool {
      guard depth < FastJSONDocument.maximumDepth else { return false }
      let position = nodes.count
      nodes.append(
        Node(kind: object ? .object : .array, start: Int32(index), end: 0, next: 0, count: 0))
      index += 1
      skipWhitespace()
      let close: UInt8 = object ? 0x7D : 0x5D
      var count: UInt32 = 0
      if index < bytes.count, bytes[index] == close {
        index += 1
      } else {
        while true {
          if object {
            guard index < bytes.count, bytes[index] == 0x22, string(into: &nodes, key: true)
            else { return false }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == 0x3A else { return false }
            index += 1
            skipWhitespace()
          }
          guard value(depth: depth + 1, into: &nodes) else { return false }
          count += 1
          skipWhitespace()
          guard index < bytes.count else { return false }
          if bytes[index] == 0x2C {
            index += 1
            skipWhitespace()
            continue
          }
          guard bytes[index] == close else { return false }
          index += 1
          break
        }
      }
      guard nodes.count < Int(Int32.max) else { return false }
      nodes[position].count = count
      nodes[position].next = Int32(nodes.count)
      if object, count > 1, Self.hasDuplicateKeys(nodes, object: position) {
        nodes[position].end = 1
      }
      return true
    }

    /// Whether two keys of the object at `position` hash the same (then `JSONDecoder`
    /// decides, even when the keys only collide).
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

    private mutating func literal(
      _ text: StaticString, _ kind: Kind, into nodes: inout [Node]
    ) -> Bool {
      let count = text.utf8CodeUnitCount
      guard index + count <= bytes.count else { return false }
      let expected = UnsafeBufferPointer(start: text.utf8Start, count: count)
      guard expected.elementsEqual(UnsafeBufferPointer(rebasing: bytes[index..<(index + count)]))
      else { return false }
      nodes.append(
        Node(
          kind: kind, start: Int32(index), end: Int32(index + count),
          next: Int32(nodes.count + 1), count: 0))
      index += count
      return true
    }

    private mutating func number(into nodes: inout [Node]) -> Bool {
      let start = index
      var integer = true
      if bytes[index] == 0x2D { index += 1 }
      guard index < bytes.count else { return false }
      if bytes[index] == 0x30 {
        index += 1
      } else {
        guard digits() else { return false }
      }
      if index < bytes.count, bytes[index] == 0x2E {
        integer = false
        index += 1
        guard digits() else { return false }
      }
      if index < bytes.count, bytes[index] == 0x65 || bytes[index] == 0x45 {
        integer = false
        index += 1
        if index < bytes.count, bytes[index] == 0x2B || bytes[index] == 0x2D { index += 1 }
        guard digits() else { return false }
      }
      nodes.append(
        Node(
          kind: integer ? .integer : .number, start: Int32(start), end: Int32(index),
          next: Int32(nodes.count + 1), count: 0))
      return true
    }

    /// One or more decimal digits.
    private mutating func digits() -> Bool {
      let start = index
      while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
      return index > start
    }

    private mutating func string(into nodes: inout [Node], key: Bool) -> Bool {
      index += 1
      let start = index
      var escaped = false
      var ascii = true
      while true {
        // Plain ASCII runs, the common case, one comparison chain a byte.
        while index < bytes.count {
          let byte = bytes[index]
          guard byte >= 0x20, byte < 0x80, byte != 0x22, byte != 0x5C else { break }
          index += 1
        }
        guard index < bytes.count else { return false }
        let byte = bytes[index]
        if byte == 0x22 { break }
        if byte < 0x20 { return false }
        if byte >= 0x80 { ascii = false }
        if byte == 0x5C {
          escaped = true
          guard escape() else { return false }
        } else {
          index += 1
        }
      }
      let end = index
      index += 1
      if !ascii {
        let run = UnsafeBufferPointer(rebasing: bytes[start..<end])
        guard String(validating: run, as: UTF8.self) != nil else { return false }
      }
      var node = Node(
        kind: escaped ? .escapedString : .string, start: Int32(start), end: Int32(end),
        next: Int32(nodes.count + 1), count: 0)
      if key {
        // Hash what the key means, not how it is written.
        node.count =
          escaped
          ? FastJSONDocument.hash(FastJSONDocument.unescape(bytes, start, end))
          : FastJSONDocument.hash(UnsafeBufferPointer(rebasing: bytes[start..<end]))
      }
      nodes.append(node)
      return true
    }

    /// Checks the escape at `index` (a backslash) and steps over it; `\u` surrogates must
    /// come in pairs.
    private mutating func escape() -> Bool {
      guard index + 1 < bytes.count else { return false }
      switch bytes[index + 1] {
      case 0x22, 0x5C, 0x2F, 0x62, 0x66, 0x6E, 0x72, 0x74:
        index += 2
        return true
      case 0x75:
        guard let unit = Self.hex4(bytes, index + 2) else { return false }
        index += 6
        if unit >= 0xDC00, unit < 0xE000 { return false }
        if unit >= 0xD800, unit < 0xDC00 {
          guard index + 1 < bytes.count, bytes[index] == 0x5C, bytes[index + 1] == 0x75,
            let low = Self.hex4(bytes, index + 2), low >= 0xDC00, low < 0xE000
          else { return false }
          index += 6
        }
        return true
      default:
        return false
      }
    }

    /// The value of four hex digits at `index`, or `nil`.
    static func hex4<Bytes: RandomAccessCollection<UInt8>>(
      _ bytes: Bytes, _ index: Int
    ) -> UInt16? where Bytes.Index == Int {
      guard index + 4 <= bytes.count else { return nil }
      var value: UInt16 = 0
      for offset in 0..<4 {
        let byte = bytes[index + offset]
        let digit: UInt8
        switch byte {
        case 0x30...0x39: digit = byte - 0x30
        case 0x41...0x46: digit = byte - 0x41 + 10
        case 0x61...0x66: digit = byte - 0x61 + 10
        default: return nil
        }
        value = value << 4 | UInt16(digit)
      }
      return value
    }
  }

  /// The decoded bytes of the escaped string `bytes[start..<end]`.
  fileprivate static func unescape<Bytes: RandomAccessCollection<UInt8>>(
    _ bytes: Bytes, _ start: Int, _ end: Int
  ) -> [UInt8] where Bytes.Index == Int {
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
      index += 2
      switch escape {
      case 0x62: output.append(0x08)
      case 0x66: output.append(0x0C)
      case 0x6E: output.append(0x0A)
      case 0x72: output.append(0x0D)
      case 0x74: output.append(0x09)
      case 0x75:
        var scalar = UInt32(Parser.hex4(bytes, index) ?? 0)
        index += 4
        if scalar >= 0xD800, scalar < 0xDC00 {
          let low = UInt32(Parser.hex4(bytes, index + 2) ?? 0xDC00)
          scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
          index += 6
        }
        output.append(contentsOf: String(Unicode.Scalar(scalar) ?? "\u{FFFD}").utf8)
      default: output.append(escape)  // " \ /
      }
    }
    return output
  }
}
