/// Rules for the text a spec holds, which the generator never trusts: docs go into `///`
/// comments and every other string into string literals, and neither may end early.
///
/// The Swift compiler ends a `//` comment at LF and at CR; other readers of Swift source
/// (editors, `swift-syntax`, anything that follows Unicode's line breaking rules) also end a
/// line at VT, FF, NEL, LS and PS. A doc may hold any of them and each starts a new comment
/// line; any other control character in a doc, and any control character at all in a path, a
/// name or a content type, is an error in the spec. String literals escape every character
/// that could end them, start an interpolation or hide in the source (``Generator/literal(_:)``).
package enum SpecText {
  /// Whether `scalar` ends a line for some reader of Swift source.
  static func isLineBreak(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x0A, 0x0B, 0x0C, 0x0D, 0x85, 0x2028, 0x2029: true
    default: false
    }
  }

  /// Whether `scalar` is a control character (C0, DEL, C1) or a line or paragraph separator.
  static func isControl(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.properties.generalCategory {
    case .control, .lineSeparator, .paragraphSeparator: true
    default: false
    }
  }

  /// The first control character of `text`, a value that must stay on one line.
  static func firstControl(in text: String) -> Unicode.Scalar? {
    text.unicodeScalars.first(where: isControl)
  }

  /// The first control character of `text` that a doc cannot hold: one that is neither a line
  /// break nor a tab.
  static func firstControl(inDoc text: String) -> Unicode.Scalar? {
    text.unicodeScalars.first { isControl($0) && !isLineBreak($0) && $0 != "\t" }
  }

  /// `U+000D`, how a diagnostic names a character it cannot show.
  static func codePoint(_ scalar: Unicode.Scalar) -> String {
    let hex = String(scalar.value, radix: 16, uppercase: true)
    return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
  }

  /// `text` as lines of a comment: a line ends at each line break (CR LF counts once), a tab
  /// becomes a space, and any other control character is written as `\u{…}`, so that no line
  /// holds anything that could end the comment early.
  static func commentLines(_ text: String) -> [String] {
    var lines: [String] = []
    var current = String.UnicodeScalarView()
    var previous: Unicode.Scalar?
    for scalar in text.unicodeScalars {
      defer { previous = scalar }
      if scalar == "\n" && previous == "\r" { continue }
      if isLineBreak(scalar) {
        lines.append(String(current))
        current = String.UnicodeScalarView()
      } else if scalar == "\t" {
        current.append(" ")
      } else if isControl(scalar) {
        current.append(contentsOf: escaped(scalar).unicodeScalars)
      } else {
        current.append(scalar)
      }
    }
    lines.append(String(current))
    return lines
  }

  /// `text` on one comment line: every control character, line breaks included, written as
  /// `\u{…}`.
  static func commentLine(_ text: String) -> String {
    var result = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
      if isControl(scalar) {
        result.append(contentsOf: escaped(scalar).unicodeScalars)
      } else {
        result.append(scalar)
      }
    }
    return String(result)
  }

  /// `\u{D}`: the scalar as a Swift escape.
  static func escaped(_ scalar: Unicode.Scalar) -> String {
    "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
  }
}
