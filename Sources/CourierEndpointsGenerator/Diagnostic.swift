/// A position in a spec file: 1-based line, and 1-based column counted in UTF-8 bytes, as the
/// Swift compiler counts them, so that Xcode and SwiftPM put the message on the right character.
package struct SourceLocation: Hashable, Sendable, CustomStringConvertible {
  /// The line, from 1.
  package var line: Int
  /// The column in UTF-8 bytes, from 1.
  package var column: Int

  /// Creates a location.
  package init(line: Int, column: Int) {
    self.line = line
    self.column = column
  }

  /// `line:column`.
  package var description: String { "\(line):\(column)" }
}

/// A problem in a spec, reported as `file:line:column: error: message`.
package struct Diagnostic: Error, Hashable, Sendable {
  /// Where the problem is.
  package var location: SourceLocation
  /// What is wrong, for a person.
  package var message: String

  /// Creates a diagnostic.
  package init(_ message: String, at location: SourceLocation) {
    self.message = message
    self.location = location
  }

  /// The line compilers print, which Xcode and SwiftPM show on the spec line. It is one line
  /// whatever the spec holds: a control character the message quotes from the spec is written
  /// as `\u{…}`, so that it cannot start a line of its own that reads like another diagnostic.
  package func formatted(file: String) -> String {
    SpecText.commentLine("\(file):\(location.line):\(location.column): error: \(message)")
  }
}

/// Every problem found in a spec, in file order.
package struct Diagnostics: Error, Sendable {
  /// The problems; never empty.
  package var all: [Diagnostic]

  /// Wraps the problems found.
  package init(all: [Diagnostic]) {
    self.all = all
  }
}
