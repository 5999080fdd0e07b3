import Courier
import CourierTesting
import Foundation
import Synchronization
import Testing

/// Streamed response bodies (`Client.stream`) on every transport: the head and the first
/// chunks arrive before the body ends, a failure in mid-body is thrown by the iterator with its
/// kind, a reader that stops (a break, a cancelled task, a dropped stream) frees the
/// connection, the timeouts name themselves, gzip is decoded while read, and a non-`2xx`
/// answer fails before any body.
///
/// Each transport allows one connection per host here, so a request after a stream ended
/// gets its answer only if the streamed connection was freed, and its own answer only if that
/// connection was not reused with a body half read.
@Suite("Streamed bodies on every transport", .timeLimit(.minutes(5)))
struct StreamingConformanceTests {
  private static func pattern(_ count: Int) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) })
  }

  /// A chunked body of `count` bytes whose server sends the first `firstPiece` bytes, then
  /// waits for `gate` before the rest.
  private static func gated(
    count: Int, firstPiece: Int, gate: DispatchSemaphore
  ) -> MockResponse {
    var response = MockResponse(chunked: true)
    let sentFirst = Atomic<Bool>(false)
    response.source = MockBodySource(count: count) { offset, length in
      if offset >= firstPiece, !sentFirst.exchange(true, ordering: .relaxed) { gate.wait() }
      return Data(repeating: UInt8(truncatingIfNeeded: offset / 1000), count: length)
    }
    return response
  }

  /// A body that never ends, sent at about 16 MB/s: URLSessionTransport cannot pause a
  /// transfer, so an endless body from memory would pass its backlog whenever the reading task
  /// waits its turn for a core.
  private static func pacedEndless() -> MockResponse {
    var response = MockResponse(chunked: true)
    response.source = MockBodySource(count: 1 << 40) { _, length in
      usleep(1000)
      return Data(repeating: UInt8(ascii: "x"), count: min(length, 16 * 1024))
    }
    return response
  }

  @Test(
    "the first chunk arrives while the server holds back the rest",
    arguments: TransportKind.wire)
  func firstChunkBeforeTheEnd(_ kind: TransportKind) async throws {
    let fixture = try Fixture(kind, connections: 1)
    let gate = DispatchSemaphore(value: 0)
    defer {
      gate.signal()
      fixture.shutdown()
    }
    fixture.server.enqueue(Self.gated(count: 1 << 20, firstPiece: 64 * 1024, gate: gate))
    let streamed = try await fixture.client.stream(Endpoint<Void>(.get, "slow"))
    #expect(streamed.head.status == 200)
    var iterator = streamed.body.makeAsyncIterator()
    // The server is waiting on the gate: whatever comes now came before the body's end.
    var early = 0
    while early < 16 * 1024, let chunk = try await iterator.next() { early += chunk.count }
    #expect(early >= 16 * 1024)
    gate.signal()
    var total = early
    while let chunk = try await iterator.next() { total += chunk.count }
    #expect(total == 1 << 20)
  }

  @Test(
    "a slow reader gets every byte, in order, framed by length and chunked",
    arguments: TransportKind.wire)
  func everyByteInOrder(_ kind: TransportKind) async throws {
    let fixture = try Fixture(kind, connections: 1)
    defer { fixture.shutdown() }
    let body = Self.pattern(1024 * 1024 + 17)
    fixture.server.enqueue(MockResponse(body: body))
    fixture.server.enqueue(MockResponse(body: body, chunked: true))
    for round in 0..<2 {
      let streamed = try await fixture.client.stream(
        Request(url: fixture.server.url("/big")), bufferSize: 16 * 1024)
      var received = Data()
      var chunks = 0
      for try await chunk in streamed.body {
        received.append(chunk)
        chunks += 1
        if chunks % 8 == 0 { await Task.yield() }
      }
      #expect(received.count == body.count, "round \(round)")
      // Not `==` on the data: a failed `#expect` on megabytes diffs them for minutes.
      let mismatch = zip(received, body).enumerated().first { $0.element.0 != $0.element.1 }?.offset
      #expect(mismatch == nil, "round \(round): first wrong byte at \(mismatch ?? -1)")
    }
  }

  @Test(
    "once the reader has the end, the request is out of flight and its progress complete",
    arguments: TransportKind.wire)
  func endSeenAfterItsConsequences(_ kind: TransportKind) async throws {
    let fixture = try Fixture(kind, connections: 1)
    defer { fixture.shutdown() }
    for _ in 0..<20 { fixture.server.enqueue(MockResponse(body: Self.pattern(4096))) }
    for round in 0..<20 {
      let progress = TransferProgress()
      var request = Request(url: fixture.server.url("/p"))
      request.attributes[DownloadProgressAttribute.self] = progress
      let streamed = try await fixture.client.stream(request)
      _ = try await streamed.body.collect(upTo: 1 << 20)
      #expect(fixture.client.inFlightCount == 0, "round \(round)")
      #expect(progress.latest.isFinal, "round \(round)")
      #expect(progress.latest.completed == 4096, "round \(round)")
    }
  }

  @Test(
    "a connection reset in mid-body is thrown by the iterator as connectionLost",
    arguments: TransportKind.wire)
  func resetMidBody(_ kind: TransportKind) async throws {
    let fixture = try Fixture(kind, connections: 1)
    defer { fixture.shutdown() }
    fixture.server.enqueue(
      MockResponse(body: Self.pattern(1024 * 1024), fault: .resetAfterBodyBytes(200_000)))
    let streamed = try await fixture.client.stream(Endpoint<Void>(.get, "reset"))
    var received = 0
    let error = await #expect(throws: CourierError.self) {
      for try await chunk in streamed.body { received += chunk.count }
    }
    #expect(error?.kind == .connectionLost)
    #expect(received <= 200_000)
  }

  @Test(
    "a non-2xx answer fails before any body, with its body readable on the error",
    arguments: TransportKind.wire)
  func errorStatusBeforeTheBody(_ kind: TransportKind) async throws {
    let fixture = try Fixture(kind, connections: 1)
    defer { fixture.shutdown() }
    fixture.server.enqueue(.json(#"{"code":40401,"msg":"no such export"}"#, status: 404))
    let error = await #expect(throws: CourierError.self) {
      _ = try await fixture.client.stream(Endpoint<Void>(.get, "missing"))
    }
    #expect(error?.kind == .httpStatus)
    #expect(error?.status == 404)
    #expect(error?.response?.bodyText?.contains("no such export") == true)
    #expect(error?.response?.bodyStream == nil)
  }

  @Test(
    "breaking out of the loop frees the connection for the next request",
    arguments: TransportKind.wire)
  func breakFreesTheConnection(_ kind: TransportKind) async throws {
    let fixture = try Fixture(kind, connections: 1)
    defer { fixture.shutdown() }
    fixture.server.enqueue(Self.pacedEndless())
    fixture.server.enqueue(.text("after"))
    try await readSome(fixture)
    let after = try await fixture.client.send(Request(url: fixture.server.url("/after")))
    #expect(after.bodyText == "after")
  }

  /// Reads 256 KiB of an endless body and breaks out, in a function of its own so that the
  /// iterator is gone when it returns.
  private func readSome(_ fixture: Fixture) async throws {
    let streamed = try await fixture.client.stream(Endpoint<Void>(.get, "endless"))
    var received = 0
    for try await chunk in streamed.body {
      received += chunk.count
      if received >= 256 * 1024 { break }
    }
    #expect(received >= 256 * 1024)
  }

  @Test(
    "a stream dropped without reading frees the connection", arguments: TransportKind.wire)
  func droppedStream(_ kind: TransportKind) async throws {
    let fixture = try Fixture(kind, connections: 1)
    defer { fixture.shutdown() }
    fixture.server.enqueue(Self.pacedEndless())
    fixture.server.enqueue(.text("after"))
    do {
      let streamed = try await fixture.client.stream(Endpoint<Void>(.get, "endless"))
      #expect(streamed.head.status == 200)
    }
    let after = try await fixture.client.send(Request(url: fixture.server.url("/after")))
    #expect(after.bodyText == "after")
    #expect(fixture.client.inFlightCount == 0)
  }

  @Test(
    "cancelling the reading task ends the read with cancelled and frees the connection",
    arguments: TransportKind.wire)
  func cancelWhileReading(_ kind: TransportKind) async throws {
    let fixture = try Fixture(kind, connections: 1)
    let gate = DispatchSemaphore(value: 0)
    defer {
      gate.signal()
      fixture.shutdown()
    }
    // The server holds the rest of the body: the reader waits in `next()` when cancelled.
    fixture.server.enqueue(Self.gated(count: 1 << 20, firstPiece: 64 * 1024, gate: gate))
    fixture.server.enqueue(.text("after"))
    let started = AsyncStream<Void>.makeStream()
    let client = fixture.client
    let reading = Task {
      let streamed = try await client.stream(Endpoint<Void>(.get, "endless"))
      var signalled = false
      for try await _ in streamed.body where !signalled {
        started.continuation.yield()
        signalled = true
      }
    }
    for await _ in started.stream { break }
    reading.cancel()
    let result = await reading.result
    if case .failure(let error as CourierError) = result {
      #expect(error.kind == .cancelled)
    } else {
      Issue.record("the read ended with \(result), not a CourierError")
    }
    let after = try await client.send(Request(url: fixture.server.url("/after")))
    #expect(after.bodyText == "after")
  }

  @Test(
    "cancelAll() ends a body being read, as cancelled", arguments: TransportKind.wire)
  func cancelAllEndsTheBody(_ kind: TransportKind) async throws {
    let fixture = try Fixture(kind, connections: 1)
    let gate = DispatchSemaphore(value: 0)
    defer {
      gate.signal()
      fixture.shutdown()
    }
    // A server that stops sending: URLSessionTransport cannot pause a transfer, and a fast
    // endless body would pass its backlog while the test is not reading.
    fixture.server.enqueue(Self.gated(count: 1 << 20, firstPiece: 64 * 1024, gate: gate))
    let streamed = try await fixture.client.stream(Endpoint<Void>(.get, "held"))
    var iterator = streamed.body.makeAsyncIterator()
    _ = try await iterator.next()
    #expect(fixture.client.inFlightCount == 1)
    fixture.client.cancelAll()
    let error = await #expect(throws: CourierError.self) {
      while try await iterator.next() != nil {}
    }
    #expect(error?.kind == .cancelled)
    #expect(fixture.client.inFlightCount == 0)
  }

  @Test("shutting the transport down fails a body being read", arguments: TransportKind.wire)
  func shutdownWhileReading(_ kind: TransportKind) async throws {
    let fixture = try Fixture(kind, connections: 1)
    let gate = DispatchSemaphore(value: 0)
    defer {
      gate.signal()
      fixture.shutdown()
    }
    fixture.server.enqueue(Self.gated(count: 1 << 20, firstPiece: 64 * 1024, gate: gate))
    let streamed = try await fixture.client.stream(Endpoint<Void>(.get, "held"))
    var iterator = streamed.body.makeAsyncIterator()
    _ = try await iterator.next()
    fixture.underTest.shutdown()
    let error = await #expect(throws: CourierError.self) {
      while try await iterator.next() != nil {}
    }
    #expect(error?.kind == .cancelled)
  }

  @Test(
    "no head within the request's timeout: timedOut",
    arguments: TransportKind.wire)
  func headTimeout(_ kind: TransportKind) async throws {
    let fixture = try Fixture(kind, connections: 1)
    defer { fixture.shutdown() }
    // The head comes long after the timeout, so a timer that fires late under a full run's
    // load still fires first.
    fixture.server.enqueue(MockResponse(body: Data("late".utf8), delay: .seconds(60)))
    var late = Request(url: fixture.server.url("/late"))
    late.timeout = .milliseconds(300)
    let error = await #expect(throws: CourierError.self) {
      _ = try await fixture.client.stream(late)
    }
    #expect(error?.kind == .timedOut)
    #expect(error?.debugMessage.contains("no response head") == true)
  }

  @Test("a body may outlast the request's timeout", arguments: TransportKind.wire)
  func bodyOutlastsTimeout(_ kind: TransportKind) async throws {
    let fixture = try Fixture(kind, connections: 1)
    let gate = DispatchSemaphore(value: 0)
    defer {
      gate.signal()
      fixture.shutdown()
    }
    fixture.server.enqueue(Self.gated(count: 512 * 1024, firstPiece: 64 * 1024, gate: gate))
    var request = Request(url: fixture.server.url("/slow"))
    // Long enough for the head to arrive while a full test run keeps URLSession's shared
    // work queue busy (5 s was not, once in CI); the body's rest is held past it in any case.
    let timeout = Duration.seconds(20)
    request.timeout = timeout
    let start = ContinuousClock.now
    let streamed = try await fixture.client.stream(request)
    var iterator = streamed.body.makeAsyncIterator()
    var received = try await iterator.next()?.count ?? 0
    // The rest of the body comes once the timeout has passed.
    try await Task.sleep(until: start + timeout + .milliseconds(500))
    gate.signal()
    while let chunk = try await iterator.next() { received += chunk.count }
    #expect(received == 512 * 1024)
  }

  @Test(
    "a server silent past the idle timeout: timedOut, naming the idle timeout",
    arguments: TransportKind.wire)
  func idleTimeout(_ kind: TransportKind) async throws {
    let fixture = try Fixture(kind, connections: 1)
    let gate = DispatchSemaphore(value: 0)
    defer {
      gate.signal()
      fixture.shutdown()
    }
    fixture.server.enqueue(Self.gated(count: 512 * 1024, firstPiece: 256 * 1024, gate: gate))
    var request = Request(url: fixture.server.url("/idle"))
    request.attributes[StreamIdleTimeoutAttribute.self] = .milliseconds(300)
    let streamed = try await fixture.client.stream(request)
    var received = 0
    let error = await #expect(throws: CourierError.self) {
      for try await chunk in streamed.body { received += chunk.count }
    }
    #expect(received == 256 * 1024)
    #expect(error?.kind == .timedOut)
    #expect(error?.debugMessage.contains("idle timeout") == true)
  }

  @Test(
    "the overall deadline ends an endless body: timedOut, naming the deadline",
    arguments: TransportKind.wire)
  func overallDeadline(_ kind: TransportKind) async throws {
    let fixture = try Fixture(kind, connections: 1)
    defer { fixture.shutdown() }
    fixture.server.enqueue(Self.pacedEndless())
    fixture.server.enqueue(.text("after"))
    var request = Request(url: fixture.server.url("/endless"))
    request.attributes[DeadlineAttribute.self] = Deadline(after: .milliseconds(500))
    let streamed = try await fixture.client.stream(request)
    var received = 0
    let error = await #expect(throws: CourierError.self) {
      for try await chunk in streamed.body { received += chunk.count }
    }
    #expect(received > 0)
    #expect(error?.kind == .timedOut)
    #expect(error?.debugMessage.contains("overall deadline") == true)
    let after = try await fixture.client.send(Request(url: fixture.server.url("/after")))
    #expect(after.bodyText == "after")
  }

  @Test(
    "the longest idle timeout and a far deadline are limits like any other",
    arguments: TransportKind.wire)
  func extremeLimits(_ kind: TransportKind) async throws {
    let fixture = try Fixture(kind, connections: 1)
    defer { fixture.shutdown() }
    fixture.server.enqueue(.text("short"))
    var request = Request(url: fixture.server.url("/s"))
    request.attributes[StreamIdleTimeoutAttribute.self] = .seconds(Int64.max)
    request.attributes[DeadlineAttribute.self] = Deadline(after: .seconds(Int64(1) << 40))
    let streamed = try await fixture.client.stream(request)
    let body = try await streamed.body.collect(upTo: 100)
    #expect(String(decoding: body, as: UTF8.self) == "short")
  }

  @Test(
    "a gzip body is decoded while read, byte for byte, with and without a length",
    arguments: TransportKind.wire)
  func gzipWhileReading(_ kind: TransportKind) async throws {
    let server = try MockServer()
    let underTest = kind.make(connections: 1)
    defer {
      underTest.shutdown()
      server.shutdown()
    }
    let original = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: ($0 / 7) &* 13 &+ $0 % 5) })
    let compressed = try GzipCompressor.compress(original)
    for chunked in [false, true] {
      server.enqueue(
        MockResponse(
          headers: [MockHeader(name: "Content-Encoding", value: "gzip")], body: compressed,
          chunked: chunked))
    }
    let client = Client(
      baseURL: server.baseURL, transport: underTest.transport, middleware: [GzipMiddleware()])
    for _ in 0..<2 {
      let streamed = try await client.stream(Request(url: server.url("/z")), bufferSize: 4096)
      let data = try await streamed.body.collect(upTo: 2 << 20)
      #expect(data.count == original.count)
      #expect(data.elementsEqual(original))
    }
  }

  @Test(
    "the largest buffer size a caller can give streams a body like any other",
    arguments: TransportKind.wire)
  func largestBufferSize(_ kind: TransportKind) async throws {
    let fixture = try Fixture(kind, connections: 1)
    defer { fixture.shutdown() }
    let body = Self.pattern(300_000)
    fixture.server.enqueue(MockResponse(body: body))
    let streamed = try await fixture.client.stream(
      Request(url: fixture.server.url("/s")), bufferSize: .max)
    let data = try await streamed.body.collect(upTo: 1 << 20)
    #expect(data.count == body.count)
    #expect(data.elementsEqual(body))
  }

  @Test(
    "a .gz file served with Content-Encoding: gzip streams as the file, decoded once",
    arguments: TransportKind.wire)
  func gzipFileDecodedOnce(_ kind: TransportKind) async throws {
    let fixture = try Fixture(kind, connections: 1, middleware: [GzipMiddleware()])
    defer { fixture.shutdown() }
    let file = try GzipCompressor.compress(Self.pattern(100_000))
    fixture.server.enqueue(
      MockResponse(
        headers: [MockHeader(name: "Content-Encoding", value: "gzip")],
        body: try GzipCompressor.compress(file)))
    let streamed = try await fixture.client.stream(Request(url: fixture.server.url("/f.gz")))
    let data = try await streamed.body.collect(upTo: 1 << 20)
    // Not `==` on the data: a failed `#expect` diffs them byte by byte.
    #expect(data.count == file.count)
    #expect(data.elementsEqual(file))
    #expect(streamed.head.headers[.contentEncoding] == nil)
  }
}
