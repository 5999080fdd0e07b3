import Courier
import CourierTesting
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A raw HTTP/1.1 server whose connections are handled by scripted closures, one per
/// connection in order (the last one repeats): for answers MockServer does not give.
final class ScriptedServer: Sendable {
  let baseURL: URL
  private let listener: Int32
  private let scripts: [@Sendable (Int32) -> Void]
  private let accepted = Atomic<Int>(0)

  init(_ scripts: [@Sendable (Int32) -> Void]) throws {
    let listener = try Socket.bindAndListen(host: "127.0.0.1")
    try Socket.setNonBlocking(listener.fd, false)
    self.listener = listener.fd
    self.scripts = scripts
    guard let url = URL(string: "http://127.0.0.1:\(listener.port)/") else {
      throw CourierError(kind: .invalidRequest, debugMessage: "no URL")
    }
    baseURL = url
    Thread.detachNewThread { [self] in serve() }
  }

  var connections: Int { accepted.load(ordering: .relaxed) }

  private func serve() {
    while true {
      let connection = accept(listener, nil, nil)
      guard connection >= 0 else { break }
      let index = accepted.add(1, ordering: .relaxed).newValue - 1
      let script = scripts[min(index, scripts.count - 1)]
      Thread.detachNewThread {
        script(connection)
        Glibc.close(connection)
      }
    }
  }

  func close() {
    shutdown(listener, Int32(SHUT_RDWR))
    Glibc.close(listener)
  }

  /// Reads a request head; what followed it in the same reads; `nil` at the close.
  static func readHead(_ connection: Int32) -> (head: String, rest: Data)? {
    var bytes = [UInt8]()
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
      let count = read(connection, &buffer, buffer.count)
      guard count > 0 else { return nil }
      bytes += buffer[0..<count]
      if let range = Data(bytes).range(of: Data("\r\n\r\n".utf8)) {
        return (
          String(decoding: bytes[..<range.upperBound], as: UTF8.self),
          Data(bytes[range.upperBound...])
        )
      }
    }
  }

  static func send(_ connection: Int32, _ text: String) {
    _ = text.withCString { write(connection, $0, strlen($0)) }
  }

  /// Reads a request with a Content-Length body whole; `nil` at the close.
  static func readRequest(_ connection: Int32) -> (head: String, body: Data)? {
    guard let (head, rest) = readHead(connection) else { return nil }
    let declared =
      head.lowercased().split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
      .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) }
      ?? 0
    var body = rest
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while body.count < declared {
      let count = read(connection, &buffer, buffer.count)
      guard count > 0 else { return nil }
      body.append(contentsOf: buffer[0..<count])
    }
    return (head, body)
  }
}

/// Edge cases of stream request bodies: odd chunk shapes and lengths, progress without a
/// length, and servers that answer early, close, or go away under a paused upload.
extension StreamBodyConformanceTests {
  /// libcurl sends `Content-Length: 0` without reading a byte, so CurlTransport reads the
  /// sequence to its end first.
  @Test("length 0 over a sequence that produces bytes fails", arguments: TransportKind.wire)
  func zeroLengthWithBytes(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    fixture.server.setDispatcher { _ in .text("ok") }
    let error = await courierError {
      try await fixture.client.send(
        Endpoint<String>(.put, "up").streamBody(
          .stream(length: 0) { StreamBodyConformanceTests.sequence([Data("abc".utf8)]) },
          contentType: "application/octet-stream"))
    }
    #expect(error?.kind == .invalidRequest, "\(String(reflecting: error))")
  }

  @Test("empty streams", arguments: TransportKind.wire, [nil, 0] as [Int64?])
  func emptyStreams(kind: TransportKind, length: Int64?) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    fixture.server.setDispatcher { _ in .text("ok") }
    let text = try await fixture.client.send(
      Endpoint<String>(.put, "up").streamBody(
        .stream(length: length) { StreamBodyConformanceTests.sequence([Data(), Data()]) },
        contentType: "application/octet-stream"))
    #expect(text == "ok")
    let recorded = try await fixture.server.takeRequest()
    #expect(recorded.body.isEmpty)
  }

  @Test(
    "odd chunk shapes arrive whole", arguments: TransportKind.wire, [nil, 1] as [Int?])
  func oddShapes(kind: TransportKind, known: Int?) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    fixture.server.setDispatcher { _ in .text("ok") }
    let big = Self.bytes(1_200_000, seed: 1)
    var chunks: [Data] = []
    // Slices with non-zero start indices, empty chunks, one-byte chunks, one huge chunk.
    let source = Self.bytes(10_000, seed: 2)
    chunks.append(source[100..<5_000])
    chunks.append(Data())
    for index in 0..<2_000 { chunks.append(source[index..<(index + 1)]) }
    chunks.append(big)
    chunks.append(Data())
    chunks.append(big[600_000..<600_100])
    let body = chunks.reduce(Data(), +)
    let parts = chunks
    let text = try await fixture.client.send(
      Endpoint<String>(.put, "up").streamBody(
        .stream(length: known.map { _ in Int64(body.count) }) {
          StreamBodyConformanceTests.sequence(parts)
        },
        contentType: "application/octet-stream"))
    #expect(text == "ok")
    let recorded = try await fixture.server.takeRequest()
    #expect(recorded.body.count == body.count)
    #expect(recorded.body == body)
  }

  /// CurlTransport sends it chunked: the chunks' framing is no part of the body's progress.
  @Test("upload progress completes for an unknown length", arguments: TransportKind.wire)
  func progressUnknown(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(status: 204))
    let body = Self.bytes(300_000)
    let progress = TransferProgress(minimumInterval: .zero)
    let collector = Task { await progress.collect() }
    try await fixture.client.send(
      Endpoint<Void>(.put, "up").streamBody(
        .stream {
          StreamBodyConformanceTests.sequence(
            StreamBodyConformanceTests.chunked(body, size: 65_536))
        },
        contentType: "application/octet-stream"
      ).uploadProgress(progress))
    let events = await collector.linkedValue
    #expect(events.last?.completed == Int64(body.count), "\(events.suffix(3))")
    #expect(events.last?.isFinal == true)
    #expect(events.allSatisfy { $0.completed <= Int64(body.count) })
  }

  /// URLSessionTransport reads the whole sequence before it connects, so only CurlTransport
  /// has a paused upload here. libcurl 7.88 stops sending at the 413 but kept the transfer
  /// paused, so it never ended.
  ///
  /// The server answers 413 at the head and closes, while the producer waits forever.
  @Test("an early answer while the producer is blocked", arguments: [TransportKind.curl])
  func earlyAnswer(kind: TransportKind) async throws {
    let server = try ScriptedServer([
      { connection in
        guard ScriptedServer.readHead(connection) != nil else { return }
        ScriptedServer.send(
          connection,
          "HTTP/1.1 413 Payload Too Large\r\nContent-Length: 3\r\nConnection: close\r\n\r\nbig")
        shutdown(connection, Int32(SHUT_WR))
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while read(connection, &buffer, buffer.count) > 0 {}
      }
    ])
    defer { server.close() }
    let underTest = kind.make()
    defer { underTest.shutdown() }
    let client = Client(baseURL: server.baseURL, transport: underTest.transport, locale: "en")
    let (chunks, producer) = AsyncStream<Data>.makeStream()
    let (ended, endedContinuation) = AsyncStream<Void>.makeStream()
    producer.onTermination = { _ in endedContinuation.yield() }
    producer.yield(Self.bytes(1_000))
    let response = try await client.send(
      Request(
        method: .put, url: server.baseURL.appending(path: "up"),
        body: .stream(chunks, length: 1_000_000)))
    #expect(response.status == 413)
    var iterator = ended.makeAsyncIterator()
    #expect(await iterator.next() != nil)
  }

  /// URLSessionTransport is still writing the sequence to its temporary file here: its
  /// shutdown must end that too (no URLSession task exists yet to cancel).
  @Test("shutdown while the producer is blocked", arguments: TransportKind.wire)
  func shutdownWhileBlocked(kind: TransportKind) async throws {
    let server = try ObservingServer()
    defer { server.close() }
    let underTest = kind.make()
    let client = Client(baseURL: server.baseURL, transport: underTest.transport, locale: "en")
    let (chunks, producer) = AsyncStream<Data>.makeStream()
    let (ended, endedContinuation) = AsyncStream<Void>.makeStream()
    producer.onTermination = { _ in endedContinuation.yield() }
    let (asked, askedContinuation) = AsyncStream<Int>.makeStream()
    let send = Task {
      try await client.send(
        Request(
          method: .put, url: server.baseURL.appending(path: "up"),
          body: .stream(Demanding(base: chunks, asked: askedContinuation), length: 1_000_000)))
    }
    producer.yield(Self.bytes(4_000))
    for await demand in asked where demand == 2 { break }
    if kind == .curl { #expect(await server.waitForBody(atLeast: 4_000)) }
    underTest.shutdown()
    let error = await courierError { try await send.linkedValue }
    #expect(error != nil, "\(String(reflecting: error))")
    var iterator = ended.makeAsyncIterator()
    #expect(await iterator.next() != nil)
  }

  @Test(
    "a producer that never yields times out at the request's timeout", arguments: TransportKind.wire
  )
  func neverYields(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    fixture.server.setDispatcher { _ in .text("ok") }
    let (chunks, _) = AsyncStream<Data>.makeStream()
    var request = Request(
      method: .put, url: fixture.server.url("/up"), body: .stream(chunks, length: 10))
    request.timeout = .milliseconds(500)
    let error = await courierError { try await fixture.client.send(request) }
    #expect(error?.kind == .timedOut, "\(String(reflecting: error))")
  }

  /// The first request leaves a keep-alive connection; the server closes it when the second
  /// request's head arrives, without an answer (as at its idle timeout). libcurl resends such
  /// a request on a new connection, which needs the body from its start: CurlTransport sends
  /// a stream body on a fresh connection. (URLSessionTransport waits out its timeout here
  /// whatever the body.)
  @Test("a stream body does not go out on a reused connection", arguments: [TransportKind.curl])
  func staleConnection(kind: TransportKind) async throws {
    let server = try ScriptedServer([
      { connection in
        guard ScriptedServer.readRequest(connection) != nil else { return }
        ScriptedServer.send(connection, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst")
        _ = ScriptedServer.readHead(connection)
      },
      { connection in
        guard let (_, body) = ScriptedServer.readRequest(connection) else { return }
        ScriptedServer.send(
          connection,
          "HTTP/1.1 200 OK\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n")
        _ = body.withUnsafeBytes { write(connection, $0.baseAddress, body.count) }
      },
    ])
    defer { server.close() }
    let underTest = kind.make()
    defer { underTest.shutdown() }
    let client = Client(baseURL: server.baseURL, transport: underTest.transport, locale: "en")
    let first = try await client.send(Request(url: server.baseURL.appending(path: "a")))
    #expect(first.body == Data("first".utf8))
    let body = Self.bytes(1_000)
    let response = try await client.send(
      Request(
        method: .put, url: server.baseURL.appending(path: "b"),
        body: .stream(length: 1_000) { StreamBodyConformanceTests.sequence([body]) }))
    #expect(response.body == body)
  }
}
