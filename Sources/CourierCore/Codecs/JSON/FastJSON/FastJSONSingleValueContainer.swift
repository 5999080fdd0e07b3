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
