import Courier
import CourierTesting
import Foundation
import Testing

@testable import CourierCurl

/// `CurlTransport.connectionPool` over real loopback connections, and what `MetricsObserver`
/// records of it.
@Suite("CurlTransport's connection pool figures", .timeLimit(.minutes(5)))
struct ConnectionPoolTests {
  /// One event loop and one connection per host, so each figure has one right value.
  private static func transport() -> CurlTransport {
    var configuration = CurlTransport.Configuration.standard
    configuration.eventLoops = 1
    configuration.maximumConnectionsPerHost = 1
    return CurlTransport(configuration: configuration)
  }

  private typealias Figures = ConnectionPoolFigures

  /// Reads the figures until `condition` holds, for a state that has no event of its own (a
  /// request taking its place in the waiting line); bounded at 2 minutes.
  private static func figures(
    of transport: CurlTransport, when condition: (ConnectionPoolFigures) -> Bool
  ) async throws -> ConnectionPoolFigures? {
    let limit = ContinuousClock.now + .seconds(120)
    while ContinuousClock.now < limit {
      if let figures = transport.connectionPool, condition(figures) { return figures }
      try await Task.sleep(for: .milliseconds(2))
    }
    return transport.connectionPool
  }

  @Test("open, idle between requests, in use during one, waiting at the host's limit, closed")
  func lifecycle() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.setDispatcher { request in
      request.path.hasSuffix("hang") ? MockResponse(fault: .hang) : .text("ok")
    }
    let transport = Self.transport()
    defer { transport.shutdown() }
    #expect(transport.connectionPool == Figures(open: 0, idle: 0, inUse: 0, waiting: 0))

    _ = try await transport.send(Request(url: server.url("first")))
    #expect(transport.connectionPool == Figures(open: 1, idle: 1, inUse: 0, waiting: 0))
    _ = try await transport.send(Request(url: server.url("second")))
    #expect(transport.openedConnections == 1, "the kept connection was used again")
    #expect(transport.connectionPool == Figures(open: 1, idle: 1, inUse: 0, waiting: 0))

    let hanging = Task { try await transport.send(Request(url: server.url("hang"))) }
    for _ in 0..<3 { _ = try await server.takeRequest() }  // first, second, then hang
    #expect(transport.connectionPool == Figures(open: 1, idle: 0, inUse: 1, waiting: 0))

    let queued = Task { try await transport.send(Request(url: server.url("queued"))) }
    let waiting = try await Self.figures(of: transport) { $0.waiting == 1 }
    #expect(waiting == Figures(open: 1, idle: 0, inUse: 1, waiting: 1))

    hanging.cancel()
    _ = await hanging.result
    #expect(try await queued.value.status == 200)
    // The cancelled transfer's connection is closed; the queued one opened another.
    #expect(transport.connectionPool == Figures(open: 1, idle: 1, inUse: 0, waiting: 0))

    transport.shutdown()
    #expect(transport.connectionPool == Figures(open: 0, idle: 0, inUse: 0, waiting: 0))
  }

  @Test("a connection the server closes, a host name's resolver and a refused address leave none")
  func onlyConnectionsCount() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let transport = Self.transport()
    defer { transport.shutdown() }
    // `Connection: close`: libcurl closes the connection as the response ends.
    server.enqueue(.text("bye").addingHeader("Connection", "close"))
    _ = try await transport.send(Request(url: server.url("closing")))
    #expect(transport.connectionPool == Figures(open: 0, idle: 0, inUse: 0, waiting: 0))

    // By name: libcurl's resolver thread has a socket pair of its own, and `localhost` may
    // be tried on ::1 first, where nothing listens. Only the connection that answered stays.
    server.enqueue(.text("by name"))
    let byName = try #require(URL(string: "http://localhost:\(server.port)/name"))
    _ = try await transport.send(Request(url: byName))
    #expect(transport.connectionPool == Figures(open: 1, idle: 1, inUse: 0, waiting: 0))

    // A refused connection is closed at once.
    let refused = try RefusingPort()
    let nowhere = try #require(URL(string: "http://127.0.0.1:\(refused.port)/"))
    await #expect(throws: CourierError.self) { try await transport.send(Request(url: nowhere)) }
    #expect(transport.connectionPool == Figures(open: 1, idle: 1, inUse: 0, waiting: 0))
  }

  @Test("MetricsObserver records the figures as gauges named by transport; none without one")
  func metrics() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let transport = Self.transport()
    defer { transport.shutdown() }
    let sink = InMemoryMetricsSink()
    let observer = MetricsObserver(sink: sink, connectionPoolOf: transport)
    let client = Client(baseURL: server.baseURL, transport: transport, observers: [observer])
    server.enqueue(.text("ok"))
    _ = try await client.send(Request(url: server.url("one")))
    let curl = ["transport": "CurlTransport"]
    // Recorded when the request started (nothing open yet) and when it ended.
    #expect(sink.recorder("courier_pool_connections_open", curl) == [0, 1])
    #expect(sink.recorder("courier_pool_connections_idle", curl) == [0, 1])
    #expect(sink.recorder("courier_pool_connections_in_use", curl) == [0, 0])
    #expect(sink.recorder("courier_pool_requests_waiting", curl) == [0, 0])

    // Called from a timer of the service's, under a name of its own.
    let named = MetricsObserver(sink: sink, connectionPoolOf: transport, transportName: "api")
    named.recordConnectionPool()
    #expect(sink.recorder("courier_pool_connections_open", ["transport": "api"]) == [1])

    // A transport that does not know its pool records nothing; nor does an observer without
    // a transport.
    let other = InMemoryMetricsSink()
    MetricsObserver(sink: other, connectionPoolOf: StubTransport()).recordConnectionPool()
    MetricsObserver(sink: other).recordConnectionPool()
    #expect(other.series.isEmpty)
  }
}
