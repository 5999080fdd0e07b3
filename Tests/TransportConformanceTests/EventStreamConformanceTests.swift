import Courier
import CourierTesting
import Foundation
import Synchronization
import Testing

/// A clock whose sleeps return at once and are recorded: the waits between reconnections are
/// asserted, not waited for.
private final class RecordingClock: Clock, Sendable {
  typealias Duration = Swift.Duration
  typealias Instant = ContinuousClock.Instant
  let sleeps = Mutex<[Duration]>([])
  /// Time stands still: a sleep until `now + d` records exactly `d`.
  let start = ContinuousClock.now
  var now: Instant { start }
  var minimumResolution: Duration { .nanoseconds(1) }
  func sleep(until deadline: Instant, tolerance: Duration?) async throws {
    sleeps.withLock { $0.append(start.duration(to: deadline)) }
    try Task.checkCancellation()
  }
}

/// `Client.events` over every transport and `MockServer`: a stream that breaks or ends is
/// resumed with `Last-Event-ID`, every event arrives once, and the source ends on `204`, on a
/// status it does not retry, and on the wrong content type.
@Suite("Server-Sent Events resume", .timeLimit(.minutes(5)))
struct EventSourceTests {
  private static func events(_ text: String, drop: Int? = nil) -> MockResponse {
    let body = Data(text.utf8)
    return MockResponse(
      headers: [MockHeader(name: "Content-Type", value: "text/event-stream; charset=utf-8")],
      body: body, fault: drop.map { .closeAfterBodyBytes(body.count - $0) })
  }

  @Test(
    "a stream dropped twice and then ended resumes each time; every event arrives once",
    arguments: TransportKind.wire)
  func resumesAfterDrops(_ kind: TransportKind) async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let answers: [MockResponse] = [
      // Cut inside the third event: its half is dropped, and the resume asks from 2.
      Self.events("retry: 25\nid: 1\ndata: one\n\nid: 2\ndata: two\n\nid: 3\ndata: thr", drop: 2),
      Self.events(": resumed\nid: 3\ndata: three\n\nid: 4\ndata: four\n\nid: 5\nda", drop: 1),
      Self.events("id: 5\ndata: five\ndata: lines\n\n"),
      MockResponse(status: 204),
    ]
    let served = Mutex(0)
    server.setDispatcher { _ in
      served.withLock { count in
        defer { count += 1 }
        return count < answers.count ? answers[count] : MockResponse(status: 500)
      }
    }
    let underTest = kind.make()
    defer { underTest.shutdown() }
    let client = Client(baseURL: server.url("/"), transport: underTest.transport)
    let clock = RecordingClock()
    var received: [String] = []
    for try await event in client.events(Endpoint<Void>(.get, "updates"), clock: clock) {
      received.append("\(event.id ?? "-"):\(event.data)")
    }
    #expect(received == ["1:one", "2:two", "3:three", "4:four", "5:five\nlines"])
    var lastIDs: [String?] = []
    for _ in 0..<4 {
      let request = try await server.takeRequest()
      lastIDs.append(request.header("Last-Event-ID"))
      #expect(request.header("Accept") == "text/event-stream")
    }
    #expect(lastIDs == [nil, "2", "4", "5"])
    // The server's retry (25 ms), before each of the three reconnections.
    #expect(clock.sleeps.withLock { $0 } == Array(repeating: .milliseconds(25), count: 3))
  }

  @Test(
    "failed reconnections back off, doubling, and give up after the limit",
    arguments: TransportKind.wire)
  func backoffAndGiveUp(_ kind: TransportKind) async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(Self.events("id: 7\ndata: seven\n\n"))
    for _ in 0..<3 { server.enqueue(MockResponse(status: 503)) }
    let underTest = kind.make()
    defer { underTest.shutdown() }
    let client = Client(baseURL: server.url("/"), transport: underTest.transport)
    let clock = RecordingClock()
    var received: [String] = []
    let reconnection = EventStreamReconnection(
      delay: .milliseconds(100), maximumDelay: .milliseconds(300), maximumConsecutiveFailures: 2)
    let error = await #expect(throws: CourierError.self) {
      for try await event in client.events(
        Endpoint<Void>(.get, "updates"), reconnection: reconnection, clock: clock)
      {
        received.append(event.data)
      }
    }
    #expect(received == ["seven"])
    #expect(error?.kind == .httpStatus)
    #expect(error?.status == 503)
    // After the clean end: 100 ms; after the first 503: 100 ms; after the second: 200 ms,
    // then the third 503 is one failure too many.
    #expect(
      clock.sleeps.withLock { $0 } == [.milliseconds(100), .milliseconds(100), .milliseconds(200)])
    #expect(server.requestCount == 4)
  }

  @Test(
    "a 4xx ends the source with its error; the wrong content type too; 204 ends it quietly",
    arguments: TransportKind.wire)
  func endings(_ kind: TransportKind) async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(.json(#"{"msg":"gone"}"#, status: 410))
    server.enqueue(.json(#"{"data":1}"#))
    server.enqueue(MockResponse(status: 204))
    let underTest = kind.make()
    defer { underTest.shutdown() }
    let client = Client(baseURL: server.url("/"), transport: underTest.transport)
    let clock = RecordingClock()
    let gone = await #expect(throws: CourierError.self) {
      for try await _ in client.events(Endpoint<Void>(.get, "a"), clock: clock) {}
    }
    #expect(gone?.status == 410)
    let json = await #expect(throws: CourierError.self) {
      for try await _ in client.events(Endpoint<Void>(.get, "b"), clock: clock) {}
    }
    #expect(json?.kind == .badResponse)
    #expect(json?.debugMessage.contains("application/json") == true)
    var count = 0
    for try await _ in client.events(Endpoint<Void>(.get, "c"), clock: clock) { count += 1 }
    #expect(count == 0)
    #expect(clock.sleeps.withLock { $0 }.isEmpty)
  }

  @Test("the first connection can resume from a known id", arguments: TransportKind.wire)
  func initialLastEventID(_ kind: TransportKind) async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(Self.events("id: 10\ndata: ten\n\n"))
    server.enqueue(MockResponse(status: 204))
    let underTest = kind.make()
    defer { underTest.shutdown() }
    let client = Client(baseURL: server.url("/"), transport: underTest.transport)
    var received: [String] = []
    for try await event in client.events(
      Endpoint<Void>(.get, "u"), lastEventID: "9", clock: RecordingClock())
    {
      received.append(event.data)
    }
    #expect(received == ["ten"])
    #expect(try await server.takeRequest().header("Last-Event-ID") == "9")
    #expect(try await server.takeRequest().header("Last-Event-ID") == "10")
  }
}

/// `MockResponse.events` writes Server-Sent Events that `Client.events` reads back, and drops
/// the connection inside the event it names.
@Suite("MockServer's event streams", .timeLimit(.minutes(5)))
struct MockEventStreamTests {
  @Test(
    "events round-trip; a drop inside one resumes from the event before it",
    arguments: TransportKind.wire)
  func roundTripAndDrop(_ kind: TransportKind) async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let all = [
      ServerSentEvent(id: "1", data: "one"),
      ServerSentEvent(id: "2", event: "update", data: "two\nlines"),
      ServerSentEvent(id: "3", data: "three"),
    ]
    server.enqueue(.events(all, retry: .milliseconds(20), droppingInside: 2))
    server.enqueue(.events([all[2]]))
    server.enqueue(MockResponse(status: 204))
    let underTest = kind.make()
    defer { underTest.shutdown() }
    let client = Client(baseURL: server.url("/"), transport: underTest.transport)
    var received: [ServerSentEvent] = []
    for try await event in client.events(Endpoint<Void>(.get, "e"), clock: ImmediateClock()) {
      var event = event
      event.retry = nil
      received.append(event)
    }
    #expect(received == all)
    _ = try await server.takeRequest()
    #expect(try await server.takeRequest().header("Last-Event-ID") == "2")
  }
}

/// A clock whose sleeps return at once.
private struct ImmediateClock: Clock {
  typealias Duration = Swift.Duration
  typealias Instant = ContinuousClock.Instant
  var now: Instant { .now }
  var minimumResolution: Duration { .nanoseconds(1) }
  func sleep(until deadline: Instant, tolerance: Duration?) async throws {
    try Task.checkCancellation()
  }
}
