import Foundation

/// Serialises a ``MockResponse`` onto a connection.
struct ResponseWriter {
  /// Bodies up to this size are sent in the same `send(2)` as the head.
  private static let coalesceLimit = 64 * 1024
  /// Chunked bodies are split into chunks of at most this many bytes.
  private static let chunkSize = 16 * 1024
  static let crlf: [UInt8] = [13, 10]

  /// The connection to write to.
  let fd: Int32

  /// Writes `response` as the answer to a request with method `method`.
  ///
  /// - Parameters:
  ///   - closing: The connection will be closed afterwards; adds `Connection: close`.
  ///   - keepAliveHTTP10: The client is HTTP/1.0 and asked for keep-alive; confirms it.
  ///   - bodyBytes: Send at most this many body bytes, and no terminating chunk (the
  ///     truncating faults); `nil` sends the whole body.
  ///   - statusLine: A status line to send instead of the real one, without its CRLF.
  /// - Returns: `false` if the connection failed while writing.
  func write(
    _ response: MockResponse,
    method: String,
    closing: Bool,
    keepAliveHTTP10: Bool,
    bodyBytes: Int? = nil,
    statusLine: String? = nil
  ) -> Bool {
    let bodyAllowed =
      !(100..<200).contains(response.status) && response.status != 204
      && response.status != 304
    let sendsBody = bodyAllowed && method != "HEAD"
    let chunked = response.chunked && bodyAllowed

    var message = head(
      for: response, bodyAllowed: bodyAllowed, chunked: chunked, closing: closing,
      keepAliveHTTP10: keepAliveHTTP10, statusLine: statusLine)
    if let source = response.source {
      guard sendsBody, Socket.sendAll(fd, message) else { return false }
      return writeSource(source, response: response, chunked: chunked, bodyBytes: bodyBytes)
    }
    guard sendsBody, !response.body.isEmpty || chunked else {
      return Socket.sendAll(fd, message)
    }

    let body = response.body
    let length = min(bodyBytes ?? body.count, body.count)
    if chunked {
      appendChunks(
        of: body.prefix(length), to: &message, terminate: bodyBytes == nil,
        trailers: response.trailers)
      return Socket.sendAll(fd, message)
    }
    if length <= Self.coalesceLimit {
      message.append(contentsOf: body.prefix(length))
      return Socket.sendAll(fd, message)
    }
    guard Socket.sendAll(fd, message) else { return false }
    return body.withUnsafeBytes { bytes in
      Socket.sendAll(fd, UnsafeRawBufferPointer(rebasing: bytes.prefix(length)))
    }
  }

  /// Sends a streamed body a piece at a time (256 KiB), so a body of any size costs one
  /// piece of memory.
  private func writeSource(
    _ source: MockBodySource, response: MockResponse, chunked: Bool, bodyBytes: Int?
  ) -> Bool {
    let range = response.sourceRange ?? 0..<source.count
    let end = range.lowerBound + min(bodyBytes ?? range.count, range.count)
    let piece = 256 * 1024
    var offset = range.lowerBound
    while offset < end {
      let data = source.bytes(at: offset, count: min(piece, end - offset))
      if data.isEmpty { return false }
      var message: [UInt8] = []
      if chunked {
        message.append(contentsOf: String(data.count, radix: 16).utf8)
        message.append(contentsOf: Self.crlf)
      }
      message.append(contentsOf: data)
      if chunked { message.append(contentsOf: Self.crlf) }
      guard Socket.sendAll(fd, message) else { return false }
      offset += data.count
    }
    if chunked && bodyBytes == nil {
      return Socket.sendAll(fd, Self.lastChunk(trailers: response.trailers))
    }
    return true
  }

  /// Writes the interim `100 Continue` response.
  func writeContinue() -> Bool {
    Socket.sendAll(fd, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
  }

  /// Writes a minimal error response that closes the connection.
  func writeError(status: Int) -> Bool {
    let text =
      "HTTP/1.1 \(status) \(reasonPhrase(for: status))\r\n"
      + "Content-Length: 0\r\nConnection: close\r\n\r\n"
    return Socket.sendAll(fd, Array(text.utf8))
  }

  /// The status line (`statusLine` if given) and header block, with the framing fields the
  /// server adds.
  func head(
    for response: MockResponse,
    bodyAllowed: Bool,
    chunked: Bool,
    closing: Bool,
    keepAliveHTTP10: Bool,
    statusLine: String? = nil
  ) -> [UInt8] {
    // Room for a small body too, which write(...) appends to the same buffer.
    let inlineBody = response.body.count <= Self.coalesceLimit ? response.body.count : 0
    var head: [UInt8] = []
    head.reserveCapacity(128 + response.headers.count * 48 + inlineBody)
    if let statusLine {
      head.append(contentsOf: statusLine.utf8)
    } else {
      head.append(contentsOf: "HTTP/1.1 ".utf8)
      head.append(contentsOf: String(response.status).utf8)
      head.append(UInt8(ascii: " "))
      head.append(contentsOf: reasonPhrase(for: response.status).utf8)
    }
    head.append(contentsOf: Self.crlf)

    var hasLength = false
    var hasTransferEncoding = false
    var hasConnection = false
    for field in response.headers {
      if asciiCaseInsensitiveEquals(field.name, "Content-Length") { hasLength = true }
      if asciiCaseInsensitiveEquals(field.name, "Transfer-Encoding") {
        hasTransferEncoding = true
      }
      if asciiCaseInsensitiveEquals(field.name, "Connection") { hasConnection = true }
      appendField(field.name, field.value, to: &head)
    }
    if chunked {
      if !hasTransferEncoding { appendField("Transfer-Encoding", "chunked", to: &head) }
    } else if bodyAllowed && !hasLength && !hasTransferEncoding {
      appendField("Content-Length", String(response.body.count), to: &head)
    }
    if !hasConnection {
      if closing {
        appendField("Connection", "close", to: &head)
      } else if keepAliveHTTP10 {
        appendField("Connection", "keep-alive", to: &head)
      }
    }
    head.append(contentsOf: Self.crlf)
    return head
  }

  private func appendField(_ name: String, _ value: String, to head: inout [UInt8]) {
    head.append(contentsOf: name.utf8)
    head.append(contentsOf: ": ".utf8)
    head.append(contentsOf: value.utf8)
    head.append(contentsOf: Self.crlf)
  }

  /// Appends `body` in chunked coding, with the last chunk and `trailers` if `terminate`.
  func appendChunks(
    of body: Data, to message: inout [UInt8], terminate: Bool, trailers: [MockHeader] = []
  ) {
    message.reserveCapacity(message.count + body.count + (body.count / Self.chunkSize + 2) * 12)
    var offset = body.startIndex
    while offset < body.endIndex {
      let next = min(offset + Self.chunkSize, body.endIndex)
      message.append(contentsOf: String(next - offset, radix: 16).utf8)
      message.append(contentsOf: Self.crlf)
      message.append(contentsOf: body[offset..<next])
      message.append(contentsOf: Self.crlf)
      offset = next
    }
    if terminate {
      message.append(contentsOf: Self.lastChunk(trailers: trailers))
    }
  }

  /// The last chunk, the trailer fields and the empty line that ends a chunked body.
  static func lastChunk(trailers: [MockHeader]) -> [UInt8] {
    var bytes = Array("0\r\n".utf8)
    for field in trailers {
      bytes.append(contentsOf: "\(field.name): \(field.value)\r\n".utf8)
    }
    bytes.append(contentsOf: crlf)
    return bytes
  }
}
