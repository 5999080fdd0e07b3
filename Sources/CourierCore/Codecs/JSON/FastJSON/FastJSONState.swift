import Foundation

/// One decoding's document, and whether anything on the way was left to `JSONDecoder`.
final class FastJSONState {
  let document: FastJSONDocument
  /// Something threw or was left to `JSONDecoder`: the result, if any, is not used.
  private(set) var isTainted = false
  /// The model asked for a type this path always leaves to `JSONDecoder`.
  private(set) var metTypeLeftToFoundation = false

  init(_ document: FastJSONDocument) {
    self.document = document
  }

  /// Types `JSONDecoder` decodes its own way, or that this path leaves to it.
  static func isLeftToFoundation<Value>(_ type: Value.Type) -> Bool {
    type == Data.self || type == Decimal.self || type == Float.self
  }

  /// The first number that did not convert to its type (see
  /// ``FastJSONDecoder/numberProblem(_:from:like:)``).
  private(set) var numberProblem: String?

  /// ``leave(_:_:)`` for a number that does not convert: also notes it in ``numberProblem``.
  func leaveNumber(
    _ path: [any CodingKey], _ node: Int, _ problem: String
  ) -> DecodingError {
    if numberProblem == nil {
      let value = self.node(node)
      let bytes = document.bytes[Int(value.start)..<Int(value.end)]
      var literal = String(decoding: bytes.prefix(40), as: UTF8.self)
      if bytes.count > 40 { literal += "…" }
      let place =
        path.isEmpty
        ? "the top level"
        : path.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(
          separator: "."
        ).debugDescription
      numberProblem = "\(literal) at \(place) \(problem)"
    }
    return leave(path, problem)
  }

  /// Marks the decoding as left to `JSONDecoder` and returns an error to throw.
  func leave(_ path: [any CodingKey], _ reason: String) -> DecodingError {
    isTainted = true
    return DecodingError.dataCorrupted(
      DecodingError.Context(codingPath: path, debugDescription: "left to JSONDecoder: \(reason)"))
  }

  /// ``leave(_:_:)`` for a type this path always leaves to `JSONDecoder`.
  func leaveForType(_ path: [any CodingKey], _ type: String) -> DecodingError {
    metTypeLeftToFoundation = true
    return leave(path, type)
  }

  /// The coding path of a value, built only when an error or a nested decoder needs it.
  typealias Path = () -> [any CodingKey]

  func node(_ index: Int) -> FastJSONDocument.Node { document.nodes[index] }

  /// Objects with more members than this are searched through ``keyNode(hash:inObject:)``'s
  /// table; smaller ones by a scan, which costs less than building a table.
  static let indexedMemberCount = 32

  /// The key tables of the objects searched so far, by object node: key hash to key node.
  private var keyTables: [Int: [UInt32: Int32]] = [:]

  /// The key node of the object at `object` whose ``FastJSONDocument/hash(_:)`` is `hash`,
  /// or `nil`: a table lookup, the table built on the object's first search. Decoding every
  /// member of an object (a `[String: Value]`) then costs one lookup per member, not a scan
  /// of the object per member (time quadratic in the member count, which a server could pick).
  /// Only for an object whose keys all hash differently (one with two equal hashes is left
  /// to `JSONDecoder` before any search), so a hash names at most one key.
  func keyNode(hash: UInt32, inObject object: Int) -> Int? {
    if let table = keyTables[object] { return table[hash].map(Int.init) }
    let count = Int(node(object).count)
    var table: [UInt32: Int32] = [:]
    table.reserveCapacity(count)
    var child = object + 1
    for _ in 0..<count {
      table[node(child).count] = Int32(child)
      child = Int(node(child + 1).next)
    }
    keyTables[object] = table
    return table[hash].map(Int.init)
  }

  // MARK: - Values

  func decode<Value: Decodable>(
    _ type: Value.Type, node: Int, path: @autoclosure Path
  ) throws -> Value {
    // The common leaves without a decoder of their own. Each cast is between equal types,
    // checked on the line before.
    if Value.self == String.self { return unsafeBitCast(try string(node, path()), to: Value.self) }
    if Value.self == Int.self {
      return unsafeBitCast(try integer(Int.self, node, path()), to: Value.self)
    }
    if Value.self == Double.self { return unsafeBitCast(try double(node, path()), to: Value.self) }
    if Value.self == Bool.self { return unsafeBitCast(try bool(node, path()), to: Value.self) }
    if Value.self == URL.self { return try url(Value.self, node, path()) }
    // Arrays of those leaves, without `Array.init(from:)`'s unkeyed container and its
    // unspecialized decode and append of every element.
    if Value.self == [String].self {
      return unsafeBitCast(
        try array(node, path, { try self.string($0, path() + [FastJSONIndexKey($1)]) }),
        to: Value.self)
    }
    if Value.self == [Int].self {
      return unsafeBitCast(
        try array(node, path, { try self.int($0, path() + [FastJSONIndexKey($1)]) }),
        to: Value.self)
    }
    if Value.self == [Double].self {
      return unsafeBitCast(
        try array(node, path, { try self.double($0, path() + [FastJSONIndexKey($1)]) }),
        to: Value.self)
    }
    if Value.self == [Bool].self {
      return unsafeBitCast(
        try array(node, path, { try self.bool($0, path() + [FastJSONIndexKey($1)]) }),
        to: Value.self)
    }
    if Self.isLeftToFoundation(Value.self) { throw leaveForType(path(), "\(Value.self)") }
    do {
      return try Value(from: FastJSONValueDecoder(state: self, node: node, codingPath: path()))
    } catch {
      // The type's own error, or one it let through: JSONDecoder decides.
      isTainted = true
      throw error
    }
  }

  /// A URL as `JSONDecoder` reads one: a string that `URL(string:)` takes. Apart from
  /// ``decode(_:node:path:)`` so that its cast does not cost that function a metadata lookup
  /// on every call.
  @inline(never)
  private func url<Value>(
    _ type: Value.Type, _ node: Int, _ path: @autoclosure Path
  ) throws
    -> Value
  {
    guard let url = URL(string: try string(node, path())), let value = url as? Value else {
      throw leave(path(), "URL")
    }
    return value
  }

  /// The elements of the array at `node`, each read by `element` from its node and index.
  /// Anything but an array is left to `JSONDecoder`, which names the mismatch its own way.
  @inline(never)
  private func array<Element>(
    _ node: Int, _ path: Path, _ element: (_ node: Int, _ index: Int) throws -> Element
  ) throws -> [Element] {
    let container = self.node(node)
    guard container.kind == .array else { throw leave(path(), "not an array") }
    let count = Int(container.count)
    var elements: [Element] = []
    elements.reserveCapacity(count)
    var child = node + 1
    for index in 0..<count {
      elements.append(try element(child, index))
      child = Int(self.node(child).next)
    }
    return elements
  }

  func isNull(_ node: Int) -> Bool { self.node(node).kind == .null }

  func bool(_ node: Int, _ path: @autoclosure Path) throws -> Bool {
    switch self.node(node).kind {
    case .trueValue: return true
    case .falseValue: return false
    default: throw leave(path(), "not a Bool")
    }
  }

  func string(_ node: Int, _ path: @autoclosure Path) throws -> String {
    let value = self.node(node)
    guard value.kind == .string || value.kind == .escapedString else {
      throw leave(path(), "not a String")
    }
    return document.string(value)
  }

  func integer<Value: FixedWidthInteger>(
    _ type: Value.Type, _ node: Int, _ path: @autoclosure Path
  ) throws -> Value {
    // `Int` read without the generic conversions an unspecialized call would look up at
    // run time (the containers' thirteen integer overloads share one generic body).
    if Value.self == Int.self {
      return unsafeBitCast(try int(node, path()), to: Value.self)
    }
    return try anyInteger(type, node, path())
  }

  /// ``integer(_:_:_:)`` for `Int`, specialized.
  func int(_ node: Int, _ path: @autoclosure Path) throws -> Int {
    try anyInteger(Int.self, node, path())
  }

  /// ``integer(_:_:_:)`` for any width.
  private func anyInteger<Value: FixedWidthInteger>(
    _ type: Value.Type, _ node: Int, _ path: @autoclosure Path
  ) throws -> Value {
    let value = self.node(node)
    guard value.kind == .integer else {
      guard value.kind == .number else { throw leave(path(), "not an integer literal") }
      throw leaveNumber(path(), node, "is not a whole number, which \(Value.self) needs")
    }
    let bytes = document.bytes
    var index = Int(value.start)
    let end = Int(value.end)
    let negative = bytes[index] == 0x2D
    if negative { index += 1 }
    // 19 digits always fit in a UInt64; more, and the most negative Int64 and beyond, are
    // read in 128 bits.
    guard end - index <= 19 else {
      return try wideInteger(type, node, negative: negative, digits: index..<end, path)
    }
    let digits = index..<end
    var magnitude: UInt64 = 0
    while index < end {
      magnitude = magnitude * 10 + UInt64(bytes[index] &- 0x30)
      index += 1
    }
    if negative {
      guard Value.isSigned else {
        throw leaveNumber(path(), node, "does not fit in \(Value.self)")
      }
      guard magnitude <= UInt64(Int64.max) else {
        return try wideInteger(type, node, negative: true, digits: digits, path)
      }
      guard let result = Value(exactly: -Int64(magnitude)) else {
        throw leaveNumber(path(), node, "does not fit in \(Value.self)")
      }
      return result
    }
    guard let result = Value(exactly: magnitude) else {
      throw leaveNumber(path(), node, "does not fit in \(Value.self)")
    }
    return result
  }

  /// An integer literal of more than 19 digits, or a negative one beyond `Int64`, read in
  /// 128 bits: `UInt64`'s largest values, `Int64.min`, and `Int128` and `UInt128` whole.
  /// Apart from ``integer(_:_:_:)`` so that the common case stays small.
  @inline(never)
  private func wideInteger<Value: FixedWidthInteger>(
    _ type: Value.Type, _ node: Int, negative: Bool, digits: Range<Int>, _ path: Path
  ) throws -> Value {
    let bytes = document.bytes
    var magnitude: UInt128 = 0
    var overflow = digits.count > 39
    for index in digits where !overflow {
      let (product, carried) = magnitude.multipliedReportingOverflow(by: 10)
      let (sum, added) = product.addingReportingOverflow(UInt128(bytes[index] &- 0x30))
      magnitude = sum
      overflow = carried || added
    }
    let result: Value?
    if overflow {
      result = nil
    } else if negative {
      let limit = UInt128(1) << 127
      result =
        magnitude > limit
        ? nil : Value(exactly: magnitude == limit ? Int128.min : -Int128(magnitude))
    } else {
      result = Value(exactly: magnitude)
    }
    guard let result else { throw leaveNumber(path(), node, "does not fit in \(Value.self)") }
    return result
  }

  func double(_ node: Int, _ path: @autoclosure Path) throws -> Double {
    let value = self.node(node)
    guard value.kind == .integer || value.kind == .number else {
      throw leave(path(), "not a number")
    }
    let bytes = document.bytes
    let start = Int(value.start)
    let end = Int(value.end)
    let text = bytes.withUnsafeBufferPointer {
      String(decoding: UnsafeBufferPointer(rebasing: $0[start..<end]), as: UTF8.self)
    }
    guard let result = Double(text), result.isFinite, !result.isSubnormal else {
      throw leaveNumber(path(), node, "is out of Double's range")
    }
    if result == 0 {
      // JSONDecoder's answers for a zero written with an exponent follow no rule the fast
      // path can mirror (it refuses `0e1` to `0e9`, `-0.0e3` and `0.00E72`, all valid JSON,
      // and takes `0e0`, `0e10`, `0e+1`): every such zero is left to it, so that the answer
      // is its own.
      if bytes[start..<end].contains(where: { $0 | 0x20 == 0x65 }) {
        throw leaveNumber(path(), node, "is a zero with an exponent, left to JSONDecoder")
      }
      // 1e-400 written out reads as zero; JSONDecoder refuses it. Only zeros are zero.
      if bytes[start..<end].contains(where: { $0 > 0x30 && $0 <= 0x39 }) {
        throw leaveNumber(path(), node, "underflows Double")
      }
    }
    return result
  }
}
