import Courier
import CourierTesting
import Foundation
import Testing

@testable import CourierURLSession

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What `URLSessionTransport` does with a streamed body on Linux, where URLSession cannot pause
/// a transfer: it keeps at most the body limit ahead of the reader, and a reader that falls
/// further behind gets `bodyTooLarge` saying why, with the transfer ended.
@Suite("URLSessionTransport streamed bodies", .serialized, .timeLimit(.minutes(5)))
struct StreamBacklogTests {
  @Test("a reader that falls the body limit behind gets bodyTooLarge; the transfer ends")
  func backlogPastTheLimit() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    // A finite body, four times the backlog: an endless one would keep URLSession's work
    // queue, which every session of the process shares, busy until the cancellation lands.
    server.enqueue(MockResponse(body: Data(count: 1 << 20)))
    server.enqueue(.text("after"))
    let transport = URLSessionTransport()
    defer { transport.shutdown() }
    let client = Client(baseURL: server.baseURL, transport: transport)
    var request = Request(url: server.url("/big"))
    request.attributes[ResponseBodyLimitAttribute.self] = 256 * 1024
    let streamed = try await client.stream(request, bufferSize: 16 * 1024)
    var iterator = streamed.body.makeAsyncIterator()
    var received = try await iterator.next()?.count ?? 0
    // Not reading: the body passes the backlog and the task ends. No event says when.
    let end = ContinuousClock.now + .seconds(10)
    while transport.observedTaskCount > 0, ContinuousClock.now < end { await Task.yield() }
    #expect(transport.observedTaskCount == 0)
    let error = await #expect(throws: CourierError.self) {
      while let chunk = try await iterator.next() { received += chunk.count }
    }
    #expect(error?.kind == .bodyTooLarge)
    #expect(error?.debugMessage.contains("cannot pause") == true)
    // What was buffered ahead of the reader, and no more: the first chunk and the backlog.
    #expect(received <= 2 * 256 * 1024)
    let after = try await client.send(Request(url: server.url("/after")))
    #expect(after.bodyText == "after")
  }

  @Test("with a buffer larger than the body limit, bodyTooLarge names the buffer's size")
  func backlogOfALargerBuffer() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(MockResponse(body: Data(count: 8 << 20)))
    let transport = URLSessionTransport()
    defer { transport.shutdown() }
    let client = Client(baseURL: server.baseURL, transport: transport)
    var request = Request(url: server.url("/big"))
    request.attributes[ResponseBodyLimitAttribute.self] = 64 * 1024
    let streamed = try await client.stream(request, bufferSize: 4 << 20)
    var iterator = streamed.body.makeAsyncIterator()
    var received = try await iterator.next()?.count ?? 0
    // Not reading: the body passes the backlog and the task ends. No event says when.
    let end = ContinuousClock.now + .seconds(10)
    while transport.observedTaskCount > 0, ContinuousClock.now < end { await Task.yield() }
    let error = await #expect(throws: CourierError.self) {
      while let chunk = try await iterator.next() { received += chunk.count }
    }
    #expect(error?.kind == .bodyTooLarge)
    // The reader was the 4 MiB buffer behind, not the 64 KiB limit.
    #expect(received >= 4 << 20)
    #expect(error?.debugMessage.contains("fell 4 MiB behind") == true)
  }

  @Test(
    "without Request.timeout, the session's idle timeout ends the wait for a streamed head",
    arguments: ["no head", "an error body that stalls"])
  func sessionIdleBoundsTheHead(_ case: String) async throws {
    let server = try MockServer()
    let gate = DispatchSemaphore(value: 0)
    defer {
      gate.signal()
      server.shutdown()
    }
    if `case` == "no head" {
      server.enqueue(MockResponse(fault: .hang))
    } else {
      var response = MockResponse(status: 503, chunked: true)
      response.source = MockBodySource(count: 2 * 1024) { offset, count in
        if offset > 0 { gate.wait() }
        return Data(repeating: UInt8(ascii: "e"), count: min(count, 1024))
      }
      server.enqueue(response)
    }
    let configuration = URLSessionTransport.defaultConfiguration
    configuration.timeoutIntervalForRequest = 1
    let transport = URLSessionTransport(configuration: configuration)
    defer { transport.shutdown() }
    let client = Client(baseURL: server.baseURL, transport: transport)
    let error = await #expect(throws: CourierError.self) {
      _ = try await client.stream(Request(url: server.url("/s")))
    }
    #expect(error?.kind == .timedOut)
    #expect(error?.debugMessage.contains("timeoutIntervalForRequest") == true)
  }

  @Test("a caller's session cannot stream: invalidRequest, saying why")
  func callersSessionRefusesToStream() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(.text("body"))
    let session = URLSession(configuration: .ephemeral)
    let transport = URLSessionTransport(session: session)
    defer { transport.shutdown() }
    let client = Client(baseURL: server.baseURL, transport: transport)
    let error = await #expect(throws: CourierError.self) {
      _ = try await client.stream(Endpoint<Void>(.get, "s"))
    }
    #expect(error?.kind == .invalidRequest)
    #expect(error?.debugMessage.contains("session URLSessionTransport created") == true)
  }

  @Test("a streamed request's idle timeout is not URLSession's: a 2 s pause passes a 1 s timeout")
  func requestTimeoutIsNotAnIdleTimeout() async throws {
    let server = try MockServer()
    let gate = DispatchSemaphore(value: 0)
    defer {
      gate.signal()
      server.shutdown()
    }
    var response = MockResponse(chunked: true)
    response.source = MockBodySource(count: 2 * 256 * 1024) { offset, count in
      // The second piece waits for the test: URLSession's own timer (the request's timeout,
      // a second more, in whole seconds) would end the task at 2 s of silence.
      if offset > 0 { gate.wait() }
      return Data(count: count)
    }
    server.enqueue(response)
    let transport = URLSessionTransport()
    defer { transport.shutdown() }
    let client = Client(baseURL: server.baseURL, transport: transport)
    var request = Request(url: server.url("/s"))
    request.timeout = .seconds(1)
    let streamed = try await client.stream(request)
    var iterator = streamed.body.makeAsyncIterator()
    var received = 0
    while received < 256 * 1024, let chunk = try await iterator.next() { received += chunk.count }
    // Silence past URLSession's timer, then the rest.
    try await Task.sleep(for: .milliseconds(2_500))
    gate.signal()
    while let chunk = try await iterator.next() { received += chunk.count }
    #expect(received == 2 * 256 * 1024)
  }
}
