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
