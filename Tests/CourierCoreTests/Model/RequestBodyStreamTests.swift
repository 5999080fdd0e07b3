import CourierCore
import CourierTesting
import Foundation
import Synchronization
import Testing

/// `RequestBody.stream`: replayable and one-shot bodies, their identity, reading them, and
/// how the middleware and the stub treat them.
@Suite("Stream request bodies", .timeLimit(.minutes(5)))
struct RequestBodyStreamTests {
  static func sequence(_ chunks: [Data]) -> AsyncStream<Data> {
    AsyncStream { continuation in
      for chunk in chunks { continuation.yield(chunk) }
      continuation.finish()
    }
  }

  static func read(_ body: RequestBody) async throws(CourierError) -> Data {
    var data = Data()
    for try await chunk in try body.makeChunks() { data.append(chunk) }
    return data
  }

  struct Thrown: Error {}

  @Test("a replayable stream makes a new sequence for every send")
  func replayable() async throws {
    let made = Atomic<Int>(0)
    let body = RequestBody.stream(length: 6) {
      made.add(1, ordering: .relaxed)
      return Self.sequence([Data("abc".utf8), Data("def".utf8)])
    }
    #expect(body.isStream && body.isReplayable && !body.isEmpty)
    #expect(body.streamLength == 6)
    #expect(body.data == nil && body.fileURL == nil)
    #expect(made.load(ordering: .relaxed) == 0)
    #expect(try await Self.read(body) == Data("abcdef".utf8))
    #expect(try await Self.read(body) == Data("abcdef".utf8))
    #expect(made.load(ordering: .relaxed) == 2)
  }

  @Test("a one-shot stream is read once; the second read says how to make it replayable")
  func oneShot() async throws {
    let body = RequestBody.stream(Self.sequence([Data("abc".utf8)]))
    #expect(body.isStream && !body.isReplayable)
    #expect(body.streamLength == nil)
    let copy = body
    #expect(try await Self.read(copy) == Data("abc".utf8))
    let error = await courierError { try await Self.read(body) }
    #expect(error?.kind == .invalidRequest)
    #expect(error?.debugMessage.contains("RequestBody.stream(length:_:)") == true)
  }

  @Test("stream bodies are equal by identity: copies are, separate calls are not")
  func identity() {
    let first = RequestBody.stream { Self.sequence([]) }
    let copy = first
    let second = RequestBody.stream { Self.sequence([]) }
    #expect(first == copy)
    #expect(first != second)
    #expect(first != .empty && first != .data(Data()))
    #expect(Set([first, copy, second]).count == 2)
  }

  @Test("collect(upTo:) reads every kind of body, within the limit")
  func collect() async throws {
    #expect(try await RequestBody.empty.collect(upTo: 0) == Data())
    #expect(try await RequestBody.data(Data("hey".utf8)).collect(upTo: 3) == Data("hey".utf8))
    let file = FileManager.default.temporaryDirectory
      .appendingPathComponent("courier-collect-\(UUID().uuidString)")
    try Data("from disk".utf8).write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    #expect(try await RequestBody.file(file).collect(upTo: 100) == Data("from disk".utf8))
    let stream = RequestBody.stream { Self.sequence([Data("a".utf8), Data("bc".utf8)]) }
    #expect(try await stream.collect(upTo: 3) == Data("abc".utf8))

    for body in [RequestBody.data(Data(count: 4)), .file(file), stream] {
      let error = await courierError { try await body.collect(upTo: 2) }
      #expect(error?.kind == .bodyTooLarge, "\(String(reflecting: error))")
    }
    let missing = await courierError {
      try await RequestBody.file(file.appendingPathExtension("gone")).collect(upTo: 10)
    }
    #expect(missing?.kind == .invalidRequest)
  }

  @Test(
    "a sequence short of or past its length fails, naming both numbers",
    arguments: [(4, 6, "after 4 bytes"), (8, 6, "produced 8 bytes")])
  func wrongLength(produced: Int, declared: Int, phrase: String) async {
    let body = RequestBody.stream(length: Int64(declared)) {
      Self.sequence((0..<produced / 2).map { _ in Data("xy".utf8) })
    }
    let error = await courierError { try await Self.read(body) }
    #expect(error?.kind == .invalidRequest)
    #expect(error?.debugMessage.contains(phrase) == true, "\(String(reflecting: error))")
    #expect(error?.debugMessage.contains("\(declared) bytes") == true)
  }

  @Test("the sequence's error becomes invalidRequest; a cancellation, cancelled")
  func errors() async {
    let failing = RequestBody.stream {
      AsyncThrowingStream<Data, any Error> { $0.finish(throwing: Thrown()) }
    }
    let error = await courierError { try await Self.read(failing) }
    #expect(error?.kind == .invalidRequest)
    #expect(error?.underlying is Thrown)

    let cancelled = RequestBody.stream {
      AsyncThrowingStream<Data, any Error> { $0.finish(throwing: CancellationError()) }
    }
    #expect(await courierError { try await Self.read(cancelled) }?.kind == .cancelled)

    let negative = RequestBody.stream(length: -1) { Self.sequence([]) }
    #expect(await courierError { try await Self.read(negative) }?.kind == .invalidRequest)
  }

  @Test("a body that is not a stream gives no chunks")
  func notAStream() async throws {
    #expect(try await Self.read(.data(Data("abc".utf8))) == Data())
    #expect(!RequestBody.data(Data()).isStream)
    #expect(RequestBody.data(Data()).streamLength == nil)
  }

  @Test("RetryMiddleware retries a replayable stream and leaves a one-shot one alone")
  func retries() async throws {
    let stub = StubTransport()
    stub.enqueue(.status(503), .status(503), .status(503), .status(503))
    let client = stubClient(
      stub,
      middleware: [
        RetryMiddleware(
          policy: RetryPolicy(baseDelay: .milliseconds(1), maximumDelay: .milliseconds(1)))
      ])
    let url = URL(string: "https://api.test/up")!
    _ = try await client.send(
      Request(method: .put, url: url, body: .stream { Self.sequence([Data("r".utf8)]) }))
    #expect(stub.requests.count == 3)
    #expect(stub.requests.allSatisfy { $0.body == .data(Data("r".utf8)) })
    _ = try await client.send(
      Request(method: .put, url: url, body: .stream(Self.sequence([Data("o".utf8)]))))
    #expect(stub.requests.count == 4)
  }

  @Test("StubTransport hands handlers the bytes; a one-shot stream cannot follow a 307")
  func stub() async throws {
    let stub = StubTransport()
    stub.on(.post, "v1/echo") { request in .init(status: 200, body: request.body.data ?? Data()) }
    var moved = HTTPHeaders()
    try moved.add(.location, "/v1/echo")
    stub.on(.post, "v1/moved", .init(status: 307, headers: moved))
    let client = stubClient(stub)
    let echoed = try await client.send(
      Endpoint<Data>(.post, "echo").streamBody(
        .stream(Self.sequence([Data("he".utf8), Data("llo".utf8)]), length: 5),
        contentType: "text/plain"))
    #expect(echoed == Data("hello".utf8))
    let followed = try await client.send(
      Endpoint<Data>(.post, "moved").streamBody(
        .stream { Self.sequence([Data("again".utf8)]) }, contentType: "text/plain"))
    #expect(followed == Data("again".utf8))
    let error = await courierError {
      try await client.send(
        Endpoint<Data>(.post, "moved").streamBody(
          .stream(Self.sequence([Data("once".utf8)])), contentType: "text/plain"))
    }
    #expect(error?.kind == .invalidRequest, "\(String(reflecting: error))")
  }

  @Test("LoggingMiddleware never reads a stream body")
  func logging() async throws {
    let sink = InMemoryLogSink()
    let made = Atomic<Int>(0)
    let client = stubClient(
      StubTransport(fallback: .status(204)),
      middleware: [LoggingMiddleware(level: .body, sink: sink)])
    try await client.send(
      Endpoint<Void>(.post, "up").streamBody(
        .stream(length: 6) {
          made.add(1, ordering: .relaxed)
          return Self.sequence([Data("secret".utf8)])
        }, contentType: "application/json"))
    // Read once: by the transport (the stub), never by the logger.
    #expect(made.load(ordering: .relaxed) == 1)
    #expect(!sink.text.contains("secret"))
    #expect(sink.text.contains("<stream, 6 bytes, not logged>"), "\(sink.text)")
  }
}
