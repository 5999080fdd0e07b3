/// A business code value: a number, a string or a boolean.
///
/// Codes compare exactly, never through `Double`:
///
/// - **Numbers** compare by exact decimal value, with any number of digits:
///   `9007199254740993` is not `9007199254740992`, and `-0` is `0`. A fraction or exponent
///   that leaves the same value is the same number (`1.0`, `1e0` and `10e-1` are all `1`), as
///   a JSON number is a value and as `JSONDecoder` reads `1.0` into an `Int` 1.
/// - **Strings** compare as exact text (Unicode canonical equivalence, as Swift `String`s do).
/// - **Booleans** compare as booleans.
///
/// Values of different types are never equal; ``EnvelopeRule/matchesAcrossTypes`` lets a
/// string whose text is a decimal number match that number.
///
/// ```swift
/// let codes: [EnvelopeCode] = [0, 200, "ok", true]
/// let fromConfig = EnvelopeCode(UInt64(18_446_744_073_709_551_615))
/// let beyondInt = EnvelopeCode(number: "123456789012345678901234567890")
/// ```
public struct EnvelopeCode: Hashable, Sendable, CustomStringConvertible,
  ExpressibleByIntegerLiteral, ExpressibleByStringLiteral, ExpressibleByBooleanLiteral
{
  private enum Storage: Hashable, Sendable {
    /// The number in the canonical form of ``EnvelopeCode/canonicalNumber(_:lenient:)``.
    case number(String)
    case string(String)
    case bool(Bool)
  }

  private let storage: Storage
  /// The code as written in JSON (without quotes for strings).
  public let text: String

  /// A numeric code.
  public init(integerLiteral value: Int) {
    self.init(value)
  }

  /// A numeric code built at run time, of any integer type (`Int`, `UInt64`, `Int128`, …).
  public init(_ value: some BinaryInteger) {
    text = String(value)
    // The decimal text of an integer always has a canonical form.
    storage = .number(Self.canonicalNumber(text.utf8, lenient: false) ?? text)
  }

  /// A numeric code from its JSON text, for numbers no integer type holds
  /// (`"123456789012345678901234567890"`) or with a fraction (`"1.5"`).
  ///
  /// Returns `nil` when `text` is not a JSON number (RFC 8259: no `+`, no leading zeros, no
  /// spaces, no `inf` or `nan`).
  public init?(number text: String) {
    guard let canonical = Self.canonicalNumber(text.utf8, lenient: false) else { return nil }
    storage = .number(canonical)
    self.text = text
  }

  /// A string code, compared exactly.
  public init(stringLiteral value: String) {
    self.init(value)
  }

  /// A string code built at run time, compared exactly.
  public init(_ value: String) {
    storage = .string(value)
    text = value
  }

  /// A boolean code (`{"success": true}`).
  public init(booleanLiteral value: Bool) {
    self.init(value)
  }

  /// A boolean code built at run time.
  public init(_ value: Bool) {
    storage = .bool(value)
    text = String(value)
  }

  /// A code read from JSON: `token` is a string's contents, or a number or literal as written
  /// (already validated by ``JSONScanner``).
  init(token: String, kind: JSONScanner.ValueKind) {
    switch kind {
    case .string: storage = .string(token)
    case .bool: storage = .bool(token == "true")
    default: storage = .number(Self.canonicalNumber(token.utf8, lenient: false) ?? "~" + token)
    }
    text = token
  }

  /// Whether two codes have the same type and value (`1.0 == 1`, `"1" != 1`).
  public static func == (lhs: EnvelopeCode, rhs: EnvelopeCode) -> Bool {
    lhs.storage == rhs.storage
  }

  /// Hashes the type and value, consistently with `==`.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(storage)
  }

  /// The code as written; a string code in quotes.
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

  /// Whether `other` is this code; across types, a string matches a number with the same
  /// decimal value (`"0"`, `"00"` and `"0.0"` match `0`) and a boolean with the same text.
  func matches(_ other: EnvelopeCode, acrossTypes: Bool) -> Bool {
    if storage == other.storage { return true }
    guard acrossTypes else { return false }
    switch (storage, other.storage) {
    case (.number(let number), .string(let string)), (.string(let string), .number(let number)):
      return Self.canonicalNumber(string.utf8, lenient: true) == number
    case (.bool, .string), (.string, .bool):
      return text == other.text
    default:
      return false
    }
  }

  /// The exact value of a decimal number as text that is equal for equal values: an optional
  /// `-`, the significant digits without leading or trailing zeros, and `e` with the power of
  /// ten when it is not 0. Zero (`0`, `-0`, `0.0e7`) is `"0"`; `100` is `"1e2"`; `1.50` is
  /// `"15e-1"`.
  ///
  /// `lenient` also accepts a leading `+` and leading zeros (for string codes compared across
  /// types). Returns `nil` when `utf8` is not such a number. An exponent too large for `Int`
  /// gives `"~"` and the text as written, which equals only the same text: such a code can
  /// fail to match an equal value written differently, never match a different one.
  static func canonicalNumber(_ utf8: some BidirectionalCollection<UInt8>, lenient: Bool) -> String?
  {
    // The common case, a plain integer such as 0 or 40101, is its own canonical form.
    if let last = utf8.last, last != UInt8(ascii: "0") || utf8.count == 1,
      utf8.first != UInt8(ascii: "-") && utf8.first != UInt8(ascii: "+"),
      utf8.first != UInt8(ascii: "0") || utf8.count == 1, utf8.allSatisfy(ASCII.isDigit)
    {
      return String(decoding: utf8, as: UTF8.self)
    }
    var bytes = utf8[...]
    let negative = bytes.first == UInt8(ascii: "-")
    if negative || (lenient && bytes.first == UInt8(ascii: "+")) { bytes = bytes.dropFirst() }
    let integer = bytes.prefix(while: ASCII.isDigit)
    guard !integer.isEmpty else { return nil }
    if !lenient && integer.count > 1 && integer.first == UInt8(ascii: "0") { return nil }
    bytes = bytes[integer.endIndex...]
    var fraction = bytes.prefix(0)
    if bytes.first == UInt8(ascii: ".") {
      fraction = bytes.dropFirst().prefix(while: ASCII.isDigit)
      guard !fraction.isEmpty else { return nil }
      bytes = bytes[fraction.endIndex...]
    }
    var exponent = 0
    var exponentOverflows = false
    if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
      bytes = bytes.dropFirst()
      let exponentNegative = bytes.first == UInt8(ascii: "-")
      if exponentNegative || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
      let digits = bytes.prefix(while: ASCII.isDigit)
      guard !digits.isEmpty else { return nil }
      bytes = bytes[digits.endIndex...]
      let significant = digits.drop { $0 == UInt8(ascii: "0") }
      if significant.count > 18 {
        exponentOverflows = true
      } else {
        for digit in significant { exponent = exponent * 10 + Int(digit &- UInt8(ascii: "0")) }
        if exponentNegative { exponent = -exponent }
      }
    }
    guard bytes.isEmpty else { return nil }

    var digits = Array(integer) + Array(fraction)
    guard let first = digits.firstIndex(where: { $0 != UInt8(ascii: "0") }) else { return "0" }
    digits.removeFirst(first)
    var trailing = 0
    while digits.last == UInt8(ascii: "0") {
      digits.removeLast()
      trailing += 1
    }
    let (shifted, overflow) = exponent.addingReportingOverflow(trailing - fraction.count)
    if exponentOverflows || overflow { return "~" + String(decoding: utf8, as: UTF8.self) }
    var canonical = negative ? "-" : ""
    canonical += String(decoding: digits, as: UTF8.self)
    if shifted != 0 { canonical += "e" + String(shifted) }
    return canonical
  }
}
