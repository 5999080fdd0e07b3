/// A way for ``MockServer`` to misbehave on purpose, set on ``MockResponse/fault``.
///
/// This is a struct with static members rather than an enum so that new faults can be added
/// without breaking code that switches over them.
///
/// Every fault except ``throttle(bytesPerSecond:)`` ends the connection once it has done its
/// damage, so the next request always starts on a clean connection.
///
/// ```swift
/// server.enqueue(MockResponse(fault: .closeWithoutResponse))
/// server.enqueue(MockResponse(body: Data(count: 4000), fault: .throttle(bytesPerSecond: 1000)))
/// server.enqueue(MockResponse(body: Data(count: 1000), fault: .resetAfterBodyBytes(100)))
/// ```
public struct MockFault: Hashable, Sendable, CustomStringConvertible {
  enum Kind: Hashable, Sendable {
    case closeWithoutResponse
    case hang
    case truncateBody
    case throttle(bytesPerSecond: Int)
    case closeAfterBodyBytes(Int)
    /// Reset after this many body bytes; `nil`: half the body.
    case reset(afterBodyBytes: Int?)
    case malformedStatusLine
    case conflictingContentLength
    case duplicatedContentLength
    case brokenChunking
    case endlessBody
    case closeBeforeHeadEnds
    case resetWithoutResponse
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

  /// Send the whole response, head and body, at no more than `bytesPerSecond` bytes a second.
  ///
  /// On the wire the response is exactly the normal one, written in small pieces (a twentieth
  /// of `bytesPerSecond`, at least 1 byte and at most 16 KiB) paced by the server's clock: the
  /// piece that starts at byte *k* is written *k* / `bytesPerSecond` seconds after the first.
  /// The waits end early, and the connection with them, when the client closes it or the
  /// server shuts down. The connection stays open afterwards as for a normal response.
  ///
  /// - Parameter bytesPerSecond: The rate; values below 1 count as 1.
  public static func throttle(bytesPerSecond: Int) -> MockFault {
    MockFault(.throttle(bytesPerSecond: max(1, bytesPerSecond)))
  }

  /// Send the response head with the real `Content-Length`, then the first `count` bytes of
  /// the body (all of it if it is shorter), then close the connection normally (FIN).
  ///
  /// With ``MockResponse/chunked`` those bytes are sent as one chunk and the terminating
  /// zero-length chunk is never written.
  public static func closeAfterBodyBytes(_ count: Int) -> MockFault {
    MockFault(.closeAfterBodyBytes(max(0, count)))
  }

  /// Send the response head with the real `Content-Length`, then the first `count` bytes of
  /// the body, then reset the connection: `SO_LINGER` is set to `{on, 0 s}` before the socket
  /// is closed, so the kernel sends a TCP RST instead of a FIN and the client's next read
  /// fails with "connection reset by peer".
  ///
  /// With ``MockResponse/chunked`` those bytes are sent as one chunk.
  public static func resetAfterBodyBytes(_ count: Int) -> MockFault {
    MockFault(.reset(afterBodyBytes: max(0, count)))
  }

  /// ``resetAfterBodyBytes(_:)`` after the first half of the body.
  public static let resetMidBody = MockFault(.reset(afterBodyBytes: nil))

  /// Send a status line whose status code is not a number, `HTTP/1.1 2OO OK` (letter O's),
  /// followed by the response's normal header fields and body, then close the connection.
  public static let malformedStatusLine = MockFault(.malformedStatusLine)

  /// Send the body with two `Content-Length` fields that disagree: the body's real length
  /// first, then that length plus 10 (`Content-Length: 5` and `Content-Length: 15` for a
  /// 5-byte body), then the body, then close the connection.
  ///
  /// RFC 9112 §6.3 says a client must treat this as an unrecoverable error.
  public static let conflictingContentLength = MockFault(.conflictingContentLength)

  /// Send the body with its real length in two identical `Content-Length` fields
  /// (`Content-Length: 5` twice), then the body, then close the connection.
  ///
  /// RFC 9110 §8.6 allows a client to accept a repeated identical value as that value.
  public static let duplicatedContentLength = MockFault(.duplicatedContentLength)

  /// Send `Transfer-Encoding: chunked`, a valid first chunk holding the first half of the
  /// body, then the chunk-size line `zz` (not hexadecimal) followed by the rest of the body,
  /// then close the connection.
  public static let brokenChunking = MockFault(.brokenChunking)

  /// Send the response head with `Transfer-Encoding: chunked` and then 16 KiB chunks of `x`
  /// for ever, until the client closes the connection or the server shuts down.
  ///
  /// The response's own body is not sent. The server writes one fixed buffer again and again,
  /// blocking while the socket is full, so it neither spins nor grows its memory.
  public static let endlessBody = MockFault(.endlessBody)

  /// Send the status line and the response's own header fields — not the `Content-Length` and
  /// `Connection` fields the server adds to other responses — but not the blank line that
  /// ends the head, then close the connection normally (FIN). The body is not sent.
  ///
  /// Without a `Content-Length` libcurl 7.88 reports such a reply as a success with no
  /// response; `CurlTransport` fails it as ``CourierError/Kind/connectionLost``. URLSession on
  /// Linux stops the process (FoundationNetworking: "Transfer completed, but there's no
  /// response."): run a test of it against `URLSessionTransport` only in a child process (an
  /// exit test).
  public static let closeBeforeHeadEnds = MockFault(.closeBeforeHeadEnds)

  /// Read the whole request, then reset the connection (TCP RST) without writing anything, as
  /// a server or a middlebox that dropped a kept-alive connection does.
  ///
  /// On a reused connection libcurl sends the request again on a new one, where the next
  /// scripted response answers it.
  public static let resetWithoutResponse = MockFault(.resetWithoutResponse)

  /// The fault's name, for test output.
  public var description: String {
    switch kind {
    case .closeWithoutResponse: "closeWithoutResponse"
    case .hang: "hang"
    case .truncateBody: "truncateBody"
    case .throttle(let rate): "throttle(bytesPerSecond: \(rate))"
    case .closeAfterBodyBytes(let count): "closeAfterBodyBytes(\(count))"
    case .reset(nil): "resetMidBody"
    case .reset(let count?): "resetAfterBodyBytes(\(count))"
    case .malformedStatusLine: "malformedStatusLine"
    case .conflictingContentLength: "conflictingContentLength"
    case .duplicatedContentLength: "duplicatedContentLength"
    case .brokenChunking: "brokenChunking"
    case .endlessBody: "endlessBody"
    case .closeBeforeHeadEnds: "closeBeforeHeadEnds"
    case .resetWithoutResponse: "resetWithoutResponse"
    }
  }
}
