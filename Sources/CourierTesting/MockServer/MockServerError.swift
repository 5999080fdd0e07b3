/// An error thrown by ``MockServer``: binding failed, ``MockServer/takeRequest(timeout:)`` timed
/// out, or the server was shut down while a caller was waiting.
public struct MockServerError: Error, CustomStringConvertible, Hashable, Sendable {
  /// A human-readable explanation of what went wrong.
  public var message: String

  /// Creates an error carrying `message`.
  public init(_ message: String) {
    self.message = message
  }

  /// The message, prefixed with the type name so it stands out in test failure output.
  public var description: String { "MockServerError: \(message)" }
}
