/// A parsed request line and header block, with the framing facts the connection needs.
struct RequestHead {
  var method: String
  var target: String
  var version: String
  var headers: [MockHeader]
  /// The declared `Content-Length`, or 0 when absent or when the body is chunked.
  var contentLength = 0
  /// Whether the body uses chunked transfer coding.
  var isChunked = false
  /// The client sent `Connection: close`, or framing is ambiguous enough to require closing.
  var wantsClose = false
  /// The client sent `Connection: keep-alive` (relevant for HTTP/1.0).
  var wantsKeepAlive = false
  /// The client sent `Expect: 100-continue`.
  var expectsContinue = false

  /// Whether a body follows the header block.
  var hasBody: Bool { isChunked || contentLength > 0 }

  /// Whether the connection should stay open after the response.
  var keepsAlive: Bool {
    if wantsClose { return false }
    return version == "HTTP/1.0" ? wantsKeepAlive : true
  }
}
