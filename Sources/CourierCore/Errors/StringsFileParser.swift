import Foundation

/// A parser for the `"key" = "value";` lines of a `.strings` file, with `//` and `/* */`
/// comments and the escapes `\"`, `\\`, `\n`, `\t`.
enum StringsFileParser {
  static func parse(_ data: Data) throws -> [String: String] {
    guard let text = String(bytes: data, encoding: .utf8) else {
      throw failure("is not UTF-8")
    }
    var result: [String: String] = [:]
    var scalars = Array(text.unicodeScalars)[...]
    func skipSpaceAndComments() {
      while let first = scalars.first {
        if first.properties.isWhitespace {
          scalars.removeFirst()
        } else if scalars.starts(with: "//".unicodeScalars) {
          while let next = scalars.first, next != "\n" { scalars.removeFirst() }
        } else if scalars.starts(with: "/*".unicodeScalars) {
          scalars.removeFirst(2)
          while !scalars.isEmpty, !scalars.starts(with: "*/".unicodeScalars) {
            scalars.removeFirst()
          }
          scalars = scalars.dropFirst(2)
        } else {
          return
        }
      }
    }
    func quoted() throws -> String {
      guard scalars.first == "\"" else { throw failure("expected a quoted string") }
      scalars.removeFirst()
      var value = String.UnicodeScalarView()
      while let scalar = scalars.popFirst() {
        switch scalar {
        case "\"": return String(value)
        case "\\":
          guard let escaped = scalars.popFirst() else { throw failure("ends inside an escape") }
          switch escaped {
          case "n": value.append("\n")
          case "t": value.append("\t")
          default: value.append(escaped)
          }
        default: value.append(scalar)
        }
      }
      throw failure("ends inside a string")
    }
    while true {
      skipSpaceAndComments()
      if scalars.isEmpty { return result }
      let key = try quoted()
      skipSpaceAndComments()
      guard scalars.popFirst() == "=" else { throw failure("expected = after \"\(key)\"") }
      skipSpaceAndComments()
      let value = try quoted()
      skipSpaceAndComments()
      guard scalars.popFirst() == ";" else { throw failure("expected ; after \"\(key)\"") }
      result[key] = value
    }
  }

  private static func failure(_ message: String) -> CourierError {
    CourierError(
      kind: .invalidRequest, debugMessage: "strings file \(message)", stage: "reasons")
  }
}
