import CourierCore

/// One HTTP header field: a name and a value, kept exactly as sent or as configured.
///
/// Header lists are ordered arrays of `MockHeader` rather than dictionaries, so repeated
/// fields and their order survive; look values up case-insensitively with
/// ``RecordedRequest/header(_:)`` or ``MockResponse/header(_:)``.
public struct MockHeader: Hashable, Sendable, CustomStringConvertible {
  /// The field name, with the capitalisation it was sent with.
  public var name: String
  /// The field value, with leading and trailing whitespace removed.
  public var value: String

  /// Creates a header field.
  public init(name: String, value: String) {
    self.name = name
    self.value = value
  }

  /// The field as it appears on the wire, `Name: value`.
  public var description: String { "\(name): \(value)" }
}

extension [MockHeader] {
  /// The value of the first field named `name`, compared ASCII case-insensitively.
  func firstValue(named name: String) -> String? {
    first { asciiCaseInsensitiveEquals($0.name, name) }?.value
  }
}

/// Compares two strings ignoring ASCII case, without allocating.
func asciiCaseInsensitiveEquals(_ lhs: String, _ rhs: String) -> Bool {
  var left = lhs.utf8.makeIterator()
  var right = rhs.utf8.makeIterator()
  while true {
    switch (left.next(), right.next()) {
    case (nil, nil):
      return true
    case (let a?, let b?):
      if ASCII.lowercased(a) != ASCII.lowercased(b) { return false }
    default:
      return false
    }
  }
}
