import Courier
import CourierTesting
import Foundation
import Synchronization
import Testing

@testable import CourierCurl

/// What is `CurlTransport`'s own in streaming a `2xx` body: a full buffer pauses libcurl and a
/// read resumes it without losing or reordering a byte, and a reader that stops removes the
/// transfer. The cases every transport shares are in `StreamingConformanceTests`.
@Suite("CurlTransport streams response bodies", .timeLimit(.minutes(5)))
struct StreamingTests {
  private static func pattern(_ count: Int) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) })
  }

  @Test(
    "a slow reader with a small buffer gets every byte, in order (pause and resume)",
    arguments: [1, 4 * 1024, 64 * 1024])
  func pausedTransferKeepsEveryByte(bufferSize: Int) async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let body = Self.pattern(1024 * 1024 + 17)
    // Framed by length, then chunked, then by length again: each after a transfer that paused.
    server.enqueue(MockResponse(body: body))
    server.enqueue(MockResponse(body: body, chunked: true))
    server.enqueue(MockResponse(body: body))
    let transport = CurlTransport()
    defer { transport.shutdown() }
    let client = Client(baseURL: server.url("/"), transport: transport)
    for round in 0..<3 {
      let streamed = try await client.stream(
        Request(url: server.url("/big")), bufferSize: bufferSize)
      var received = Data()
      var chunks = 0
      do {
        for try await chunk in streamed.body {
          received.append(chunk)
          chunks += 1
          // A reader slower than the loopback: the buffer fills and the transfer pauses.
          if chunks % 8 == 0 { await Task.yield() }
        }
      } catch {
        Issue.record("round \(round), after \(received.count) bytes: \(error.debugDescription)")
      }
      #expect(received.count == body.count)
      // Compared without `==` on the data: a failed `#expect` on megabytes diffs them for
      // minutes.
      let mismatch = zip(received, body).enumerated().first { $0.element.0 != $0.element.1 }?.offset
      #expect(mismatch == nil, "round \(round): first wrong byte at \(mismatch ?? -1)")
    }
    // The buffer did fill and the transfer did pause (a body of 1 MiB over at most 64 KiB).
    #expect(transport.streamResumes > 0)
  }

  @Test("a stream dropped without reading ends its transfer")
  func droppedStream() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(MockResponse(fault: .endlessBody))
    server.enqueue(.text("after"))
    let transport = CurlTransport()
    defer { transport.shutdown() }
    let client = Client(baseURL: server.url("/"), transport: transport)
    do {
      let streamed = try await client.stream(Endpoint<Void>(.get, "endless"))
      #expect(streamed.head.status == 200)
    }
    let after = try await client.send(Request(url: server.url("/after")))
    #expect(after.bodyText == "after")
    // Nothing is left in flight: the endless transfer was removed.
    await expectIdle(transport)
  }

  @Test("a body iterated twice: the second iterator throws invalidRequest")
  func iteratedTwice() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(.text("once"))
    let transport = CurlTransport()
    defer { transport.shutdown() }
    let client = Client(baseURL: server.url("/"), transport: transport)
    let streamed = try await client.stream(Endpoint<Void>(.get, "once"))
    let first = try await streamed.body.collect(upTo: 100)
    #expect(String(decoding: first, as: UTF8.self) == "once")
    let error = await #expect(throws: CourierError.self) {
      for try await _ in streamed.body {}
    }
    #expect(error?.kind == .invalidRequest)
  }

}

/// A transport that does not stream: the client hands the whole body over as one chunk.
@Suite("Client.stream over a transport that buffers", .timeLimit(.minutes(5)))
struct BufferedStreamTests {
  @Test("the whole body comes as one chunk; an empty one as none")
  func bufferedBody() async throws {
    let stub = StubTransport()
    stub.on(.get, "abc") { request in StubResponse(body: Data(request.url.path.utf8)) }
    let client = Client(baseURL: URL(string: "http://stub.example/")!, transport: stub)
    let streamed = try await client.stream(Endpoint<Void>(.get, "abc"))
    var chunks: [Data] = []
    for try await chunk in streamed.body { chunks.append(chunk) }
    #expect(chunks == [Data("/abc".utf8)])
    #expect(streamed.head.body.isEmpty)
    let empty = ResponseBodyStream(Data())
    var count = 0
    for try await _ in empty { count += 1 }
    #expect(count == 0)
  }

  @Test("a writer's failure is thrown after the bytes buffered before it")
  func failureAfterChunks() async throws {
    let (stream, writer) = ResponseBodyStream.makeStream(bufferSize: 8)
    #expect(writer.write(Data("abcd".utf8)))
    #expect(!writer.write(Data("efgh".utf8)))
    writer.fail(CourierError(kind: .connectionLost, debugMessage: "test"))
    var iterator = stream.makeAsyncIterator()
    // What was buffered comes in one piece, in order.
    #expect(try await iterator.next() == Data("abcdefgh".utf8))
    let error = await #expect(throws: CourierError.self) { _ = try await iterator.next() }
    #expect(error?.kind == .connectionLost)
    #expect(try await iterator.next() == nil)
  }

  @Test("appended bytes wait for flush; a buffer that filled meanwhile asks for more at flush")
  func deferredWake() async throws {
    let demands = Mutex(0)
    let (stream, writer) = ResponseBodyStream.makeStream(
      bufferSize: 4, onDemand: { demands.withLock { $0 += 1 } })
    let reading = Task {
      var iterator = stream.makeAsyncIterator()
      return try await iterator.next()
    }
    // An empty append asks for a flush once the reader waits (nothing is buffered for it).
    let end = ContinuousClock.now + .seconds(20)
    while !Data().withUnsafeBytes({ writer.append($0) }).needsFlush {
      try #require(ContinuousClock.now < end, "the reader never waited")
      await Task.yield()
    }
    // More than the buffer holds before the flush: the producer is told to pause, and the
    // waiting reader is not woken yet...
    let (room, again) = Data("abcdef".utf8).withUnsafeBytes { writer.append($0) }
    #expect(!room)
    #expect(!again)
    #expect(demands.withLock { $0 } == 0)
    // ...the flush hands the reader everything and asks the producer to go on.
    writer.flush()
    #expect(try await reading.value == Data("abcdef".utf8))
    #expect(demands.withLock { $0 } == 1)
  }

  @Test("the producer hears once when the reader takes half a full buffer, and when it stops")
  func demandAndTermination() async throws {
    let demands = Mutex(0)
    let terminations = Mutex(0)
    var (stream, writer) = ResponseBodyStream.makeStream(
      bufferSize: 4, onDemand: { demands.withLock { $0 += 1 } },
      onTermination: { terminations.withLock { $0 += 1 } })
    #expect(!writer.write(Data("1234".utf8)))
    var iterator = stream.makeAsyncIterator()
    #expect(try await iterator.next() == Data("1234".utf8))
    #expect(demands.withLock { $0 } == 1)
    #expect(writer.write(Data("5".utf8)))
    iterator = ResponseBodyStream(Data()).makeAsyncIterator()
    stream = ResponseBodyStream(Data())
    #expect(terminations.withLock { $0 } == 1)
    #expect(writer.isTerminated)
    // Written after the stop: dropped, no second termination.
    writer.write(Data("6".utf8))
    writer.finish()
    #expect(terminations.withLock { $0 } == 1)
    _ = stream
    _ = iterator
  }
}

/// `GzipMiddleware` decodes a streamed gzip body while it is read, within its limits counted
/// over the whole stream, and leaves one the transport decoded already as it is.
@Suite("Streamed bodies through GzipMiddleware", .timeLimit(.minutes(5)))
struct StreamedGzipTests {
  private static let original = Data(
    (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: ($0 / 7) &* 13 &+ $0 % 5) })

  private static func gzipped(_ data: Data, contentLength: Bool = true) throws -> MockResponse {
    let body = try GzipCompressor.compress(data)
    return MockResponse(
      headers: [
        MockHeader(name: "Content-Type", value: "application/octet-stream"),
        MockHeader(name: "Content-Encoding", value: "gzip"),
      ], body: body, chunked: !contentLength)
  }

  private static func client(_ server: MockServer, _ transport: CurlTransport) -> Client {
    Client(baseURL: server.url("/"), transport: transport, middleware: [GzipMiddleware()])
  }

  private static func read(_ streamed: StreamedResponse) async throws(CourierError) -> Data {
    var data = Data()
    for try await chunk in streamed.body { data.append(chunk) }
    return data
  }

  @Test("a streamed gzip bomb fails with bodyTooLarge from the iterator")
  func bomb() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(try Self.gzipped(Data(count: 64 << 20)))
    let transport = CurlTransport()
    defer { transport.shutdown() }
    let streamed = try await Self.client(server, transport).stream(
      Request(url: server.url("/bomb")))
    var decoded = 0
    let error = await #expect(throws: CourierError.self) {
      for try await chunk in streamed.body { decoded += chunk.count }
    }
    #expect(error?.kind == .bodyTooLarge)
    // The standard limit: 32 MiB and 100× past 1 MiB, counted over the whole stream.
    #expect(decoded <= 32 << 20)
  }

  @Test("a truncated gzip stream fails with corruptBody at its end")
  func truncated() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let whole = try GzipCompressor.compress(Self.original)
    server.enqueue(
      MockResponse(
        headers: [MockHeader(name: "Content-Encoding", value: "gzip")],
        body: whole.prefix(whole.count / 2)))
    let transport = CurlTransport()
    defer { transport.shutdown() }
    let streamed = try await Self.client(server, transport).stream(Request(url: server.url("/t")))
    let error = await #expect(throws: CourierError.self) { _ = try await Self.read(streamed) }
    #expect(error?.kind == .corruptBody)
    #expect(error?.debugMessage.contains("truncated") == true)
  }

  @Test("a body the transport decoded already passes as it is")
  func transportDecoded() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(try Self.gzipped(Self.original))
    var configuration = CurlTransport.Configuration.standard
    configuration.contentDecoding = .automatic
    let transport = CurlTransport(configuration: configuration)
    defer { transport.shutdown() }
    let streamed = try await Self.client(server, transport).stream(Request(url: server.url("/a")))
    let data = try await Self.read(streamed)
    #expect(data.elementsEqual(Self.original))
  }
}

/// `LoggingMiddleware` logs a streamed response's head at once and its size and duration when
/// it ends; never its bytes.
@Suite("Streamed bodies through LoggingMiddleware", .timeLimit(.minutes(5)))
struct StreamedLoggingTests {
  @Test("the head is logged as streamed, the end with the byte count, never the body")
  func headThenEnd() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let secret = "token-s3cr3t-in-the-body"
    server.enqueue(.text(String(repeating: secret, count: 1000)))
    let transport = CurlTransport()
    defer { transport.shutdown() }
    let sink = InMemoryLogSink()
    let client = Client(
      baseURL: server.url("/"), transport: transport,
      middleware: [LoggingMiddleware(level: .body, sink: sink)])
    let streamed = try await client.stream(Endpoint<Void>(.get, "s"))
    let head = sink.events.filter { $0.severity == .info }
    #expect(head.count == 1)
    #expect(head.first?.metadata["response_bytes"] == "streamed")
    #expect(head.first?.metadata["response_body"] == "<streamed, not logged>")
    let data = try await streamed.body.collect(upTo: 1 << 20)
    #expect(data.count == secret.utf8.count * 1000)
    let end = sink.events.filter { $0.message.contains("stream ended") }
    #expect(end.count == 1)
    #expect(end.first?.metadata["response_bytes"] == String(data.count))
    #expect(end.first?.message.contains("\(data.count) bytes") == true)
    #expect(
      !sink.events.contains { event in
        event.message.contains(secret) || event.metadata.values.contains { $0.contains(secret) }
      })
  }
}

/// A streamed request's limits on `CurlTransport`, which keeps them in its loop: past the idle
/// timeout or the overall deadline the transfer is removed, not left to libcurl
/// (`StreamingConformanceTests` checks the errors on every transport).
@Suite("CurlTransport streamed bodies and their timeouts", .timeLimit(.minutes(5)))
struct StreamTimeoutTests {
  private static func streamed(
    _ server: MockServer, _ transport: CurlTransport, configure: (inout Request) -> Void
  ) async throws -> StreamedResponse {
    var request = Request(url: server.url("/s"))
    configure(&request)
    return try await Client(baseURL: server.url("/"), transport: transport).stream(request)
  }

  @Test("a server silent past the idle timeout: timedOut, naming the idle timeout")
  func idleTimeout() async throws {
    let server = try MockServer()
    // The server sends the first 256 KiB piece, then waits on the gate (released at the end)
    // before the second: silence, not slowness.
    let gate = DispatchSemaphore(value: 0)
    defer {
      gate.signal()
      server.shutdown()
    }
    var response = MockResponse(chunked: true)
    response.source = MockBodySource(count: 512 * 1024) { offset, count in
      if offset > 0 { gate.wait() }
      return Data(count: count)
    }
    server.enqueue(response)
    let transport = CurlTransport()
    defer { transport.shutdown() }
    let streamed = try await Self.streamed(server, transport) {
      $0.attributes[StreamIdleTimeoutAttribute.self] = .milliseconds(300)
    }
    var received = 0
    let error = await #expect(throws: CourierError.self) {
      for try await chunk in streamed.body { received += chunk.count }
    }
    #expect(received == 256 * 1024)
    #expect(error?.kind == .timedOut)
    #expect(error?.debugMessage.contains("idle timeout") == true)
    await expectIdle(transport)
  }

  @Test("the overall deadline ends an endless body: timedOut, naming the deadline")
  func overallDeadline() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(MockResponse(fault: .endlessBody))
    let transport = CurlTransport()
    defer { transport.shutdown() }
    let streamed = try await Self.streamed(server, transport) {
      $0.attributes[DeadlineAttribute.self] = Deadline(after: .milliseconds(500))
    }
    var received = 0
    let error = await #expect(throws: CourierError.self) {
      for try await chunk in streamed.body { received += chunk.count }
    }
    #expect(received > 0)
    #expect(error?.kind == .timedOut)
    #expect(error?.debugMessage.contains("overall deadline") == true)
    await expectIdle(transport)
  }

}
