/// Why a request could not be read.
enum RequestReadError: Error {
  /// The peer closed the connection or an I/O error occurred mid-request. Nothing to answer.
  case connectionClosed
  /// The request violates HTTP/1.1 syntax. Answered with `400 Bad Request`.
  case malformed
  /// The header block (or trailer section) exceeds the limit. Answered with `431`.
  case headerTooLarge
  /// The declared body exceeds the limit. Answered with `413 Content Too Large`.
  case bodyTooLarge
}
