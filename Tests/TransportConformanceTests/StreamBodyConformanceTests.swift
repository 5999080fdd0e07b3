import Courier
import CourierTesting
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Request bodies read from an `AsyncSequence` (`RequestBody.stream`), on every wire transport.
///
/// One difference is by design: `CurlTransport` sends the body while it is produced, chunked
/// when it has no length, and `URLSessionTransport` writes it to a temporary file first and
/// sends it with a `Content-Length` (URLSession on Linux takes a stream with no bytes ready
/// for the end of the body). The cases that depend on it say so.
@Suite("Stream request bodies", .timeLimit(.minutes(5)))
struct StreamBodyConformanceTests {
  /// `count` bytes of a pattern, so that a byte out of place shows.
  static func bytes(_ count: Int, seed: UInt8 = 0) -> Data {
    // Byte i depends on i modulo 256 only: one period, repeated (a map over every index
    // costs a debug build about a second for a few MiB).
    let period = Data((0..<256).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
    var data = Data(capacity: count)
    while data.count < count { data.append(period.prefix(count - data.count)) }
    return data
  }

  /// A sequence of `chunks`, one after the other.
  static func sequence(_ chunks: [Data]) -> AsyncStream<Data> {
    AsyncStream { continuation in
      for chunk in chunks { continuation.yield(chunk) }
      continuation.finish()
    }
  }

  /// `total` bytes in chunks of `size`.
  static func chunked(_ total: Data, size: Int) -> [Data] {
    stride(from: 0, to: total.count, by: size).map {
      total.subdata(in: $0..<min($0 + size, total.count))
    }
  }

  struct Thrown: Error, CustomStringConvertible {
    var description: String { "the producer broke" }
  }

  @Test("a known length arrives whole with Content-Length", arguments: TransportKind.wire)
  func knownLength(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    let body = Self.bytes(200_000)
    let chunks = Self.chunked(body, size: 16_384)
    fixture.server.enqueue(.text("ok"))
    fixture.server.enqueue(.text("next"))
    let text = try await fixture.client.send(
      Endpoint<String>(.put, "up").streamBody(
        .stream(length: Int64(body.count)) { Self.sequence(chunks) },
        contentType: "application/octet-stream"))
    #expect(text == "ok")
    let recorded = try await fixture.server.takeRequest()
    #expect(recorded.body == body)
    #expect(recorded.header("Content-Length") == "200000")
    #expect(recorded.header("Transfer-Encoding") == nil)
    // The transport goes on: the next request on it works.
    #expect(try await fixture.client.send(Endpoint<String>(.get, "next")) == "next")
  }

  /// CurlTransport sends the body while it is produced, so without a length it frames it
  /// chunked; URLSessionTransport has it whole before it sends it, so it sends its length.
  @Test("an unknown length arrives whole (chunked on CurlTransport)", arguments: TransportKind.wire)
  func unknownLength(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    let body = Self.bytes(150_001, seed: 7)
    let chunks = Self.chunked(body, size: 10_000)
    fixture.server.enqueue(.text("ok"))
    fixture.server.enqueue(.text("next"))
    _ = try await fixture.client.send(
      Endpoint<String>(.post, "up").streamBody(
        .stream { Self.sequence(chunks) }, contentType: "application/octet-stream"))
    let recorded = try await fixture.server.takeRequest()
    #expect(recorded.body == body)
    switch kind {
    case .curl:
      #expect(recorded.header("Transfer-Encoding")?.lowercased() == "chunked")
      #expect(recorded.header("Content-Length") == nil)
    case .urlSession:
      #expect(recorded.header("Content-Length") == "150001")
      #expect(recorded.header("Transfer-Encoding") == nil)
    }
    #expect(try await fixture.client.send(Endpoint<String>(.get, "next")) == "next")
  }

  /// On CurlTransport the first chunk is on the wire before the producer is asked for the
  /// last one; on URLSessionTransport the body goes out once it is all produced.
  @Test("a slow producer's chunks go out as they come", arguments: TransportKind.wire)
  func slowProducer(kind: TransportKind) async throws {
    let server = try ObservingServer()
    defer { server.close() }
    let underTest = kind.make()
    defer { underTest.shutdown() }
    let client = Client(baseURL: server.baseURL, transport: underTest.transport, locale: "en")
    let first = Self.bytes(5_000)
    let last = Self.bytes(3_000, seed: 9)
    let (chunks, producer) = AsyncStream<Data>.makeStream()
    let send = Task {
      try await client.send(
        Endpoint<String>(.put, "slow").streamBody(
          .stream(chunks, length: 8_000), contentType: "application/octet-stream"))
    }
    producer.yield(first)
    if kind == .curl {
      // The server has the first chunk while the last does not exist yet.
      #expect(await server.waitForBody(atLeast: first.count))
    }
    producer.yield(last)
    producer.finish()
    #expect(try await send.linkedValue == "ok")
    #expect(server.body == first + last)
  }

  @Test(
    "a sequence that throws fails the attempt with invalidRequest", arguments: TransportKind.wire)
  func throwingSequence(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    fixture.server.setDispatcher { _ in .text("ok") }
    let failing = AsyncThrowingStream<Data, any Error> { continuation in
      continuation.yield(Self.bytes(70_000))
      continuation.finish(throwing: Thrown())
    }
    let error = await courierError {
      try await fixture.client.send(
        Endpoint<String>(.post, "up").streamBody(
          .stream(failing), contentType: "application/octet-stream"))
    }
    #expect(error?.kind == .invalidRequest, "\(String(reflecting: error))")
    #expect(error?.underlying is Thrown)
    #expect(error?.debugMessage.contains("the producer broke") == true)
    // The server never took a cut body for a whole one.
    #expect(fixture.server.requestCount == 0)
    #expect(try await fixture.client.send(Endpoint<String>(.get, "after")) == "ok")
  }

  @Test(
    "a body shorter or longer than its length fails with invalidRequest",
    arguments: TransportKind.wire, [(7_000, 10_000), (12_000, 10_000)])
  func wrongLength(kind: TransportKind, lengths: (produced: Int, declared: Int)) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    fixture.server.setDispatcher { _ in .text("ok") }
    let chunks = Self.chunked(Self.bytes(lengths.produced), size: 1_000)
    let error = await courierError {
      try await fixture.client.send(
        Endpoint<String>(.put, "up").streamBody(
          .stream(length: Int64(lengths.declared)) { Self.sequence(chunks) },
          contentType: "application/octet-stream"))
    }
    #expect(error?.kind == .invalidRequest, "\(String(reflecting: error))")
    let message = error?.debugMessage ?? ""
    #expect(message.contains("\(lengths.declared) bytes"), "\(message)")
    // The count at which the sequence was found wrong: its end, or the first chunk past it.
    let seen = lengths.produced < lengths.declared ? lengths.produced : lengths.declared + 1_000
    #expect(message.contains("\(seen) bytes"), "\(message)")
    #expect(fixture.server.requestCount == 0)
    #expect(try await fixture.client.send(Endpoint<String>(.get, "after")) == "ok")
  }

  @Test("a replayable stream is sent again by a retry", arguments: TransportKind.wire)
  func replayableRetry(kind: TransportKind) async throws {
    let fixture = try Fixture(
      kind,
      middleware: [
        RetryMiddleware(
          policy: RetryPolicy(baseDelay: .milliseconds(1), maximumDelay: .milliseconds(1)))
      ])
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(status: 503))
    fixture.server.enqueue(.text("ok"))
    let body = Self.bytes(100_000, seed: 3)
    let made = Atomic<Int>(0)
    let text = try await fixture.client.send(
      Endpoint<String>(.put, "up").streamBody(
        .stream(length: Int64(body.count)) {
          made.add(1, ordering: .relaxed)
          return Self.sequence(Self.chunked(body, size: 8_192))
        }, contentType: "application/octet-stream"))
    #expect(text == "ok")
    #expect(made.load(ordering: .relaxed) == 2)
    #expect(try await fixture.server.takeRequest().body == body)
    #expect(try await fixture.server.takeRequest().body == body)
  }

  @Test(
    "a one-shot stream is not retried, and a second send fails with invalidRequest",
    arguments: TransportKind.wire)
  func oneShot(kind: TransportKind) async throws {
    let fixture = try Fixture(
      kind,
      middleware: [
        RetryMiddleware(
          policy: RetryPolicy(baseDelay: .milliseconds(1), maximumDelay: .milliseconds(1)))
      ])
    defer { fixture.shutdown() }
    fixture.server.setDispatcher { _ in MockResponse(status: 503) }
    let body = Self.bytes(20_000)
    let request = Request(
      method: .put, url: fixture.server.url("/up"),
      body: .stream(Self.sequence([body]), length: Int64(body.count)))
    let response = try await fixture.client.send(request)
    #expect(response.status == 503)
    #expect(fixture.server.requestCount == 1)
    #expect(try await fixture.server.takeRequest().body == body)
    let again = await courierError { try await fixture.client.send(request) }
    #expect(again?.kind == .invalidRequest, "\(String(reflecting: again))")
    #expect(again?.debugMessage.contains("RequestBody.stream(length:_:)") == true)
    #expect(fixture.server.requestCount == 1)
  }

  @Test(
    "a 307 resends a replayable stream and refuses a one-shot one", arguments: TransportKind.wire)
  func redirect(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    let body = Self.bytes(30_000, seed: 5)
    fixture.server.enqueue(MockResponse(status: 307).addingHeader("Location", "/again"))
    fixture.server.enqueue(.text("ok"))
    let text = try await fixture.client.send(
      Endpoint<String>(.post, "first").streamBody(
        .stream(length: Int64(body.count)) { Self.sequence([body]) },
        contentType: "application/octet-stream"))
    #expect(text == "ok")
    #expect(try await fixture.server.takeRequest().body == body)
    let second = try await fixture.server.takeRequest()
    #expect(second.path == "/again")
    #expect(second.body == body)

    fixture.server.enqueue(MockResponse(status: 307).addingHeader("Location", "/again"))
    let error = await courierError {
      try await fixture.client.send(
        Endpoint<String>(.post, "first").streamBody(
          .stream(Self.sequence([body])), contentType: "application/octet-stream"))
    }
    #expect(error?.kind == .invalidRequest, "\(String(reflecting: error))")
    #expect(error?.debugMessage.contains("one-shot") == true)
    #expect(try await fixture.server.takeRequest().body == body)
    #expect(fixture.server.requestCount == 3)
  }

  /// CurlTransport is cancelled in mid-upload, with the first chunk on the wire;
  /// URLSessionTransport while it is still reading the sequence. Either way the producer sees
  /// its reader go, and no connection is left to the server.
  @Test("cancelling during the upload ends the producer", arguments: TransportKind.wire)
  func cancellation(kind: TransportKind) async throws {
    let server = try ObservingServer()
    defer { server.close() }
    let underTest = kind.make()
    defer { underTest.shutdown() }
    let client = Client(baseURL: server.baseURL, transport: underTest.transport, locale: "en")
    let (ended, endedContinuation) = AsyncStream<Void>.makeStream()
    let (chunks, producer) = AsyncStream<Data>.makeStream()
    producer.onTermination = { _ in endedContinuation.yield() }
    let (asked, askedContinuation) = AsyncStream<Int>.makeStream()
    let send = Task {
      try await client.send(
        Endpoint<String>(.put, "up").streamBody(
          .stream(Demanding(base: chunks, asked: askedContinuation), length: 1_000_000),
          contentType: "application/octet-stream"))
    }
    producer.yield(Self.bytes(4_000))
    // The reader took the first chunk and waits for the second.
    for await demand in asked where demand == 2 { break }
    if kind == .curl { #expect(await server.waitForBody(atLeast: 4_000)) }
    send.cancel()
    let error = await courierError { try await send.value }
    #expect(error?.kind == .cancelled, "\(String(reflecting: error))")
    // The producer's reader went away.
    var iterator = ended.makeAsyncIterator()
    #expect(await iterator.next() != nil)
    // The server sees the connection close (when there was one).
    #expect(await server.waitForClose())
    #expect(server.completedBodies == 0)
  }

  @Test("upload progress reaches the total", arguments: TransportKind.wire)
  func uploadProgress(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(status: 204))
    let body = Self.bytes(1_500_000)
    let progress = TransferProgress(minimumInterval: .zero)
    let collector = Task { await progress.collect() }
    try await fixture.client.send(
      Endpoint<Void>(.put, "up").streamBody(
        .stream(length: Int64(body.count)) { Self.sequence(Self.chunked(body, size: 65_536)) },
        contentType: "application/octet-stream"
      ).uploadProgress(progress))
    let events = await collector.linkedValue
    #expect(try await fixture.server.takeRequest().body == body)
    #expect(events.last?.completed == Int64(body.count), "\(events.suffix(3))")
    #expect(events.last?.isFinal == true)
    #expect(zip(events, events.dropFirst()).allSatisfy { $0.completed <= $1.completed })
  }

  /// A body larger than every buffer on the way, from a sequence that makes its chunks on
  /// demand: it arrives whole, and the transport's buffers stay bounded by construction
  /// (CurlTransport's 256 KiB and a chunk; URLSessionTransport's temporary file).
  @Test("a multi-megabyte body from a lazy sequence arrives whole", arguments: TransportKind.wire)
  func largeBody(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(status: 204))
    let chunk = 64 * 1024
    let count = 96
    try await fixture.client.send(
      Endpoint<Void>(.put, "big").streamBody(
        .stream { LazyChunks(size: chunk, count: count) },
        contentType: "application/octet-stream"))
    let recorded = try await fixture.server.takeRequest()
    #expect(recorded.body.count == chunk * count)
    #expect(recorded.body.prefix(chunk) == Self.bytes(chunk))
    #expect(recorded.body.suffix(chunk) == Self.bytes(chunk, seed: UInt8(count - 1)))
  }

  @Test(
    "a Content-Length over a stream of unknown length is refused", arguments: TransportKind.wire)
  func callersLength(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    var headers = HTTPHeaders()
    try headers.add(.contentLength, "5")
    let made = Atomic<Int>(0)
    let request = Request(
      method: .post, url: fixture.server.url("/up"), headers: headers,
      body: .stream {
        made.add(1, ordering: .relaxed)
        return Self.sequence([Data("hello".utf8)])
      })
    let error = await courierError { try await fixture.client.send(request) }
    #expect(error?.kind == .invalidRequest)
    #expect(error?.debugMessage.contains("RequestBody.stream(length:)") == true)
    #expect(made.load(ordering: .relaxed) == 0)
    #expect(fixture.server.requestCount == 0)
  }
}

/// `base`, telling `asked` the number of each chunk its reader asks for (1 for the first).
struct Demanding: AsyncSequence, Sendable {
  let base: AsyncStream<Data>
  let asked: AsyncStream<Int>.Continuation

  struct AsyncIterator: AsyncIteratorProtocol {
    var base: AsyncStream<Data>.AsyncIterator
    let asked: AsyncStream<Int>.Continuation
    var count = 0

    mutating func next() async -> Data? {
      count += 1
      asked.yield(count)
      return await base.next()
    }
  }

  func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(base: base.makeAsyncIterator(), asked: asked)
  }
}

/// `count` chunks of `size` bytes, each made when asked for (chunk `i` is
/// `StreamBodyConformanceTests.bytes(size, seed: i)`).
struct LazyChunks: AsyncSequence, Sendable {
  let size: Int
  let count: Int

  struct AsyncIterator: AsyncIteratorProtocol {
    let size: Int
    let count: Int
    var index = 0

    mutating func next() async -> Data? {
      guard index < count else { return nil }
      defer { index += 1 }
      return StreamBodyConformanceTests.bytes(size, seed: UInt8(truncatingIfNeeded: index))
    }
  }

  func makeAsyncIterator() -> AsyncIterator { AsyncIterator(size: size, count: count) }
}

/// A one-connection-at-a-time HTTP/1.1 server that reports the request body as it arrives:
/// what a test needs to see that part of a body is on the wire before the rest exists.
/// It reads a `Content-Length` body (no chunked), answers `200 ok` once it has it all, and
/// closes the connection.
final class ObservingServer: Sendable {
  let baseURL: URL
  private let listener: Int32

  private struct State {
    var received = Data()
    var closes = 0
    var completed = 0
    var waiters:
      [(condition: @Sendable (State) -> Bool, continuation: CheckedContinuation<Bool, Never>)] = []
    var stopped = false
  }

  private let state = Mutex(State())

  init() throws {
    let listener = try Socket.bindAndListen(host: "127.0.0.1")
    try Socket.setNonBlocking(listener.fd, false)
    self.listener = listener.fd
    guard let url = URL(string: "http://127.0.0.1:\(listener.port)/") else {
      throw CourierError(kind: .invalidRequest, debugMessage: "no URL")
    }
    baseURL = url
    Thread.detachNewThread { [self] in serve() }
  }

  /// The body bytes received on the last connection.
  var body: Data { state.withLock { $0.received } }
  /// How many bodies arrived whole.
  var completedBodies: Int { state.withLock { $0.completed } }

  /// Waits until `count` body bytes arrived on the current connection; `false` if the
  /// server stopped first.
  func waitForBody(atLeast count: Int) async -> Bool {
    await wait { $0.received.count >= count }
  }

  /// Waits until a connection was closed; `false` if the server stopped first. With no
  /// connection ever made, it returns `true` at once.
  func waitForClose() async -> Bool {
    await wait { $0.closes > 0 || $0.received.isEmpty && $0.completed == 0 && $0.closes == 0 }
  }

  private func wait(until condition: @escaping @Sendable (State) -> Bool) async -> Bool {
    await withCheckedContinuation { continuation in
      let now = state.withLock { state -> Bool? in
        if condition(state) { return true }
        if state.stopped { return false }
        state.waiters.append((condition, continuation))
        return nil
      }
      if let now { continuation.resume(returning: now) }
    }
  }

  private func update(_ change: (inout State) -> Void) {
    let ready = state.withLock { state -> [(CheckedContinuation<Bool, Never>, Bool)] in
      change(&state)
      var ready: [(CheckedContinuation<Bool, Never>, Bool)] = []
      let now = state
      state.waiters.removeAll { waiter in
        if waiter.condition(now) {
          ready.append((waiter.continuation, true))
          return true
        }
        if now.stopped {
          ready.append((waiter.continuation, false))
          return true
        }
        return false
      }
      return ready
    }
    for (continuation, value) in ready { continuation.resume(returning: value) }
  }

  private func serve() {
    while true {
      let connection = accept(listener, nil, nil)
      guard connection >= 0 else { break }
      handle(connection)
      Glibc.close(connection)
      update { $0.closes += 1 }
    }
    update { $0.stopped = true }
  }

  private func handle(_ connection: Int32) {
    update { $0.received = Data() }
    var head = [UInt8]()
    var buffer = [UInt8](repeating: 0, count: 65_536)
    var headEnd: Int?
    while headEnd == nil {
      let count = read(connection, &buffer, buffer.count)
      guard count > 0 else { return }
      head += buffer[0..<count]
      headEnd = Self.headEnd(head)
    }
    guard let headEnd else { return }
    let text = String(decoding: head[..<headEnd], as: UTF8.self).lowercased()
    let declared =
      text.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
      .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) }
      ?? 0
    let early = Data(head[headEnd...])
    update { $0.received.append(early) }
    var total = early.count
    while total < declared {
      let count = read(connection, &buffer, buffer.count)
      guard count > 0 else { return }
      total += count
      let piece = Data(buffer[0..<count])
      update { $0.received.append(piece) }
    }
    update { $0.completed += 1 }
    let reply = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
    _ = reply.withCString { write(connection, $0, strlen($0)) }
  }

  private static func headEnd(_ bytes: [UInt8]) -> Int? {
    guard bytes.count >= 4 else { return nil }
    for index in 0...(bytes.count - 4)
    where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13
      && bytes[index + 3] == 10
    {
      return index + 4
    }
    return nil
  }

  /// Stops listening; a connection being served ends when its client goes.
  func close() {
    shutdown(listener, Int32(SHUT_RDWR))
    Glibc.close(listener)
  }
}
