import Courier
import CourierTesting
import Foundation
import Testing

/// ``Response/Timings`` on each wire transport over MockServer: the phases each one fills, in
/// order, a reused connection, and what a failed attempt reached.
///
/// `CurlTransport` fills every phase (TLS aside: MockServer speaks plain HTTP). URLSession on
/// Linux never delivers its task metrics, so `URLSessionTransport` there measures only the
/// response head (`firstByte`) and the completion (`bodyComplete`) itself; the cases expect
/// `nil` for the rest, as its documentation says, so that a Foundation that starts delivering
/// metrics shows up here.
@Suite("Timings over MockServer", .timeLimit(.minutes(5)))
struct TimingsConformanceTests {
  /// The phases present, in their order.
  static func phases(_ timings: Response.Timings) -> [Duration] {
    [
      timings.nameLookup, timings.connect, timings.tlsHandshake, timings.requestSent,
      timings.firstByte, timings.bodyComplete,
    ].compactMap { $0 }
  }

  /// Whether `kind` sees the connection's phases (on this platform).
  static func seesConnection(_ kind: TransportKind) -> Bool {
    #if canImport(FoundationNetworking)
      return kind == .curl
    #else
      return true
    #endif
  }

  @Test(
    "every phase is present and ordered; the second request reports the reused connection",
    arguments: TransportKind.wire)
  func phasesAndReuse(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    fixture.server.enqueue(.text("one"))
    fixture.server.enqueue(.text("two"))
    let first = try await fixture.client.send(Request(method: .get, url: fixture.server.url("a")))
    let second = try await fixture.client.send(Request(method: .get, url: fixture.server.url("b")))
    for response in [first, second] {
      let timings = response.timings
      #expect(Self.phases(timings) == Self.phases(timings).sorted(), "\(timings)")
      #expect(timings.firstByte != nil)
      #expect(timings.bodyComplete != nil)
      #expect(timings.tlsHandshake == nil, "MockServer speaks plain HTTP")
      // The client's total covers the attempt.
      let total = try #require(timings.total)
      #expect(total >= (timings.bodyComplete ?? .zero))
    }
    let (fresh, reused) = (first.timings, second.timings)
    guard Self.seesConnection(kind) else {
      for timings in [fresh, reused] {
        #expect(timings.nameLookup == nil)
        #expect(timings.connect == nil)
        #expect(timings.requestSent == nil)
        #expect(timings.connectionReused == nil)
        #expect(timings.remoteAddress == nil)
        #expect(timings.httpVersion == nil)
      }
      return
    }
    #expect(fresh.nameLookup != nil)
    #expect(fresh.connect != nil)
    #expect(fresh.requestSent != nil)
    #expect(fresh.connectionReused == false)
    #expect(fresh.remoteAddress == "127.0.0.1:\(fixture.server.port)")
    #expect(fresh.httpVersion == "HTTP/1.1")
    #expect(reused.connectionReused == true)
    #expect(reused.nameLookup == .zero)
    #expect(reused.connect == .zero)
    #expect(reused.requestSent != nil)
    #expect(reused.remoteAddress == fresh.remoteAddress)
  }

  @Test(
    "a refused connection fails with timings that have no first byte", arguments: TransportKind.wire
  )
  func refused(kind: TransportKind) async throws {
    let refusing = try RefusingPort()
    let underTest = kind.make()
    defer { underTest.shutdown() }
    let client = Client(baseURL: refusing.baseURL, transport: underTest.transport, locale: "en")
    let error = await #expect(throws: CourierError.self) {
      try await client.send(Request(method: .get, url: refusing.baseURL))
    }
    withExtendedLifetime(refusing) {}
    #expect(error?.kind == .cannotConnect)
    let timings = try #require(error?.timings)
    #expect(timings.firstByte == nil)
    #expect(timings.bodyComplete == nil)
    #expect(timings.connect == nil)
    if Self.seesConnection(kind) {
      #expect(timings.nameLookup != nil)
      #expect(timings.connectionReused == false)
    }
  }

  @Test(
    "a server that accepts and never answers times out with connect set and no first byte",
    arguments: TransportKind.wire)
  func silentServer(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(fault: .hang))
    var request = Request(method: .get, url: fixture.server.url("silent"))
    request.timeout = .milliseconds(300)
    let error = await #expect(throws: CourierError.self) {
      try await fixture.client.send(request)
    }
    #expect(error?.kind == .timedOut)
    let timings = try #require(error?.timings)
    #expect(timings.firstByte == nil)
    #expect(timings.bodyComplete == nil)
    if Self.seesConnection(kind) {
      #expect(timings.connect != nil)
      #expect(timings.requestSent != nil)
      #expect(Self.phases(timings) == Self.phases(timings).sorted())
    } else {
      #expect(timings.connect == nil, "URLSession on Linux does not report the connect")
    }
  }

  @Test(
    "TimeoutMiddleware's timeout keeps the phases the cancelled attempt reached",
    arguments: TransportKind.wire)
  func middlewareTimeout(kind: TransportKind) async throws {
    let fixture = try Fixture(
      kind, middleware: [TimeoutMiddleware(attempt: .milliseconds(300), overall: nil)])
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(fault: .hang))
    let error = await #expect(throws: CourierError.self) {
      try await fixture.client.send(Request(method: .get, url: fixture.server.url("silent")))
    }
    #expect(error?.kind == .timedOut)
    let timings = try #require(error?.timings)
    #expect(timings.firstByte == nil)
    if Self.seesConnection(kind) { #expect(timings.connect != nil) }
  }

  @Test(
    "the timings survive retry and logging: the last attempt's, on the response and the error",
    arguments: TransportKind.wire)
  func throughTheChain(kind: TransportKind) async throws {
    let sink = InMemoryLogSink()
    let retry = RetryMiddleware(
      policy: RetryPolicy(maximumAttempts: 2, baseDelay: .milliseconds(1)), budget: nil)
    let fixture = try Fixture(
      kind, middleware: [retry, LoggingMiddleware(level: .basic, sink: sink)])
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(status: 503))
    fixture.server.enqueue(.text("fine"))
    let response = try await fixture.client.send(
      Request(method: .get, url: fixture.server.url("retried")))
    #expect(response.attempts == 2)
    #expect(response.timings.firstByte != nil)
    #expect(response.timings.bodyComplete != nil)
    if Self.seesConnection(kind) {
      // The second attempt's connection was the first one's.
      #expect(response.timings.connectionReused == true)
    }

    fixture.server.enqueue(MockResponse(status: 503))
    fixture.server.enqueue(MockResponse(status: 503))
    let error = await #expect(throws: CourierError.self) {
      try await fixture.client.send(Endpoint<Data>(.get, "failing"))
    }
    #expect(error?.kind == .httpStatus)
    #expect(error?.timings?.firstByte != nil)

    let lines = sink.events.map(\.message)
    #expect(lines.count == 4)
    for line in lines {
      #expect(line.contains(" ttfb "), "\(line)")
      #expect(line.contains(" total "), "\(line)")
      if Self.seesConnection(kind) { #expect(line.hasSuffix("HTTP/1.1"), "\(line)") }
    }
  }
}
