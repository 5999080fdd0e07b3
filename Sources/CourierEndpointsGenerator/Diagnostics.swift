/// Every problem found in a spec, in file order.
package struct Diagnostics: Error, Sendable {
  /// The problems; never empty.
  package var all: [Diagnostic]

  /// Wraps the problems found.
  package init(all: [Diagnostic]) {
    self.all = all
  }
}
