/// The request's framing — how the receiver finds where its body ends — belongs to the
/// transport: a caller's `Content-Length` that disagrees with the body, or a
/// `Transfer-Encoding` of its own, would make the server wait for bytes that never come (a
/// `Content-Length: 99999` over a 2-byte body held the request until its timeout) or read two
/// framings of one message (request smuggling, RFC 9112 §6.1 and §6.3). Both built-in
/// transports check a request with ``problem(in:bodyLength:lengthUnknown:)`` before they send it, and so
/// does `StubTransport` (``check(_:)``), so that a test sees what production would.
package enum RequestFraming {
  /// The checks a transport makes before it sends `request`: a file body must be a readable
  /// regular file (``RegularFile``), and the framing fields must agree with the body
  /// (``problem(in:bodyLength:lengthUnknown:)``); either failure is
  /// ``CourierError/Kind/invalidRequest``.
  package static func check(_ request: Request) throws(CourierError) {
    var bodyLength = request.body.data.map { Int64($0.count) } ?? request.body.streamLength
    if let file = request.body.fileURL {
      switch RegularFile.check(file) {
      case .sendable(let size): bodyLength = size
      case .problem(let problem):
        throw CourierError(
          kind: .invalidRequest, debugMessage: "the file body cannot be sent: \(problem)",
          request: request, attempts: 1, stage: "transport")
      }
    }
    let unknown = request.body.isStream && request.body.streamLength == nil
    if let problem = problem(in: request.headers, bodyLength: bodyLength, lengthUnknown: unknown) {
      throw CourierError(
        kind: .invalidRequest, debugMessage: problem, request: request, attempts: 1,
        stage: "transport")
    }
  }

  /// Why `headers` cannot go out with a body of `bodyLength` bytes (`nil`: no body), or `nil`
  /// when they can: a `Content-Length` that is not that length (`0` without a body), any
  /// `Content-Length` over a stream body whose length is not known (`lengthUnknown`), or any
  /// `Transfer-Encoding`.
  package static func problem(
    in headers: HTTPHeaders, bodyLength: Int64?, lengthUnknown: Bool = false
  ) -> String? {
    for field in headers.fieldList {
      // By length first: this runs for every request, and most names are neither.
      switch field.name.rawName.utf8.count {
      case 14 where field.name == .contentLength && lengthUnknown:
        return "the request's Content-Length \(field.value.debugDescription) is set over a "
          + "stream body of unknown length; give the length to RequestBody.stream(length:) "
          + "instead, and leave Content-Length to the transport, which sets it"
      case 14 where field.name == .contentLength:
        let expected = bodyLength ?? 0
        guard field.value != String(expected) else { continue }
        return "the request's Content-Length \(field.value.debugDescription) is not its body's "
          + "length, \(expected) bytes; leave Content-Length to the transport, which sets it"
      case 17 where field.name == .transferEncoding:
        return "the request sets Transfer-Encoding \(field.value.debugDescription); the "
          + "transport frames every body itself (with its Content-Length, or chunked for a "
          + "stream of unknown length), so a request must not set Transfer-Encoding"
      default: continue
      }
    }
    return nil
  }
}
