import Courier
import CourierTesting
import Foundation
import Testing

/// The time limit of one attempt covers all of its redirect hops together, on every transport
/// that follows redirects itself: a chain of slow hops fails at the limit, never after each hop
/// has had the whole limit of its own.
///
/// What is checked does not depend on the machine being idle: the kind, that the limit was not
/// cut short, and how many hops the server saw (at most three start within 1 s; all seven are
/// asked for when each hop has the whole limit). No upper bound on the time: a cooperative pool
/// starved by another suite's blocking test delays the moment the failure is seen, not the
/// hops the server counts.
@Suite("Transport conformance: timeouts across redirect hops", .timeLimit(.minutes(5)))
struct TimeoutAcrossRedirectsTests {
  /// Six hops of 0.5 s each: `/hop/0` … `/hop/5` redirect to the next, `/hop/6` answers.
  /// Followed hop by hop each within a 1 s limit, the chain succeeds after 3 s.
  static let hops = 6
  static let hopDelay = Duration.milliseconds(500)
  static let limit = Duration.seconds(1)

  static func serveSlowHops(on server: MockServer) {
    server.setDispatcher { request in
      let hop = Int(request.path.split(separator: "/").last ?? "") ?? hops
      guard hop < hops else { return MockResponse(status: 200, delay: hopDelay) }
      return MockResponse(status: 302, delay: hopDelay)
        .addingHeader("Location", "/hop/\(hop + 1)")
    }
  }

  /// Sends `send` and returns its error and how long it took.
  static func timed(
    _ send: () async throws -> Response
  ) async -> (error: CourierError?, elapsed: Duration) {
    let start = ContinuousClock.now
    let error = await courierError { try await send() }
    return (error, ContinuousClock.now - start)
  }

  @Test(
    "Client.standard with 1 s limits fails at about 1 s over six 0.5 s redirect hops",
    arguments: TransportKind.wire)
  func standardClient(kind: TransportKind) async throws {
    let server = try MockServer()
    let underTest = kind.make()
    defer {
      underTest.shutdown()
      server.shutdown()
    }
    Self.serveSlowHops(on: server)
    // Over CurlTransport the preset leaves the attempt's limit to the transport; over
    // URLSessionTransport Courier's timer enforces it.
    let client = Client.standard(
      baseURL: server.baseURL, transport: underTest.transport, locale: "en"
    ) {
      $0.timeout = TimeoutMiddleware(attempt: Self.limit, overall: Self.limit)
      $0.retry = nil
    }
    let (error, elapsed) = await Self.timed {
      try await client.send(Request(method: .get, url: server.url("/hop/0")))
    }
    #expect(error?.kind == .timedOut, "after \(elapsed): \(error?.debugDescription ?? "success")")
    #expect(elapsed >= .milliseconds(900))
    #expect(server.requestCount <= 3, "\(server.requestCount) hops asked for")
  }

  @Test(
    "a transport's own Request.timeout of 1 s ends six 0.5 s redirect hops at about 1 s",
    arguments: TransportKind.wire)
  func transportTimeout(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    Self.serveSlowHops(on: fixture.server)
    var request = Request(method: .get, url: fixture.server.url("/hop/0"))
    request.timeout = Self.limit
    let (error, elapsed) = await Self.timed { try await fixture.client.send(request) }
    #expect(error?.kind == .timedOut, "after \(elapsed): \(error?.debugDescription ?? "success")")
    #expect(elapsed >= .milliseconds(900))
    #expect(fixture.server.requestCount <= 3, "\(fixture.server.requestCount) hops asked for")
    #expect(error?.request?.url.path == "/hop/0", "the caller's request, not the hop's")
  }
}
