/// A type-safe bag of per-request options keyed by ``RequestAttributeKey`` types.
///
/// A value type: a middleware that sets an attribute on its copy of a request changes nothing
/// for the request it was given, nor for any other request. Every key Courier defines, with
/// who sets it and who reads it, is listed in `Docs/RequestAttributes.md`.
public struct RequestAttributes: Sendable {
  /// Each stored value, boxed as the exact type its key declares.
  private var values: [ObjectIdentifier: any Sendable] = [:]

  /// Creates an empty attribute bag.
  public init() {}

  /// The value for `key`, or the key's default when unset. Setting `nil` for an optional
  /// value stores `nil` (it does not remove the key); to reset a key use
  /// ``removeValue(for:)``.
  public subscript<Key: RequestAttributeKey>(key: Key.Type) -> Key.Value {
    get {
      // The box's exact type, so an optional value's `nil` reads back as itself.
      guard let stored = values[ObjectIdentifier(key)] as? Stored<Key.Value> else {
        return Key.defaultValue
      }
      return stored.value
    }
    set { values[ObjectIdentifier(key)] = Stored(value: newValue) }
  }

  /// Removes any value stored for `key`, so reads give its default again.
  public mutating func removeValue<Key: RequestAttributeKey>(for key: Key.Type) {
    values[ObjectIdentifier(key)] = nil
  }

  /// Whether a value was stored for `key`.
  public func contains<Key: RequestAttributeKey>(_ key: Key.Type) -> Bool {
    values[ObjectIdentifier(key)] != nil
  }

  /// The number of keys with a stored value.
  public var count: Int { values.count }

  /// Whether no key has a stored value.
  public var isEmpty: Bool { values.isEmpty }
}

/// A value stored under a key, wrapped so that reading it back casts to exactly its key's
/// value type (a bare `Optional` in an existential would cast more loosely).
private struct Stored<Value: Sendable>: Sendable {
  let value: Value
}
