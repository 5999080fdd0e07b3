/// A token of generated Swift source, as ``SwiftTokens/lex(_:)`` reads it.
enum SwiftToken: Equatable, CustomStringConvertible {
  /// An identifier or keyword.
  case word(String)
  /// A number literal.
  case number(String)
  /// A string literal, by its value.
  case string(String)
  /// Any other character of code.
  case punctuation(Unicode.Scalar)

  var description: String {
    switch self {
    case .word(let text), .number(let text): text
    case .string(let value): "\"\(value.debugDescription.dropFirst().dropLast())\""
    case .punctuation(let scalar): String(scalar)
    }
  }

  /// The token with a string literal's value left out: the shape of the code.
  var shape: SwiftToken { if case .string = self { .string("") } else { self } }
}

/// A strict reader of the Swift the generator writes, for the hostile-spec tests.
///
/// It is stricter than the Swift compiler wherever the two could disagree: a `//` comment ends
/// at any character that ends a line for some reader (LF, CR, VT, FF, NEL, LS, PS, not only LF
/// and CR as for the compiler), and anything the generator never writes — a raw control or
/// line-separator character outside a comment or inside a literal, a block comment, a raw or
/// multi-line string, an interpolation, an unknown escape, a backtick, `#`, a non-ASCII
/// character in code — is an error. So text that the generated file holds outside a comment
/// or a literal for any reader shows up as tokens of code here.
enum SwiftTokens {
  struct LexError: Error, CustomStringConvertible {
    var message: String
    var line: Int
    var description: String { "line \(line): \(message)" }
  }

  static func isLineBreak(_ scalar: Unicode.Scalar) -> Bool {
    [0x0A, 0x0B, 0x0C, 0x0D, 0x85, 0x2028, 0x2029].contains(scalar.value)
  }

  static func isControl(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.properties.generalCategory {
    case .control, .lineSeparator, .paragraphSeparator: true
    default: false
    }
  }

  static func isWordStart(_ scalar: Unicode.Scalar) -> Bool {
    scalar == "_" || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
  }

  static func isDigit(_ scalar: Unicode.Scalar) -> Bool { ("0"..."9").contains(scalar) }

  /// The tokens of `source`, comments dropped.
  static func lex(_ source: String) throws(LexError) -> [SwiftToken] {
    let scalars = Array(source.unicodeScalars)
    var tokens: [SwiftToken] = []
    var index = 0
    var line = 1
    func fail(_ message: String) -> LexError { LexError(message: message, line: line) }
    while index < scalars.count {
      let scalar = scalars[index]
      switch scalar {
      case "\n":
        line += 1
        index += 1
      case " ":
        index += 1
      case "/" where index + 1 < scalars.count && scalars[index + 1] == "/":
        while index < scalars.count, !isLineBreak(scalars[index]) { index += 1 }
      case "/" where index + 1 < scalars.count && scalars[index + 1] == "*":
        throw fail("a block comment")
      case "\"":
        if index + 2 < scalars.count, scalars[index + 1] == "\"", scalars[index + 2] == "\"" {
          throw fail("a multi-line string literal")
        }
        index += 1
        var value = String.UnicodeScalarView()
        while true {
          guard index < scalars.count else { throw fail("an unterminated string literal") }
          let character = scalars[index]
          index += 1
          if character == "\"" { break }
          if isControl(character) {
            throw fail("a raw U+\(String(character.value, radix: 16)) in a string literal")
          }
          guard character == "\\" else {
            value.append(character)
            continue
          }
          guard index < scalars.count else { throw fail("a backslash at the end") }
          let escape = scalars[index]
          index += 1
          switch escape {
          case "\\": value.append("\\")
          case "\"": value.append("\"")
          case "'": value.append("'")
          case "n": value.append("\n")
          case "r": value.append("\r")
          case "t": value.append("\t")
          case "0": value.append("\0")
          case "u":
            guard index < scalars.count, scalars[index] == "{" else { throw fail("\\u without {") }
            index += 1
            var hex = ""
            while index < scalars.count, scalars[index] != "}", hex.count <= 8 {
              hex.unicodeScalars.append(scalars[index])
              index += 1
            }
            guard index < scalars.count, scalars[index] == "}", (1...8).contains(hex.count),
              let code = UInt32(hex, radix: 16), let decoded = Unicode.Scalar(code)
            else { throw fail("an invalid \\u{\(hex)}") }
            index += 1
            value.append(decoded)
          default:
            throw fail("the escape \\\(escape) (an interpolation or unknown escape)")
          }
        }
        tokens.append(.string(String(value)))
      case _ where isWordStart(scalar):
        var word = String.UnicodeScalarView()
        while index < scalars.count, isWordStart(scalars[index]) || isDigit(scalars[index]) {
          word.append(scalars[index])
          index += 1
        }
        tokens.append(.word(String(word)))
      case _ where isDigit(scalar):
        var number = String.UnicodeScalarView()
        while index < scalars.count,
          isDigit(scalars[index])
            || (scalars[index] == "." && index + 1 < scalars.count && isDigit(scalars[index + 1]))
            || scalars[index] == "e" || scalars[index] == "E"
            || ((scalars[index] == "+" || scalars[index] == "-")
              && (number.last == "e" || number.last == "E"))
        {
          number.append(scalars[index])
          index += 1
        }
        tokens.append(.number(String(number)))
      case "#", "`", "\\":
        throw fail("'\(scalar)' in code")
      default:
        guard scalar.isASCII, !isControl(scalar) else {
          throw fail("U+\(String(scalar.value, radix: 16)) in code")
        }
        tokens.append(.punctuation(scalar))
        index += 1
      }
    }
    return tokens
  }
}
