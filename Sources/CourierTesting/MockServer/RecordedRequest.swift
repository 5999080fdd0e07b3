import Foundation

/// A request as ``MockServer`` received it, returned by ``MockServer/takeRequest(timeout:)``
/// and passed to the dispatcher.
///
/// Everything is kept as it was on the wire: the target is not percent-decoded and headers
/// keep their order and capitalisation. A chunked body has already been de-chunked.
public struct RecordedRequest: Sendable, CustomStringConvertible {
  /// The request method, such as `GET`.
  public var method: String
  /// The raw request-target, such as `/a%20b/c?x=1&y=2`.
  public var target: String
  /// The part of ``target`` before `?`, still percent-encoded exactly as sent.
  public var path: String
  /// The raw query after `?`, or `nil` if the target has no `?`.
  public var query: String?
  /// The HTTP version from the request line, such as `HTTP/1.1`.
  public var version: String
  /// Header fields in the order they were received. Chunked trailer fields are not included.
  public var headers: [MockHeader]
  /// The request body, de-chunked if it was sent with `Transfer-Encoding: chunked`; empty when
  /// the body went to ``bodyFile``.
  public var body: Data
  /// The file holding the body, de-chunked, when the server writes bodies to files
  /// (``MockServer/requestBodyDirectory``); `nil` otherwise. The test deletes it.
  public var bodyFile: URL?
  /// The 0-based position of this request among all requests the server received.
  public var sequenceNumber: Int
  /// The 0-based index of the accepted connection that carried this request; equal indices
  /// mean the client reused a keep-alive connection.
  public var connectionIndex: Int

  /// Creates a recorded request, deriving ``path`` and ``query`` from `target`.
  ///
  /// Useful for unit-testing a dispatcher without a server.
  public init(
    method: String,
    target: String,
    version: String = "HTTP/1.1",
    headers: [MockHeader] = [],
    body: Data = Data(),
    sequenceNumber: Int = 0,
    connectionIndex: Int = 0,
    bodyFile: URL? = nil
  ) {
    self.method = method
    self.target = target
    if let question = target.utf8.firstIndex(of: UInt8(ascii: "?")) {
      self.path = String(target[..<question])
      self.query = String(target[target.index(after: question)...])
    } else {
      self.path = target
      self.query = nil
    }
    self.version = version
    self.headers = headers
    self.body = body
    self.bodyFile = bodyFile
    self.sequenceNumber = sequenceNumber
    self.connectionIndex = connectionIndex
  }

  /// The value of the first header field named `name`, compared case-insensitively.
  public func header(_ name: String) -> String? {
    headers.firstValue(named: name)
  }

  /// The request line, such as `GET /a?b=c HTTP/1.1`.
  public var description: String { "\(method) \(target) \(version)" }
}
