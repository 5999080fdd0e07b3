import Courier
import CourierTesting
import Foundation
import Testing

/// `Client.shutdown(gracePeriod:)` over each wire transport, then the transport's own
/// shutdown: 50 requests in flight, some answered within the grace period, some later, some
/// never, some streaming their bodies.
@Suite("Transport conformance: graceful shutdown", .timeLimit(.minutes(5)))
struct ShutdownConformanceTests {
  @Test(
    "URLSessionTransport: 50 in flight, 2 s grace: in time succeed, the rest fail with shutDown, new ones are refused, no socket or thread is left",
    .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd"), "reads /proc/self/fd"))
  func gracefulURLSession() async {
    // In a child process: other suites open and close sockets and threads meanwhile.
    let result = await withTaskExecutorPreference(OwnThreadExecutor.shared) {
      await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
        try await ShutdownConformanceTests.scenario(.urlSession)
      }
    }
    reportChildFailure(result)
  }

  @Test(
    "CurlTransport: 50 in flight, 2 s grace: in time succeed, the rest fail with shutDown, new ones are refused, no socket or thread is left",
    .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd"), "reads /proc/self/fd"))
  func gracefulCurl() async {
    let result = await withTaskExecutorPreference(OwnThreadExecutor.shared) {
      await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
        try await ShutdownConformanceTests.scenario(.curl)
      }
    }
    reportChildFailure(result)
  }

  /// What each group of requests asks for, and how many there are: 50 in all.
  static let groups: [(path: String, count: Int)] = [
    ("soon", 20),  // answered 1 s after arriving: within the grace period
    ("late", 12),  // answered after 60 s: cancelled
    ("never", 10),  // never answered: cancelled
    ("stream", 5),  // an 8 KB body over 1 s, read as a stream: within the grace period
    ("trickle", 3),  // a 1 MB body at 1 KB/s, read as a stream: cut off
  ]

  static func scenario(_ kind: TransportKind) async throws {
    let server = try MockServer()
    server.setDispatcher { request in
      let group = request.path.split(separator: "/").first.map(String.init) ?? ""
      switch group {
      case "soon": return MockResponse(body: Data("soon".utf8), delay: .seconds(1))
      case "late": return MockResponse(body: Data("late".utf8), delay: .seconds(60))
      case "stream":
        return MockResponse(body: Data(count: 8_000), fault: .throttle(bytesPerSecond: 8_000))
      case "trickle":
        return MockResponse(body: Data(count: 1_000_000), fault: .throttle(bytesPerSecond: 1_000))
      case "never": return MockResponse(fault: .hang)
      default: return .text("ok")
      }
    }
    // The first transport of a process opens descriptors and threads that stay for the
    // process (URLSession's, libcurl's, Dispatch's): one request through a transport of its
    // own first, so that the baseline holds them.
    let warmUp = kind.make()
    _ = try await Client(baseURL: server.baseURL, transport: warmUp.transport)
      .send(Endpoint<String>(.get, "warm-up"))
    warmUp.shutdown()
    let sockets = openSockets()
    let threads = threadCount()

    try await exercise(kind, on: server)
    // CurlTransport closed its connections and joined its threads in shutdown(); URLSession
    // lets go of its connections when its session is released (the transport was) and the
    // server has closed its ends. No event says when: look, for at most 10 s by the clock
    // (a count of short sleeps stretched to a minute on a loaded machine, and listing
    // /proc each time took the CPU the rest of the test run needed).
    server.shutdown()
    let giveUp = ContinuousClock.now + .seconds(10)
    while openSockets() > sockets || threadCount() > threads, ContinuousClock.now < giveUp {
      try await Task.sleep(for: .milliseconds(50))
    }
    #expect(openSockets() <= sockets, "\(kind): \(sockets) sockets before, \(openSockets()) after")
    #expect(threadCount() <= threads, "\(kind): \(threads) threads before, \(threadCount()) after")
  }

  /// The 50 requests, the client's shutdown and the transport's.
  static func exercise(_ kind: TransportKind, on server: MockServer) async throws {
    let underTest = kind.make(connections: 64)
    let client = Client(baseURL: server.baseURL, transport: underTest.transport, locale: "en")
    var tasks: [(group: String, task: Task<Int, any Error>)] = []
    for (group, count) in groups {
      for index in 0..<count {
        let path = "\(group)/\(index)"
        let task = Task {
          if group == "stream" || group == "trickle" {
            let streamed = try await client.stream(Endpoint<Void>(.get, path))
            var received = 0
            for try await piece in streamed.body { received += piece.count }
            return received
          }
          return try await client.send(Endpoint<Data>(.get, path)).count
        }
        tasks.append((group, task))
      }
    }
    let total = groups.reduce(0) { $0 + $1.count }
    // Every request reached the server.
    while server.requestCount < total + 1 { _ = try await server.takeRequest() }
    let started = ContinuousClock.now
    let shutdown = Task { await client.shutdown(gracePeriod: .seconds(2)) }
    while !client.isShuttingDown { await Task.yield() }

    // A new request fails at once and never reaches the server.
    let refused = await courierError { try await client.send(Endpoint<Data>(.get, "soon/new")) }
    #expect(refused?.kind == .shutDown)
    #expect(refused?.attempts == 0)
    #expect(ContinuousClock.now - started < .seconds(1))

    await shutdown.value
    let elapsed = ContinuousClock.now - started
    #expect(elapsed >= .seconds(2), "returned after \(elapsed)")
    #expect(elapsed < .seconds(5), "returned after \(elapsed)")
    #expect(client.inFlightCount == 0)
    #expect(server.requestCount == total + 1, "the refused request never reached the server")

    var outcomes: [String: [String]] = [:]
    for (group, task) in tasks {
      let outcome: String
      do {
        outcome = "\(try await task.value) bytes"
      } catch {
        outcome = (error as? CourierError)?.kind.name ?? "\(error)"
      }
      outcomes[group, default: []].append(outcome)
    }
    #expect(outcomes["soon"] == Array(repeating: "4 bytes", count: 20), "\(outcomes)")
    #expect(outcomes["stream"] == Array(repeating: "8000 bytes", count: 5), "\(outcomes)")
    for group in ["late", "never", "trickle"] {
      #expect(outcomes[group]?.allSatisfy { $0 == "shutDown" } == true, "\(group): \(outcomes)")
    }

    // Then the transport's own shutdown, through the protocol's requirement.
    client.transport.shutdown()
    #expect(underTest.isShutDown())
  }

  /// How many threads this process has.
  static func threadCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
  }
}
