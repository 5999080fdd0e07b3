/// One query parameter. Order is kept, names may repeat, and a `nil` value writes the name
/// alone (`?flag`) while an empty value writes `?flag=`.
public struct QueryItem: Sendable, Hashable {
  /// The parameter name, unencoded.
  public var name: String
  /// The parameter value, unencoded; `nil` for a name with no `=`.
  public var value: String?

  /// Creates a query item from unencoded text.
  public init(_ name: String, _ value: String?) {
    self.name = name
    self.value = value
  }
}
