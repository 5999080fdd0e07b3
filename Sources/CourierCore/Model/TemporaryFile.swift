import Foundation

/// Deletes its file when released. Compared by identity, so two bodies are equal only when
/// they share the same owner.
final class TemporaryFile: Sendable, Hashable {
  /// The file, removed in `deinit`.
  let url: URL

  init(_ url: URL) {
    self.url = url
  }

  deinit {
    remove()
  }

  /// Deletes the file now; idempotent (a missing file is not an error). The client calls it
  /// when the logical request it built the body for has finished, so the file does not wait
  /// for a transport's last reference to go (URLSession's delegate queue can hold one for a
  /// moment after the response was handed back).
  func remove() {
    try? FileManager.default.removeItem(at: url)
  }

  static func == (lhs: TemporaryFile, rhs: TemporaryFile) -> Bool { lhs === rhs }

  func hash(into hasher: inout Hasher) {
    hasher.combine(ObjectIdentifier(self))
  }
}
