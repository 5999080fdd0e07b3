import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Serves the requests of one accepted connection, in sequence, on its own thread.
///
/// The loop ends when the client closes the connection, asks for it to be closed, sends
/// something unparseable, a fault ends it, or the server shuts the socket down. The caller
/// (``ServerCore``) closes the descriptor afterwards.
struct Connection {
  /// The server the connection belongs to.
  let core: ServerCore
  /// The connected socket.
  let fd: Int32
  /// The 0-based accept order of this connection.
  let index: Int

  /// Serves requests until the connection should close.
  func run() {
    var reader = RequestReader(fd: fd)
    let writer = ResponseWriter(fd: fd)
    while serveNext(&reader, writer) {}
  }

  /// Reads, records and answers one request. Returns whether the connection stays open.
  private func serveNext(_ reader: inout RequestReader, _ writer: ResponseWriter) -> Bool {
    let head: RequestHead
    var body = Data()
    var bodyFile: URL?
    do throws(RequestReadError) {
      guard let parsed = try reader.readHead() else { return false }
      head = parsed
      let directory = head.hasBody ? core.requestBodyDirectory : nil
      let limit = directory == nil ? RequestReader.maxBodyBytes : RequestReader.maxFileBodyBytes
      guard head.contentLength <= limit else { throw RequestReadError.bodyTooLarge }
      // libcurl (and so URLSession on Linux) sends `Expect: 100-continue` for large uploads
      // and waits for this interim response (or a timeout) before sending the body.
      if head.expectsContinue && head.hasBody && head.version == "HTTP/1.1" {
        guard writer.writeContinue() else { return false }
      }
      if let directory {
        bodyFile = try Self.receiveBody(for: head, with: &reader, into: directory, limit: limit)
      } else {
        body = try reader.readBody(for: head)
      }
    } catch {
      reject(error, writer)
      return false
    }
    let response = core.respond(
      to: head, body: body, bodyFile: bodyFile, connectionIndex: index)
    return answer(head, with: response, writer)
  }

  /// Streams the body of `head` into a new file in `directory` and returns the file; on any
  /// failure the file is removed.
  private static func receiveBody(
    for head: RequestHead, with reader: inout RequestReader, into directory: URL, limit: Int
  ) throws(RequestReadError) -> URL {
    let url = directory.appendingPathComponent("request-\(UUID().uuidString).body")
    let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw .connectionClosed }
    var complete = false
    defer {
      _ = close(fd)
      if !complete { try? FileManager.default.removeItem(at: url) }
    }
    _ = try reader.streamBody(for: head, limit: limit) { bytes in
      guard var next = bytes.baseAddress else { return true }
      var left = bytes.count
      while left > 0 {
        let written = write(fd, next, left)
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { return false }
        next += written
        left -= written
      }
      return true
    }
    complete = true
    return url
  }

  /// Answers a request that could not be read, if there is anyone left to answer.
  private func reject(_ error: RequestReadError, _ writer: ResponseWriter) {
    let status: Int
    switch error {
    case .connectionClosed: return
    case .malformed: status = 400
    case .headerTooLarge: status = 431
    case .bodyTooLarge: status = 413
    }
    if writer.writeError(status: status) {
      Socket.lingeringClose(fd, wakeFD: core.wakeReadFD)
    }
  }

  /// Applies the response's fault and delay, then writes it. Returns whether to keep going.
  private func answer(
    _ head: RequestHead,
    with response: MockResponse,
    _ writer: ResponseWriter
  ) -> Bool {
    switch response.fault?.kind {
    case .closeWithoutResponse?:
      return false
    case .hang?:
      _ = Socket.waitForInterruption(fd: fd, wakeFD: core.wakeReadFD, until: nil)
      return false
    default:
      break
    }
    if response.delay > .zero {
      let deadline = ContinuousClock.now.advanced(by: response.delay)
      let outcome = Socket.waitForInterruption(fd: fd, wakeFD: core.wakeReadFD, until: deadline)
      guard outcome == .deadlineReached else { return false }
    }
    let keepAlive = head.keepsAlive && !Self.asksToClose(response)
    guard let fault = response.fault?.kind else {
      let written = writer.write(
        response,
        method: head.method,
        closing: !keepAlive,
        keepAliveHTTP10: keepAlive && head.version == "HTTP/1.0"
      )
      return written && keepAlive
    }
    return misbehave(fault, head, response, writer, keepAlive: keepAlive)
  }

  /// Writes `response` the way `fault` breaks it. Returns whether to keep the connection.
  private func misbehave(
    _ fault: MockFault.Kind,
    _ head: RequestHead,
    _ response: MockResponse,
    _ writer: ResponseWriter,
    keepAlive: Bool
  ) -> Bool {
    let method = head.method
    let http10 = keepAlive && head.version == "HTTP/1.0"
    /// Writes `response` with only the first `bodyBytes` bytes of its body.
    func writeCut(bodyBytes: Int) {
      _ = writer.write(
        response, method: method, closing: !keepAlive, keepAliveHTTP10: http10,
        bodyBytes: bodyBytes)
    }
    switch fault {
    case .closeWithoutResponse, .hang:
      return false
    case .resetWithoutResponse:
      Socket.setAbortiveClose(fd)
      return false
    case .truncateBody:
      writeCut(bodyBytes: Self.bodyLength(of: response) / 2)
      return false
    case .closeAfterBodyBytes(let count):
      writeCut(bodyBytes: count)
      return false
    case .reset(let count):
      writeCut(bodyBytes: count ?? Self.bodyLength(of: response) / 2)
      // ServerCore closes the descriptor once this thread returns; with a zero linger time
      // that close sends RST.
      Socket.setAbortiveClose(fd)
      return false
    case .throttle(let rate):
      let message = writer.serialize(
        response, method: method, closing: !keepAlive, keepAliveHTTP10: http10)
      let written = writer.writePaced(message, bytesPerSecond: rate, wakeFD: core.wakeReadFD)
      return written && keepAlive
    case .malformedStatusLine:
      _ = writer.write(
        response, method: method, closing: true, keepAliveHTTP10: false,
        statusLine: "HTTP/1.1 2OO OK")
      return false
    case .conflictingContentLength, .duplicatedContentLength:
      let doubled = Self.twoContentLengths(response, differ: fault == .conflictingContentLength)
      _ = writer.write(doubled, method: method, closing: true, keepAliveHTTP10: false)
      return false
    case .brokenChunking:
      _ = writer.writeBrokenChunks(response, method: method)
      return false
    case .endlessBody:
      writer.writeEndlessBody(response)
      return false
    case .closeBeforeHeadEnds:
      _ = writer.writeHeadWithoutEnd(response)
      return false
    }
  }

  /// `response` with two `Content-Length` fields (the second 10 more when they `differ`).
  private static func twoContentLengths(_ response: MockResponse, differ: Bool) -> MockResponse {
    var fields = response
    let length = bodyLength(of: response)
    let second = differ ? length + 10 : length
    fields.headers.removeAll { asciiCaseInsensitiveEquals($0.name, "Content-Length") }
    fields.headers.append(MockHeader(name: "Content-Length", value: String(length)))
    fields.headers.append(MockHeader(name: "Content-Length", value: String(second)))
    fields.chunked = false
    return fields
  }

  /// The number of body bytes `response` has: its ``MockResponse/sourceRange`` or its body.
  private static func bodyLength(of response: MockResponse) -> Int {
    if let source = response.source { return response.sourceRange?.count ?? source.count }
    return response.body.count
  }

  /// Whether the scripted response itself carries `Connection: close`.
  private static func asksToClose(_ response: MockResponse) -> Bool {
    guard let value = response.header("Connection") else { return false }
    return value.lowercased().split(separator: ",").contains {
      $0.trimmingCharacters(in: .whitespaces) == "close"
    }
  }
}
