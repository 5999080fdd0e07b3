import Foundation

/// The writers behind the ``MockFault``s that need more than a shortened body.
extension ResponseWriter {
  /// The largest piece ``writePaced(_:bytesPerSecond:wakeFD:)`` writes at once.
  private static let largestPacedPiece = 16 * 1024

  /// The whole response as it would go on the wire, head and body (chunked if the response
  /// asks for it), for the faults that send it differently.
  func serialize(
    _ response: MockResponse, method: String, closing: Bool, keepAliveHTTP10: Bool
  ) -> [UInt8] {
    let bodyAllowed =
      !(100..<200).contains(response.status) && response.status != 204
      && response.status != 304
    let chunked = response.chunked && bodyAllowed
    var message = head(
      for: response, bodyAllowed: bodyAllowed, chunked: chunked, closing: closing,
      keepAliveHTTP10: keepAliveHTTP10)
    guard bodyAllowed && method != "HEAD" else { return message }
    var body = response.body
    if let source = response.source {
      let range = response.sourceRange ?? 0..<source.count
      body = source.bytes(at: range.lowerBound, count: range.count)
    }
    if chunked {
      appendChunks(of: body, to: &message, terminate: true)
    } else {
      message.append(contentsOf: body)
    }
    return message
  }

  /// Writes `message` at no more than `bytesPerSecond`: pieces of a twentieth of the rate
  /// (1 byte to 16 KiB), the piece starting at byte *k* at *k* / rate seconds after the
  /// first. Returns `false` if the client closed the connection or the server shut down
  /// during a wait, or a write failed.
  func writePaced(_ message: [UInt8], bytesPerSecond: Int, wakeFD: Int32) -> Bool {
    let rate = max(1, bytesPerSecond)
    let piece = min(max(1, rate / 20), Self.largestPacedPiece)
    let start = ContinuousClock.now
    var offset = 0
    while offset < message.count {
      if offset > 0 {
        // Exact for any rate: whole seconds plus the remainder in nanoseconds.
        let due =
          Duration.seconds(offset / rate)
          + .nanoseconds(Int64(offset % rate) * 1_000_000_000 / Int64(rate))
        let outcome = Socket.waitForInterruption(
          fd: fd, wakeFD: wakeFD, until: start.advanced(by: due))
        guard outcome == .deadlineReached else { return false }
      }
      let end = min(offset + piece, message.count)
      let sent = message[offset..<end].withUnsafeBytes { Socket.sendAll(fd, $0) }
      guard sent else { return false }
      offset = end
    }
    return true
  }

  /// The ``MockFault/closeBeforeHeadEnds`` response: the status line and the scripted
  /// header fields, without the `Content-Length` and `Connection` the server adds and without
  /// the blank line that ends the head.
  func writeHeadWithoutEnd(_ response: MockResponse) -> Bool {
    var message = head(
      for: response, bodyAllowed: false, chunked: false, closing: false, keepAliveHTTP10: false)
    if message.suffix(2) == Self.crlf[...] { message.removeLast(2) }
    return Socket.sendAll(fd, message)
  }

  /// The ``MockFault/brokenChunking`` response: `Transfer-Encoding: chunked`, a valid chunk
  /// with the first half of the body, then the size line `zz` and the rest of the body.
  func writeBrokenChunks(_ response: MockResponse, method: String) -> Bool {
    var chunkedResponse = response
    chunkedResponse.chunked = true
    chunkedResponse.source = nil
    var message = head(
      for: chunkedResponse, bodyAllowed: true, chunked: true, closing: true,
      keepAliveHTTP10: false)
    guard method != "HEAD" else { return Socket.sendAll(fd, message) }
    var body = [UInt8](response.body)
    if let source = response.source {
      let range = response.sourceRange ?? 0..<source.count
      body = [UInt8](source.bytes(at: range.lowerBound, count: range.count))
    }
    if body.count < 2 { body = Array("broken".utf8) }
    let half = body.count / 2
    message.append(contentsOf: String(half, radix: 16).utf8)
    message.append(contentsOf: Self.crlf)
    message.append(contentsOf: body[..<half])
    message.append(contentsOf: Self.crlf)
    message.append(contentsOf: "zz".utf8)
    message.append(contentsOf: Self.crlf)
    message.append(contentsOf: body[half...])
    message.append(contentsOf: Self.crlf)
    return Socket.sendAll(fd, message)
  }

  /// The ``MockFault/endlessBody`` response: a chunked head, then the same 16 KiB chunk of
  /// `x` written again and again (blocking while the socket is full) until a write fails,
  /// which happens when the client goes away or the server shuts the socket down.
  func writeEndlessBody(_ response: MockResponse) {
    var endless = response
    endless.chunked = true
    endless.source = nil
    endless.body = Data()
    endless.headers.removeAll {
      asciiCaseInsensitiveEquals($0.name, "Content-Length")
        || asciiCaseInsensitiveEquals($0.name, "Transfer-Encoding")
    }
    let head = head(
      for: endless, bodyAllowed: true, chunked: true, closing: true, keepAliveHTTP10: false)
    guard Socket.sendAll(fd, head) else { return }
    let size = 16 * 1024
    var chunk: [UInt8] = Array(String(size, radix: 16).utf8) + Self.crlf
    chunk += [UInt8](repeating: UInt8(ascii: "x"), count: size)
    chunk += Self.crlf
    while Socket.sendAll(fd, chunk) {}
  }
}
