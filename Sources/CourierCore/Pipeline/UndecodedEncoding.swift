import Foundation

extension Response {
  /// For the message of a body that could not be decoded: why, when the body still carries a
  /// `Content-Encoding` that nothing decoded (`br` from a server that sends it unasked, or
  /// `gzip` on a client without `GzipMiddleware`); else empty.
  ///
  /// Read only after a failure, so a response that decodes pays nothing for it.
  var undecodedEncodingNote: String {
    guard let encoding = headers[.contentEncoding]?.trimmingCharacters(in: .whitespaces),
      !encoding.isEmpty, encoding.lowercased() != "identity"
    else { return "" }
    return "; the body is still encoded (Content-Encoding: \(encoding)) and no stage decoded it"
      + " (GzipMiddleware decodes gzip and deflate)"
  }
}
