import Foundation
import Synchronization

/// Courier's fast path for `ResponseDecoding.json`: decodes `Decodable` values from a
/// ``FastJSONDocument`` with the same results as Foundation's `JSONDecoder` at its default
/// settings, in a fraction of its time (measured in `courier-bench envelope`).
///
/// It never decides anything `JSONDecoder` might decide differently. ``decode(_:from:like:)``
/// returns `nil` — and the caller decodes with `JSONDecoder`, whose value or error then
/// stands — when:
/// - the decoder is a subclass of `JSONDecoder`, or has any setting other than its default
///   (key, date, data and non-conforming float strategies, `userInfo`, JSON5, top-level
///   dictionary);
/// - the document is one ``FastJSONDocument`` does not take (see there);
/// - decoding asked for something this path leaves alone: `Float`, `Decimal`, `Data`, an
///   integer written with a fraction or an exponent, a number out of `Double`'s range, a key
///   of an object with two keys that hash the same (keys equal only after Unicode
///   normalisation hash the same), the keys of an object two of which have the same
///   `intValue`, a URL `URL(string:)` refuses;
/// - anything threw, even an error the type caught and recovered from (`try?`): the type
///   might have recovered differently from `JSONDecoder`'s error.
///
/// A model that asked for `Float`, `Decimal` or `Data` once goes straight to `JSONDecoder`
/// afterwards (``modelsLeftToFoundation``).
enum FastJSONDecoder {
  /// The decoded value, or `nil` when `JSONDecoder` must decide (see the type's notes).
  static func decode<Value: Decodable>(
    _ type: Value.Type, from data: Data, like decoder: JSONDecoder
  ) -> Value? {
    let model = ObjectIdentifier(Value.self)
    guard usesDefaults(decoder), !FastJSONState.isLeftToFoundation(Value.self),
      !modelsLeftToFoundation.withLock({ $0.contains(model) }),
      let document = FastJSONDocument(data)
    else { return nil }
    let state = FastJSONState(document)
    let value = try? state.decode(Value.self, node: 0, path: [])
    if state.metTypeLeftToFoundation {
      modelsLeftToFoundation.withLock { models in
        if models.count < maximumModelsRemembered { models.insert(model) }
      }
    }
    guard let value, !state.isTainted else { return nil }
    return value
  }

  /// Why a number in `data` did not convert to the type `Value` asks for there — its literal,
  /// its coding path and the type (`1.5 at "v" is not a whole number, which Int needs`) — or
  /// `nil` when no number was the problem or this path cannot tell. Run only after
  /// `JSONDecoder` failed: on Linux it reports such a number as "The given data was not
  /// valid JSON." at the root, which sends a reader looking for a syntax error.
  static func numberProblem<Value: Decodable>(
    _ type: Value.Type, from data: Data, like decoder: JSONDecoder
  ) -> String? {
    guard usesDefaults(decoder), let document = FastJSONDocument(data) else { return nil }
    let state = FastJSONState(document)
    _ = try? state.decode(Value.self, node: 0, path: [])
    return state.numberProblem
  }

  /// Models that asked for a type this path leaves to `JSONDecoder` (`Float`, `Decimal`,
  /// `Data`): they go straight to `JSONDecoder` from then on, instead of paying for a parse
  /// and a partial decoding first on every response. A cache, not a setting; bounded by
  /// ``maximumModelsRemembered``.
  static let modelsLeftToFoundation = Mutex<Set<ObjectIdentifier>>([])

  /// How many models ``modelsLeftToFoundation`` remembers at most.
  static let maximumModelsRemembered = 1_000

  /// Whether `decoder` is a plain `JSONDecoder` with every setting at its default. A subclass
  /// may decode its own way (an override of `decode(_:from:)` that unwraps an envelope, say),
  /// so only `JSONDecoder` itself is taken to decode as `JSONDecoder` does.
  static func usesDefaults(_ decoder: JSONDecoder) -> Bool {
    guard type(of: decoder) == JSONDecoder.self,
      case .useDefaultKeys = decoder.keyDecodingStrategy,
      case .deferredToDate = decoder.dateDecodingStrategy,
      case .base64 = decoder.dataDecodingStrategy,
      case .throw = decoder.nonConformingFloatDecodingStrategy
    else { return false }
    return decoder.userInfo.isEmpty && !decoder.allowsJSON5 && !decoder.assumesTopLevelDictionary
  }
}

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
      // 1e-400 reads as zero; JSONDecoder refuses it. Only a mantissa of zeros is zero.
      for byte in bytes[start..<end] {
        if byte == 0x65 || byte == 0x45 { break }
        if byte > 0x30, byte <= 0x39 { throw leaveNumber(path(), node, "underflows Double") }
      }
    }
    return result
  }
}

/// An index in an array, as a coding path names it (`Index 3`).
struct FastJSONIndexKey: CodingKey {
  let intValue: Int?
  let stringValue: String

  init(_ index: Int) {
    intValue = index
    stringValue = "Index \(index)"
  }

  init?(stringValue: String) { nil }
  init?(intValue: Int) { self.init(intValue) }
}

/// `super`, the key of ``FastJSONKeyedContainer/superDecoder()``.
private struct FastJSONSuperKey: CodingKey {
  var stringValue: String { "super" }
  var intValue: Int? { nil }
  init() {}
  init?(stringValue: String) { nil }
  init?(intValue: Int) { nil }
}

/// The `Decoder` a type's `init(from:)` gets on the fast path.
struct FastJSONValueDecoder: Decoder {
  let state: FastJSONState
  let node: Int
  let codingPath: [any CodingKey]
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    guard state.node(node).kind == .object else { throw state.leave(codingPath, "not an object") }
    return KeyedDecodingContainer(
      FastJSONKeyedContainer<Key>(state: state, object: node, codingPath: codingPath))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    guard state.node(node).kind == .array else { throw state.leave(codingPath, "not an array") }
    return FastJSONUnkeyedContainer(state: state, array: node, codingPath: codingPath)
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer {
    FastJSONSingleValueContainer(state: state, node: node, codingPath: codingPath)
  }
}

/// An object's members.
struct FastJSONKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let state: FastJSONState
  let object: Int
  let codingPath: [any CodingKey]

  /// The keys in document order. `JSONDecoder` gives them in its dictionary's order, which
  /// can differ from one decoding to the next; that decides the value when a model stores
  /// two keys in one place, as `[Int: Value]` stores `"1"` and `"01"` (the later one wins),
  /// so an object with two keys of the same `intValue` is left to `JSONDecoder`.
  var allKeys: [Key] {
    let node = state.node(object)
    if node.end != 0 { _ = state.leave(codingPath, "duplicate keys") }
    var keys: [Key] = []
    keys.reserveCapacity(Int(node.count))
    var integers: Set<Int> = []
    var child = object + 1
    for _ in 0..<node.count {
      if let key = Key(stringValue: state.document.string(state.node(child))) {
        if let integer = key.intValue, !integers.insert(integer).inserted {
          _ = state.leave(codingPath, "two keys with the intValue \(integer)")
        }
        keys.append(key)
      }
      child = Int(state.node(child + 1).next)
    }
    return keys
  }

  /// The index of `key`'s value node, or `nil`.
  private func find(_ key: Key) -> Int? {
    let node = state.node(object)
    if node.end != 0 {
      _ = state.leave(codingPath, "duplicate keys")
      return nil
    }
    let name = key.stringValue
    let hash = FastJSONDocument.hash(name.utf8)
    if node.count > FastJSONState.indexedMemberCount {
      guard let child = state.keyNode(hash: hash, inObject: object),
        state.document.keyEquals(state.node(child), name)
      else { return nil }
      return child + 1
    }
    var child = object + 1
    for _ in 0..<node.count {
      let keyNode = state.node(child)
      if keyNode.count == hash, state.document.keyEquals(keyNode, name) {
        return child + 1
      }
      child = Int(state.node(child + 1).next)
    }
    return nil
  }

  private func value(_ key: Key) throws -> Int {
    guard let node = find(key) else { throw state.leave(codingPath + [key], "no such key") }
    return node
  }

  func contains(_ key: Key) -> Bool { find(key) != nil }

  func decodeNil(forKey key: Key) throws -> Bool { state.isNull(try value(key)) }

  func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
    try state.bool(try value(key), codingPath + [key])
  }

  func decode(_ type: String.Type, forKey key: Key) throws -> String {
    try state.string(try value(key), codingPath + [key])
  }

  func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
    try state.double(try value(key), codingPath + [key])
  }

  func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
    throw state.leaveForType(codingPath + [key], "Float")
  }

  func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(type, key) }

  func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(type, key) }

  func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(type, key) }

  func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(type, key) }

  func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(type, key) }

  func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(type, key) }

  func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(type, key) }

  func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(type, key) }

  func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(type, key) }

  func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(type, key) }

  func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 { try integer(type, key) }

  func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 { try integer(type, key) }

  private func integer<Value: FixedWidthInteger>(_ type: Value.Type, _ key: Key) throws -> Value {
    try state.integer(type, try value(key), codingPath + [key])
  }

  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    try state.decode(type, node: try value(key), path: codingPath + [key])
  }

  func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type, forKey key: Key
  ) throws -> KeyedDecodingContainer<NestedKey> {
    try FastJSONValueDecoder(state: state, node: try value(key), codingPath: codingPath + [key])
      .container(keyedBy: type)
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    try FastJSONValueDecoder(state: state, node: try value(key), codingPath: codingPath + [key])
      .unkeyedContainer()
  }

  func superDecoder() throws -> any Decoder {
    guard let superKey = Key(stringValue: "super") else {
      throw state.leave(codingPath + [FastJSONSuperKey()], "super")
    }
    return try superDecoder(forKey: superKey)
  }

  func superDecoder(forKey key: Key) throws -> any Decoder {
    FastJSONValueDecoder(state: state, node: try value(key), codingPath: codingPath + [key])
  }
}

/// An array's elements, in order.
struct FastJSONUnkeyedContainer: UnkeyedDecodingContainer {
  let state: FastJSONState
  let codingPath: [any CodingKey]
  let count: Int?
  private(set) var currentIndex = 0
  /// The node of the element at `currentIndex`.
  private var cursor: Int

  init(state: FastJSONState, array: Int, codingPath: [any CodingKey]) {
    self.state = state
    self.codingPath = codingPath
    count = Int(state.node(array).count)
    cursor = array + 1
  }

  var isAtEnd: Bool { currentIndex >= (count ?? 0) }

  private var elementPath: [any CodingKey] { codingPath + [FastJSONIndexKey(currentIndex)] }

  /// The current element's node and index; moves past it.
  private mutating func next() throws -> (node: Int, index: Int) {
    guard !isAtEnd else { throw state.leave(elementPath, "past the end") }
    let node = cursor
    let index = currentIndex
    cursor = Int(state.node(node).next)
    currentIndex += 1
    return (node, index)
  }

  /// The coding path of the element at `index`.
  private func path(_ index: Int) -> [any CodingKey] { codingPath + [FastJSONIndexKey(index)] }

  mutating func decodeNil() throws -> Bool {
    guard !isAtEnd else { throw state.leave(elementPath, "past the end") }
    guard state.isNull(cursor) else { return false }
    _ = try next()
    return true
  }

  mutating func decode(_ type: Bool.Type) throws -> Bool {
    let (node, index) = try next()
    return try state.bool(node, path(index))
  }

  mutating func decode(_ type: String.Type) throws -> String {
    let (node, index) = try next()
    return try state.string(node, path(index))
  }

  mutating func decode(_ type: Double.Type) throws -> Double {
    let (node, index) = try next()
    return try state.double(node, path(index))
  }

  mutating func decode(_ type: Float.Type) throws -> Float {
    throw state.leaveForType(elementPath, "Float")
  }

  mutating func decode(_ type: Int.Type) throws -> Int { try integer(type) }
  mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
  mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
  mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
  mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
  mutating func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
  mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
  mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
  mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
  mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }
  mutating func decode(_ type: Int128.Type) throws -> Int128 { try integer(type) }
  mutating func decode(_ type: UInt128.Type) throws -> UInt128 { try integer(type) }

  private mutating func integer<Value: FixedWidthInteger>(_ type: Value.Type) throws -> Value {
    let (node, index) = try next()
    return try state.integer(type, node, path(index))
  }

  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
    let (node, index) = try next()
    return try state.decode(type, node: node, path: path(index))
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type
  ) throws -> KeyedDecodingContainer<NestedKey> {
    let (node, index) = try next()
    return try FastJSONValueDecoder(state: state, node: node, codingPath: path(index))
      .container(keyedBy: type)
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    let (node, index) = try next()
    return try FastJSONValueDecoder(state: state, node: node, codingPath: path(index))
      .unkeyedContainer()
  }

  mutating func superDecoder() throws -> any Decoder {
    let (node, index) = try next()
    return FastJSONValueDecoder(state: state, node: node, codingPath: path(index))
  }
}

/// One value.
struct FastJSONSingleValueContainer: SingleValueDecodingContainer {
  let state: FastJSONState
  let node: Int
  let codingPath: [any CodingKey]

  func decodeNil() -> Bool { state.isNull(node) }
  func decode(_ type: Bool.Type) throws -> Bool { try state.bool(node, codingPath) }
  func decode(_ type: String.Type) throws -> String { try state.string(node, codingPath) }
  func decode(_ type: Double.Type) throws -> Double { try state.double(node, codingPath) }
  func decode(_ type: Float.Type) throws -> Float { throw state.leaveForType(codingPath, "Float") }
  func decode(_ type: Int.Type) throws -> Int { try state.integer(type, node, codingPath) }
  func decode(_ type: Int8.Type) throws -> Int8 { try state.integer(type, node, codingPath) }
  func decode(_ type: Int16.Type) throws -> Int16 { try state.integer(type, node, codingPath) }
  func decode(_ type: Int32.Type) throws -> Int32 { try state.integer(type, node, codingPath) }
  func decode(_ type: Int64.Type) throws -> Int64 { try state.integer(type, node, codingPath) }
  func decode(_ type: UInt.Type) throws -> UInt { try state.integer(type, node, codingPath) }
  func decode(_ type: UInt8.Type) throws -> UInt8 { try state.integer(type, node, codingPath) }
  func decode(_ type: UInt16.Type) throws -> UInt16 { try state.integer(type, node, codingPath) }
  func decode(_ type: UInt32.Type) throws -> UInt32 { try state.integer(type, node, codingPath) }
  func decode(_ type: UInt64.Type) throws -> UInt64 { try state.integer(type, node, codingPath) }
  func decode(_ type: Int128.Type) throws -> Int128 { try state.integer(type, node, codingPath) }
  func decode(_ type: UInt128.Type) throws -> UInt128 { try state.integer(type, node, codingPath) }

  func decode<T: Decodable>(_ type: T.Type) throws -> T {
    try state.decode(type, node: node, path: codingPath)
  }
}
