import Courier
import CourierTesting
import Foundation
import Synchronization
import Testing

@testable import CourierCurl

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `CurlTransport.connectionPool` over real loopback connections, and what `MetricsObserver`
/// records of it.
@Suite("CurlTransport's connection pool figures", .timeLimit(.minutes(5)))
struct ConnectionPoolTests {
  /// One event loop and one connection per host, so each figure has one right value.
  private static var configuration: CurlTransport.Configuration {
    var configuration = CurlTransport.Configuration.standard
    configuration.eventLoops = 1
    configuration.maximumConnectionsPerHost = 1
    return configuration
  }

  private typealias Figures = ConnectionPoolFigures

  /// Reads the figures until `condition` holds, for a state that has no event of its own (a
  /// request taking its place in the waiting line, the loop seeing a connection close);
  /// bounded at `bound`.
  private static func figures(
    of transport: CurlTransport, within bound: Duration = .seconds(120),
    when condition: (ConnectionPoolFigures) -> Bool
  ) async throws -> ConnectionPoolFigures? {
    let limit = ContinuousClock.now + bound
    while ContinuousClock.now < limit {
      if let figures = transport.connectionPool, condition(figures) { return figures }
      try await Task.sleep(for: .milliseconds(2))
    }
    return transport.connectionPool
  }

  @Test("open, idle between requests, in use during one, waiting at the host's limit, closed")
  func lifecycle() async throws {
    let fixture = try CurlFixture(Self.configuration)
    defer { fixture.shutdown() }
    let (server, transport) = (fixture.server, fixture.transport)
    server.setDispatcher { request in
      request.path.hasSuffix("hang") ? MockResponse(fault: .hang) : .text("ok")
    }
    #expect(transport.connectionPool == Figures(open: 0, idle: 0, inUse: 0, waiting: 0))

    _ = try await transport.send(Request(url: server.url("first")))
    #expect(transport.connectionPool == Figures(open: 1, idle: 1, inUse: 0, waiting: 0))
    _ = try await transport.send(Request(url: server.url("second")))
    #expect(transport.openedConnections == 1, "the kept connection was used again")
    #expect(transport.connectionPool == Figures(open: 1, idle: 1, inUse: 0, waiting: 0))

    let hanging = Task { try await transport.send(Request(url: server.url("hang"))) }
    for _ in 0..<3 { _ = try await server.takeRequest() }  // first, second, then hang
    // The server may read the request before the loop thread, back from libcurl, publishes
    // the connection in use.
    let inUse = try await Self.figures(of: transport) { $0.inUse == 1 }
    #expect(inUse == Figures(open: 1, idle: 0, inUse: 1, waiting: 0))

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
    let fixture = try CurlFixture(Self.configuration)
    defer { fixture.shutdown() }
    let (server, transport) = (fixture.server, fixture.transport)
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
    let fixture = try CurlFixture(Self.configuration)
    defer { fixture.shutdown() }
    let (server, transport) = (fixture.server, fixture.transport)
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

  @Test("a body that ends on the loop thread: an observer reading the pool there is no deadlock")
  func streamEndsOnLoopThread() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let size = 1024 * 1024
    server.enqueue(MockResponse(body: Data(count: size)))
    server.enqueue(.text("after"))
    let transport = CurlTransport(configuration: Self.configuration)
    let sink = InMemoryMetricsSink()
    let client = Client(
      baseURL: server.baseURL, transport: transport,
      observers: [MetricsObserver(sink: sink, connectionPoolOf: transport)])
    // A buffer far smaller than the body: the transfer pauses until the reader reads, so the
    // body ends on the loop thread, which runs the request's end (the observer's callbacks)
    // there.
    let reading = Task {
      let streamed = try await client.stream(Request(url: server.url("big")), bufferSize: 4096)
      return try await streamed.body.collect(upTo: 2 * size).count
    }
    guard let read = await Self.result(of: reading, within: .seconds(120)) else {
      // The loop thread waits for a lock it holds: shutting the transport down would wait
      // for that thread too, so it is left as it is.
      Issue.record("the streamed body did not end within 2 minutes: the event loop is stuck")
      return
    }
    defer { transport.shutdown() }
    #expect(try read.get() == size)
    #expect(try await transport.send(Request(url: server.url("after"))).status == 200)
    let curl = ["transport": "CurlTransport"]
    #expect(sink.recorder("courier_pool_connections_open", curl).count == 2)
  }

  @Test("an idle connection the server closes is no longer open once the loop has seen it")
  func serverClosesIdleConnection() async throws {
    let fixture = try CurlFixture(Self.configuration)
    defer { fixture.shutdown() }
    let (server, transport) = (fixture.server, fixture.transport)
    // The whole response, then the server's FIN: libcurl keeps the connection, and its end
    // arrives while it is idle.
    server.enqueue(MockResponse(body: Data("ok".utf8), fault: .closeAfterBodyBytes(2)))
    _ = try await transport.send(Request(url: server.url("once")))
    let kept = Figures(open: 1, idle: 1, inUse: 0, waiting: 0)
    let after = try await Self.figures(of: transport, within: .seconds(10)) { $0 != kept }
    #expect(after == Figures(open: 0, idle: 0, inUse: 0, waiting: 0))
  }

  @Test("read while 200 requests come and go on two loops: every reading adds up, none waits")
  func readWhileBusy() async throws {
    var configuration = CurlTransport.Configuration.standard
    configuration.eventLoops = 2
    configuration.maximumConnectionsPerHost = 4
    let fixture = try CurlFixture(configuration)
    defer { fixture.shutdown() }
    let (server, transport) = (fixture.server, fixture.transport)
    server.setDispatcher { _ in .text("ok") }
    let done = Atomic(false)
    let sending = Task {
      defer { done.store(true, ordering: .releasing) }
      return try await withThrowingTaskGroup(of: Int.self) { group in
        for index in 0..<200 {
          group.addTask { try await transport.send(Request(url: server.url("n/\(index)"))).status }
        }
        return try await group.reduce(0) { $0 + ($1 == 200 ? 1 : 0) }
      }
    }
    // Read on a thread of its own, every 100 µs, so that a loaded test run cannot starve
    // the readings the way it can a task's.
    let collected = Mutex<[ConnectionPoolFigures]>([])
    let (readerEnded, ended) = AsyncStream.makeStream(of: Void.self)
    let reader = Thread {
      repeat {
        if let figures = transport.connectionPool { collected.withLock { $0.append(figures) } }
        usleep(100)
      } while !done.load(ordering: .acquiring)
      ended.finish()
    }
    reader.start()
    #expect(try await sending.value == 200)
    for await _ in readerEnded {}
    let readings = collected.withLock { $0 }
    #expect(!readings.isEmpty)
    for figures in readings {
      #expect(
        figures.idle >= 0 && figures.inUse >= 0 && figures.idle + figures.inUse == figures.open)
      #expect(figures.open <= 4 && figures.waiting <= 200, "\(figures)")
    }
    let end = try #require(transport.connectionPool)
    #expect(end.inUse == 0 && end.waiting == 0 && end.open == end.idle && end.open >= 1, "\(end)")
  }

  @Test("a handle reset after a POST opens its next connection through both callbacks")
  func resetHandleOpensThroughCallbacks() async throws {
    let fixture = try CurlFixture(Self.configuration)
    defer { fixture.shutdown() }
    let (server, transport) = (fixture.server, fixture.transport)
    // The POST leaves its handle to be reset; its connection closes with it.
    server.enqueue(.text("posted").addingHeader("Connection", "close"))
    server.enqueue(.text("got"))
    var post = Request(url: server.url("post"))
    post.method = .post
    post.body = .data(Data("x".utf8))
    _ = try await transport.send(post)
    #expect(transport.connectionPool == Figures(open: 0, idle: 0, inUse: 0, waiting: 0))
    // The reset handle, configured again, opens the next connection.
    _ = try await transport.send(Request(url: server.url("get")))
    #expect(transport.openedConnections == 2)
    #expect(transport.connectionPool == Figures(open: 1, idle: 1, inUse: 0, waiting: 0))
    let ours = Self.descriptors(connectedToPort: server.port)
    #expect(ours.count == 1)
    for descriptor in ours {
      #expect(fcntl(descriptor, F_GETFD) & FD_CLOEXEC != 0, "socket \(descriptor) is inherited")
    }
  }

  /// `task`'s result, or `nil` when it has none within `limit` (the task is left running).
  private static func result<Value: Sendable>(
    of task: Task<Value, any Error>, within limit: Duration
  ) async -> Result<Value, any Error>? {
    let first = FirstResult<Result<Value, any Error>?>()
    return await withCheckedContinuation { continuation in
      first.set(continuation)
      Task { first.resume(with: await task.result) }
      Task {
        try? await Task.sleep(for: limit)
        first.resume(with: nil)
      }
    }
  }

  /// The descriptors of this process connected to `port` on the loopback.
  private static func descriptors(connectedToPort port: Int) -> [Int32] {
    ProcessProbe.descriptors().keys.filter { descriptor in
      var address = sockaddr_in()
      var length = socklen_t(MemoryLayout<sockaddr_in>.size)
      let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          getpeername(descriptor, $0, &length)
        }
      }
      return named == 0 && Int32(address.sin_family) == AF_INET
        && Int(UInt16(bigEndian: address.sin_port)) == port
    }
  }
}

/// Resumes a continuation once, with the first value given.
private final class FirstResult<Value: Sendable>: Sendable {
  private let continuation = Mutex<CheckedContinuation<Value, Never>?>(nil)

  func set(_ continuation: CheckedContinuation<Value, Never>) {
    self.continuation.withLock { $0 = continuation }
  }

  func resume(with value: Value) {
    continuation.withLock { $0.take() }?.resume(returning: value)
  }
}
