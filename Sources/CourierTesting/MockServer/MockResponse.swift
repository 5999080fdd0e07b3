import Foundation

/// A scripted response for ``MockServer`` to send: status, headers, body, framing, an optional
/// delay and an optional fault.
///
/// The server adds `Content-Length` (or `Transfer-Encoding: chunked` when ``chunked`` is set)
/// unless the headers already contain that field, and `Connection: close` when it is about to
/// close the connection. Responses to `HEAD` requests, and `1xx`, `204` and `304` responses,
/// never carry a body.
///
/// ```swift
/// server.enqueue(.json(#"{"ok":true}"#))
/// server.enqueue(MockResponse(status: 503, delay: .milliseconds(200)))
/// server.enqueue(.text("late").addingHeader("Retry-After", "1"))
/// ```
public struct MockResponse: Sendable {
  /// The status code, such as `200` or `404`. The reason phrase is chosen by the server.
  public var status: Int
  /// Header fields to send, in order, after the status line.
  public var headers: [MockHeader]
  /// The response body. Not sent for `HEAD` requests or bodiless statuses.
  public var body: Data
  /// Send the body with `Transfer-Encoding: chunked` instead of `Content-Length`.
  public var chunked: Bool
  /// Trailer fields sent after the last chunk of a ``chunked`` body (RFC 9112 §7.1.2), in
  /// order; ignored without ``chunked``. Default: none.
  public var trailers: [MockHeader] = []
  /// How long to wait before writing the response head.
  ///
  /// The wait ends early, without a response, if the client closes the connection or the
  /// server shuts down.
  public var delay: Duration
  /// A deliberate failure to inject instead of (or part-way through) the normal response.
  public var fault: MockFault?
  /// A body produced while it is sent, instead of ``body`` (see
  /// ``ranged(_:request:etag:lastModified:contentType:)``); the headers must then carry its
  /// `Content-Length` unless ``chunked`` is set.
  public var source: MockBodySource?
  /// The part of ``source`` to send; all of it when `nil`.
  public var sourceRange: Range<Int>?

  /// Creates a response.
  ///
  /// - Parameters:
  ///   - status: The status code.
  ///   - headers: Header fields to send, in order.
  ///   - body: The body bytes.
  ///   - chunked: Use chunked transfer coding for the body.
  ///   - delay: How long to wait before responding.
  ///   - fault: A failure to inject, or `nil` for a well-behaved response.
  public init(
    status: Int = 200,
    headers: [MockHeader] = [],
    body: Data = Data(),
    chunked: Bool = false,
    delay: Duration = .zero,
    fault: MockFault? = nil
  ) {
    self.status = status
    self.headers = headers
    self.body = body
    self.chunked = chunked
    self.delay = delay
    self.fault = fault
  }

  /// A response with a JSON body and `Content-Type: application/json`.
  public static func json(_ json: String, status: Int = 200) -> MockResponse {
    MockResponse(
      status: status,
      headers: [MockHeader(name: "Content-Type", value: "application/json")],
      body: Data(json.utf8)
    )
  }

  /// A response with a UTF-8 text body and `Content-Type: text/plain; charset=utf-8`.
  public static func text(_ text: String, status: Int = 200) -> MockResponse {
    MockResponse(
      status: status,
      headers: [MockHeader(name: "Content-Type", value: "text/plain; charset=utf-8")],
      body: Data(text.utf8)
    )
  }

  /// A copy of this response with one more header field appended.
  public func addingHeader(_ name: String, _ value: String) -> MockResponse {
    var copy = self
    copy.headers.append(MockHeader(name: name, value: value))
    return copy
  }

  /// This response sent chunked, with `name: value` appended to its trailer fields.
  public func addingTrailer(_ name: String, _ value: String) -> MockResponse {
    var copy = self
    copy.chunked = true
    copy.trailers.append(MockHeader(name: name, value: value))
    return copy
  }

  /// The value of the first header field named `name`, compared case-insensitively.
  public func header(_ name: String) -> String? {
    headers.firstValue(named: name)
  }
}
