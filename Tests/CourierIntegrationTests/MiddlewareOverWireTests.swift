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

@Suite("Standard middleware over URLSession and MockServer", .serialized, .timeLimit(.minutes(5)))
struct MiddlewareOverWireTests {
  @Test("a sub-second Endpoint.timeout is not truncated to zero by URLSession on Linux")
  func subSecondTransportTimeout() async throws {
    let fixture = try ChainFixture()
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
    let fixture = try ChainFixture(middleware: [RetryMiddleware(budget: nil)])
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
    let fixture = try ChainFixture(middleware: [AuthMiddleware(provider: tokens)])
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
    let fixture = try ChainFixture(middleware: [
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
