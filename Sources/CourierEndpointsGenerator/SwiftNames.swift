/// Rules for the Swift names a spec declares, so that the generated code always compiles and
/// passes `swift format lint` (lower camel case for functions and arguments, upper camel case
/// for namespaces).
package enum SwiftNames {
  /// Words that cannot be used as a name without backticks; the spec rejects them instead.
  static let keywords: Set<String> = [
    "Any", "Protocol", "Self", "Type", "actor", "as", "associatedtype", "async", "await",
    "break", "case", "catch", "class", "continue", "default", "defer", "deinit", "do", "else",
    "enum", "extension", "fallthrough", "false", "fileprivate", "for", "func", "guard", "if",
    "import", "in", "init", "inout", "internal", "is", "let", "nil", "open", "operator",
    "package", "precedencegroup", "private", "protocol", "public", "repeat", "rethrows",
    "return", "self", "some", "static", "struct", "subscript", "super", "switch", "throw",
    "throws", "true", "try", "typealias", "var", "where", "while", "any", "consume", "copy",
    "discard", "each", "borrowing", "consuming", "endpoint",
  ]

  /// Whether `name` is an ASCII identifier that is not a keyword (nor `_`, which Swift
  /// reserves).
  static func isIdentifier(_ name: String) -> Bool {
    guard let first = name.unicodeScalars.first, !keywords.contains(name), name != "_" else {
      return false
    }
    guard first == "_" || isLetter(first) else { return false }
    return name.unicodeScalars.allSatisfy { $0 == "_" || isLetter($0) || isDigit($0) }
  }

  /// Whether `name` is an identifier starting with a lower-case letter.
  static func isLowerCamel(_ name: String) -> Bool {
    guard isIdentifier(name), let first = name.unicodeScalars.first else { return false }
    return ("a"..."z").contains(first) && !name.contains("_")
  }

  /// Whether `name` is an identifier starting with an upper-case letter.
  static func isUpperCamel(_ name: String) -> Bool {
    guard isIdentifier(name), let first = name.unicodeScalars.first else { return false }
    return ("A"..."Z").contains(first) && !name.contains("_")
  }

  /// `page_size` → `pageSize`, `X-Request-Id` → `xRequestId`; `nil` when no identifier comes
  /// out (a name starting with a digit, or a keyword).
  static func lowerCamel(from wireName: String) -> String? {
    let words = wireName.split(whereSeparator: {
      !isLetter($0.unicodeScalars.first ?? " ") && !isDigit($0.unicodeScalars.first ?? " ")
    })
    guard let first = words.first else { return nil }
    var result = first.prefix(1).lowercased() + first.dropFirst()
    if first.allSatisfy({ $0.isUppercase || $0.isNumber }) { result = first.lowercased() }
    for word in words.dropFirst() {
      result += word.prefix(1).uppercased() + word.dropFirst()
    }
    return isLowerCamel(result) ? result : nil
  }

  /// The modules whose names the generated code writes in front of the types it names itself
  /// (`CourierCore.Endpoint`, `Foundation.Data`, `Swift.String`), so that nothing the spec or
  /// its target declares can stand in for them. A namespace of one of these names would hide
  /// the module, so the spec may not declare one.
  static let qualifyingModules: Set<String> = ["CourierCore", "Foundation", "Swift"]

  /// Whether `type` is a Swift type as a spec may write it: a dotted name with generic
  /// arguments, `[Element]`, `[Key: Value]`, each optionally followed by `?`. `Self` and `Any`
  /// are refused: in the generated code `Self` is the enclosing namespace, and `Any` is neither
  /// `Sendable` nor `Decodable`.
  static func isTypeName(_ type: String) -> Bool {
    var scanner = TypeScanner(Array(type.unicodeScalars))
    return scanner.type() && scanner.atEnd
  }

  /// The first name of every dotted name in `type` (`Result<API.User, Never>` → `Result`,
  /// `API`, `Never`): the names Swift looks up from the place the type is written, which a
  /// namespace of the same name around that place hides. Empty when `type` is not a type
  /// name.
  static func typeRoots(_ type: String) -> [String] {
    var scanner = TypeScanner(Array(type.unicodeScalars))
    guard scanner.type(), scanner.atEnd else { return [] }
    return scanner.roots
  }

  private static func isLetter(_ scalar: Unicode.Scalar) -> Bool {
    ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
  }

  private static func isDigit(_ scalar: Unicode.Scalar) -> Bool {
    ("0"..."9").contains(scalar)
  }

  private struct TypeScanner {
    let scalars: [Unicode.Scalar]
    var index = 0
    var depth = 0
    /// The first identifier of each dotted name read so far.
    var roots: [String] = []

    init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

    var atEnd: Bool { index == scalars.count }

    mutating func skipSpaces() {
      while index < scalars.count, scalars[index] == " " { index += 1 }
    }

    mutating func take(_ scalar: Unicode.Scalar) -> Bool {
      skipSpaces()
      guard index < scalars.count, scalars[index] == scalar else { return false }
      index += 1
      return true
    }

    mutating func type() -> Bool {
      depth += 1
      defer { depth -= 1 }
      guard depth < 16 else { return false }
      skipSpaces()
      if take("[") {
        guard type() else { return false }
        if take(":") { guard type() else { return false } }
        guard take("]") else { return false }
      } else {
        guard let root = identifier() else { return false }
        roots.append(root)
        while take(".") { guard identifier() != nil else { return false } }
        if take("<") {
          repeat { guard type() else { return false } } while take(",")
          guard take(">") else { return false }
        }
      }
      while take("?") {}
      skipSpaces()
      return true
    }

    /// The identifier at the current position, or `nil` when there is none or it is a keyword
    /// or `_` (a type placeholder, which a declaration cannot name).
    mutating func identifier() -> String? {
      skipSpaces()
      let start = index
      while index < scalars.count,
        scalars[index] == "_" || isLetter(scalars[index])
          || (index > start && isDigit(scalars[index]))
      {
        index += 1
      }
      guard index > start else { return nil }
      let name = String(String.UnicodeScalarView(scalars[start..<index]))
      return keywords.contains(name) || name == "_" ? nil : name
    }
  }
}
