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
