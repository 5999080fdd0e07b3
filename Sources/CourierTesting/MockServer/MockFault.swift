/// A way for ``MockServer`` to misbehave on purpose, set on ``MockResponse/fault``.
///
/// This is a struct with static members rather than an enum so that new faults can be added
/// without breaking code that switches over them.
///
/// ```swift
/// server.enqueue(MockResponse(fault: .closeWithoutResponse))
/// ```
public struct MockFault: Hashable, Sendable, CustomStringConvertible {
  enum Kind: Hashable, Sendable {
    case closeWithoutResponse
    case hang
    case truncateBody
  }

  let kind: Kind

  private init(_ kind: Kind) {
    self.kind = kind
  }

  /// Read the whole request, then close the connection without writing anything.
  ///
  /// The client sees the connection drop before any response bytes arrive.
  public static let closeWithoutResponse = MockFault(.closeWithoutResponse)

  /// Read the whole request and never answer.
  ///
  /// The connection stays open until the client closes it or the server shuts down, which makes
  /// this the tool for testing client timeouts and cancellation.
  public static let hang = MockFault(.hang)

  /// Send the response head with the full `Content-Length`, then only the first half of the
  /// body, then close the connection.
  ///
  /// With ``MockResponse/chunked`` the first half is sent as one chunk and the terminating
  /// zero-length chunk is never written.
  public static let truncateBody = MockFault(.truncateBody)

  /// The fault's name, for test output.
  public var description: String {
    switch kind {
    case .closeWithoutResponse: "closeWithoutResponse"
    case .hang: "hang"
    case .truncateBody: "truncateBody"
    }
  }
}
