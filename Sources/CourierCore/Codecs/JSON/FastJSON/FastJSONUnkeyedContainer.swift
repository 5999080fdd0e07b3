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
