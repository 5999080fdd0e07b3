/// A business code value: a number, a string or a boolean.
public struct EnvelopeCode: Hashable, Sendable, CustomStringConvertible,
  ExpressibleByIntegerLiteral, ExpressibleByStringLiteral, ExpressibleByBooleanLiteral
{
  private enum Storage: Hashable, Sendable {
    case number(Double)
    case string(String)
    case bool(Bool)
  }

  private let storage: Storage
  /// The code as written in JSON (without quotes for strings).
  public let text: String

  /// A numeric code.
  public init(integerLiteral value: Int) {
    storage = .number(Double(value))
    text = String(value)
  }

  /// A string code, compared exactly.
  public init(stringLiteral value: String) {
    storage = .string(value)
    text = value
  }

  /// A boolean code (`{"success": true}`).
  public init(booleanLiteral value: Bool) {
    storage = .bool(value)
    text = String(value)
  }

  init(token: String, kind: JSONScanner.ValueKind) {
    switch kind {
    case .string: storage = .string(token)
    case .bool: storage = .bool(token == "true")
    default: storage = .number(Double(token) ?? .nan)
    }
    text = token
  }

  /// The code as written.
  public var description: String {
    if case .string(let value) = storage { return value.debugDescription }
    return text
  }

  var typeName: String {
    switch storage {
    case .number: "a number"
    case .string: "a string"
    case .bool: "a boolean"
    }
  }

  func hasSameType(as other: EnvelopeCode) -> Bool {
    switch (storage, other.storage) {
    case (.number, .number), (.string, .string), (.bool, .bool): true
    default: false
    }
  }

  func matches(_ other: EnvelopeCode, acrossTypes: Bool) -> Bool {
    if storage == other.storage { return true }
    guard acrossTypes else { return false }
    if case .number(let mine) = storage, let theirs = Double(other.text) { return mine == theirs }
    if case .number(let theirs) = other.storage, let mine = Double(text) { return mine == theirs }
    return text == other.text
  }
}
