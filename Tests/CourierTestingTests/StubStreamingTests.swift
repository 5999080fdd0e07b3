import CourierCore
import CourierTesting
import Foundation
import Testing

/// `StubTransport` answers a streamed request with its body in pieces over its clock: the
/// head at once, each piece when the clock reaches it, and a scripted failure after the last.
@Suite("StubTransport streams a body over its clock", .timeLimit(.minutes(5)))
struct StubStreamingTests {
  @Test("the head at once; each piece only when the test clock reaches it")
  func piecesOverTheClock() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    stub.enqueue(StubResponse.text("abcdef").chunked(2, every: .seconds(1)))
    let client = Client(baseURL: URL(string: "http://stub.example/")!, transport: stub)
    let streamed = try await client.stream(Endpoint<Void>(.get, "events"))
    #expect(streamed.head.status == 200)
    var iterator = streamed.body.makeAsyncIterator()
    var received: [String] = []
    for _ in 0..<3 {
      // The delivering task sleeps on the clock before each piece.
      let end = ContinuousClock.now + .seconds(20)
      while clock.sleeperCount == 0 {
        try #require(ContinuousClock.now < end, "the stub never waited on its clock")
        await Task.yield()
      }
      clock.advance(by: .seconds(1))
      if let piece = try await iterator.next() {
        received.append(String(decoding: piece, as: UTF8.self))
      }
    }
    #expect(received.joined() == "abcdef")
    #expect(try await iterator.next() == nil)
  }

  @Test("a scripted failure reaches the reader after the last piece")
  func failureAfterTheBody() async throws {
    var answer = StubResponse.text("partial")
    answer.streamFailure = CourierError(kind: .connectionLost, debugMessage: "scripted")
    let stub = StubTransport([answer])
    let client = Client(baseURL: URL(string: "http://stub.example/")!, transport: stub)
    let streamed = try await client.stream(Endpoint<Void>(.get, "x"))
    var iterator = streamed.body.makeAsyncIterator()
    #expect(try await iterator.next() == Data("partial".utf8))
    let error = await #expect(throws: CourierError.self) { _ = try await iterator.next() }
    #expect(error?.kind == .connectionLost)
  }

  @Test("a non-2xx answer is not streamed: Client.stream fails with its status")
  func errorStatus() async throws {
    let stub = StubTransport([.json(#"{"msg":"nope"}"#, status: 404)])
    let client = Client(baseURL: URL(string: "http://stub.example/")!, transport: stub)
    let error = await #expect(throws: CourierError.self) {
      _ = try await client.stream(Endpoint<Void>(.get, "x"))
    }
    #expect(error?.status == 404)
  }
}

/// `StubTransport` reads a stream request body within the request's timeout, as the wire
/// transports do: a producer that never finishes ends the attempt as `timedOut`.
@Suite("StubTransport and stream request bodies", .timeLimit(.minutes(5)))
struct StubStreamBodyTests {
  @Test("a producer that never finishes: timedOut at the request's timeout, producer ended")
  func producerNeverFinishes() async throws {
    let stub = StubTransport()
    stub.enqueue(StubResponse(status: 200))
    let (chunks, producer) = AsyncStream<Data>.makeStream()
    let (ended, endedContinuation) = AsyncStream<Void>.makeStream()
    producer.onTermination = { _ in endedContinuation.yield() }
    producer.yield(Data("first".utf8))
    var request = Request(method: .post, url: URL(string: "http://stub.test/up")!)
    request.body = .stream(chunks)
    request.timeout = .milliseconds(200)
    let error = await #expect(throws: CourierError.self) { _ = try await stub.send(request) }
    #expect(error?.kind == .timedOut)
    #expect(error?.debugMessage.contains("stream body") == true)
    var iterator = ended.makeAsyncIterator()
    #expect(await iterator.next() != nil)
  }
}
