/// A JSON value that remembers where it was written, so that a spec's problems can be
/// reported on the right line and column. Foundation's `JSONSerialization` gives no positions.
package struct JSONNode: Sendable {
  /// A member of an object: its key, where the key starts, and the value.
  package struct Member: Sendable {
    /// The key, unescaped.
    package var key: String
    /// Where the key's opening quote is.
    package var keyLocation: SourceLocation
    /// The value.
    package var value: JSONNode
  }

  /// The kinds of JSON value.
  package enum Value: Sendable {
    /// An object, members in the order written.
    case object([Member])
    /// An array.
    case array([JSONNode])
    /// A string, unescaped.
    case string(String)
    /// A number, as written.
    case number(String)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null
  }

  /// The value.
  package var value: Value
  /// Where the value starts (its opening quote or bracket, or first character).
  package var location: SourceLocation
  /// For a string written without escapes, where its first character is; `nil` when the
  /// string holds an escape, so that positions inside it cannot be computed exactly.
  package var plainStringStart: SourceLocation?

  /// What a spec's diagnostics call this kind of value.
  package var kindName: String {
    switch value {
    case .object: "an object"
    case .array: "an array"
    case .string: "a string"
    case .number: "a number"
    case .bool: "a boolean"
    case .null: "null"
    }
  }
}
