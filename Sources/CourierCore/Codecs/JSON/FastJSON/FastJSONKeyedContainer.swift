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

/// `super`, the key of ``FastJSONKeyedContainer/superDecoder()``.
private struct FastJSONSuperKey: CodingKey {
  var stringValue: String { "super" }
  var intValue: Int? { nil }
  init() {}
  init?(stringValue: String) { nil }
  init?(intValue: Int) { nil }
}
