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
