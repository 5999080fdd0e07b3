import Courier
import CourierTesting
import Foundation
import Synchronization
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A token store for the wire tests: `old` until refreshed, then `fresh`.
final class WireTokens: CredentialProvider {
  private let state = Mutex((token: "old", refreshes: 0))
  var refreshes: Int { state.withLock { $0.refreshes } }
  func credential() async throws -> Credential? { Credential(bearer: state.withLock { $0.token }) }
  func refresh(rejected: Credential?) async throws -> Credential {
    state.withLock { $0 = (token: "fresh", refreshes: $0.refreshes + 1) }
    return Credential(bearer: "fresh")
  }
}

/// Client-side TCP connections of this process to `port` that are established, from
/// /proc/net/tcp and tcp6 (state 01; the remote port is the fourth field's suffix).
func establishedConnections(toPort port: Int) -> Int {
  let suffix = ":" + String(format: "%04X", port)
  var count = 0
  for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
    guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
    for line in text.split(separator: "\n").dropFirst() {
      let fields = line.split(separator: " ", omittingEmptySubsequences: true)
      if fields.count > 3, fields[2].hasSuffix(suffix), fields[3] == "01" { count += 1 }
    }
  }
  return count
}

@Suite("Standard middleware over URLSession and MockServer", .serialized, .timeLimit(.minutes(1)))
struct MiddlewareOverWireTests {
  @Test(
    "a hard timeout ends a hanging request within the limit + 100 ms and closes its connection",
    .enabled(if: FileManager.default.fileExists(atPath: "/proc/net/tcp"), "reads /proc/net/tcp"))
  func hardTimeout() async throws {
    // In a child process: other suites running in parallel block the two threads of this
    // machine's cooperative pool with synchronous socket reads, which delays any timer by
    // seconds and says nothing about the middleware.
    let result = await #expect(
      processExitsWith: .success, observing: [\.standardErrorContent]
    ) {
      try await hardTimeoutScenario()
    }
    // A crash of the child shows its backtrace here instead of only its signal.
    if let result, result.exitStatus != .exitCode(EXIT_SUCCESS) {
      Issue.record(
        "the child's standard error:\n\(String(decoding: result.standardErrorContent, as: UTF8.self))"
      )
    }
  }

  @Test("a sub-second Endpoint.timeout is not truncated to zero by URLSession on Linux")
  func subSecondTransportTimeout() async throws {
    let fixture = try WireFixture()
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(fault: .hang))
    let started = ContinuousClock.now
    let error = await courierError {
      try await fixture.client.send(Endpoint<Data>(.get, "hang").timeout(.milliseconds(500)))
    }
    #expect(error?.kind == .timedOut)
    // URLSession truncated 0.5 s to 0 and failed at once; rounded up it waits a second.
    #expect(ContinuousClock.now - started >= .milliseconds(500))
  }

  @Test("503 with Retry-After: 1, then 200: one retry, after at least a second")
  func retryAfterOverWire() async throws {
    let fixture = try WireFixture(middleware: [RetryMiddleware(budget: nil)])
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(status: 503).addingHeader("Retry-After", "1"))
    fixture.server.enqueue(.json(#"{"name":"Li","age":30}"#))
    let started = ContinuousClock.now
    let decoded = try await fixture.client.response(for: Endpoint<Profile>(.get, "me"))
    #expect(ContinuousClock.now - started >= .seconds(1))
    #expect(decoded.value == Profile(name: "Li", age: 30))
    #expect(decoded.response.attempts == 2)
    #expect(fixture.server.requestCount == 2)
  }

  @Test("401, then 200 after one refresh, with the new credential on the wire")
  func refreshOverWire() async throws {
    let tokens = WireTokens()
    let fixture = try WireFixture(middleware: [AuthMiddleware(provider: tokens)])
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(status: 401))
    fixture.server.enqueue(.json(#"{"name":"Li","age":30}"#))
    let profile = try await fixture.client.send(Endpoint<Profile>(.get, "me"))
    #expect(profile.age == 30)
    #expect(tokens.refreshes == 1)
    #expect(try await fixture.server.takeRequest().header("authorization") == "Bearer old")
    #expect(try await fixture.server.takeRequest().header("authorization") == "Bearer fresh")
  }

  @Test("headers, request id and basic logging reach the wire and the sink, redacted")
  func headersAndLogging() async throws {
    let sink = InMemoryLogSink()
    let fixture = try WireFixture(middleware: [
      HeadersMiddleware(), RequestIDMiddleware(requestIDHeader: true),
      LoggingMiddleware(level: .headers, sink: sink),
    ])
    defer { fixture.shutdown() }
    fixture.server.enqueue(.json(#"{"name":"Li","age":30}"#))
    _ = try await fixture.client.send(
      Endpoint<Profile>(.get, "me").query("token", "WIRE-SECRET").header(
        .authorization, "Bearer WIRE-SECRET"))
    let recorded = try await fixture.server.takeRequest()
    #expect(recorded.header("user-agent") == HeadersMiddleware.userAgent)
    let traceparent = try #require(recorded.header("traceparent"))
    let trace = try #require(TraceContext(traceparent: traceparent))
    #expect(recorded.header("x-request-id") == trace.traceID)
    #expect(sink.text.contains(trace.traceID))
    #expect(!sink.text.contains("WIRE-SECRET"))
  }
}

/// A 0.5 s attempt timeout against MockServer's `hang`, three times: the best must end within
/// the limit + 100 ms, every try within the limit + 1 s, and the sockets must be closed.
private func hardTimeoutScenario() async throws {
  let fixture = try WireFixture(
    middleware: [TimeoutMiddleware(attempt: .milliseconds(500), overall: nil)])
  defer { fixture.shutdown() }
  var times: [Duration] = []
  for _ in 0..<3 {
    fixture.server.enqueue(MockResponse(fault: .hang))
    let started = ContinuousClock.now
    let error = await courierError {
      try await fixture.client.send(Endpoint<Data>(.get, "hang"))
    }
    let elapsed = ContinuousClock.now - started
    times.append(elapsed)
    #expect(error?.kind == .timedOut)
    #expect(error?.debugDescription.contains("per-attempt timeout of 0.5 seconds") == true)
    #expect(elapsed >= .milliseconds(500))
    #expect(elapsed < .milliseconds(1500), "took \(elapsed)")
    _ = try await fixture.server.takeRequest()
  }
  #expect(try #require(times.min()) < .milliseconds(600), "took \(times)")
  // The cancelled attempts' sockets are closed by libcurl; there is no event for that, so
  // read the kernel's table until it shows no connection (bounded by the time limit).
  var open = establishedConnections(toPort: fixture.server.port)
  while open > 0 {
    try await Task.sleep(for: .milliseconds(10))
    open = establishedConnections(toPort: fixture.server.port)
  }
  #expect(open == 0)
}
