import Courier
import CourierTesting
import Foundation
import Synchronization
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Writes every event as a short line, in order, for tests of what a client reports.
final class RecordingObserver: ClientObserver {
  private let lines = Mutex<[String]>([])
  private let ids = Mutex<Set<UInt64>>([])

  /// The events so far.
  var events: [String] { lines.withLock { $0 } }
  /// The distinct request ids the events named.
  var requestIDs: Set<UInt64> { ids.withLock { $0 } }

  private func note(_ request: ObservedRequest, _ line: String) {
    ids.withLock { _ = $0.insert(request.id) }
    lines.withLock { $0.append(line) }
  }

  private static func describe(_ result: Result<Response, CourierError>) -> String {
    switch result {
    case .success(let response): String(response.status)
    case .failure(let error): error.kind.name
    }
  }

  func requestStarted(_ request: ObservedRequest) { note(request, "started") }
  func attemptStarted(_ request: ObservedRequest, attempt: Int, request sent: Request) {
    note(request, "attempt \(attempt)")
  }
  func attemptEnded(
    _ request: ObservedRequest, attempt: Int, result: Result<Response, CourierError>
  ) {
    note(request, "attempt \(attempt) ended \(Self.describe(result))")
  }
  func retryScheduled(
    _ request: ObservedRequest, attempt: Int, delay: Duration, reason: CourierError.Kind,
    status: Int?
  ) {
    note(request, "retry after \(attempt): \(reason.name) \(status.map(String.init) ?? "-")")
  }
  func authRefreshed(_ request: ObservedRequest, succeeded: Bool, duration: Duration) {
    note(request, "refreshed \(succeeded)")
  }
  func responseHead(_ request: ObservedRequest, response: Response) {
    note(request, "head \(response.status)")
  }
  func bodyFinished(_ request: ObservedRequest, bytes: Int, duration: Duration, completed: Bool) {
    note(request, "body \(bytes) \(completed)")
  }
  func requestFailed(_ request: ObservedRequest, error: CourierError) {
    note(request, "failed \(error.kind.name)")
  }
  func requestEnded(
    _ request: ObservedRequest, result: Result<Response, CourierError>, total: Duration
  ) {
    note(request, "ended \(Self.describe(result))")
  }
}

/// A token store: `old` until refreshed, then `fresh`.
final class ObservedTokens: CredentialProvider {
  private let token = Mutex("old")
  func credential() async throws -> Credential? { Credential(bearer: token.withLock { $0 }) }
  func refresh(rejected: Credential?) async throws -> Credential {
    token.withLock { $0 = "fresh" }
    return Credential(bearer: "fresh")
  }
}

/// Answers by path: `/ok`, `/user/…` 200; `/flaky` 503 the first time; `/secure` 401 unless
/// the bearer is `fresh`; `/big` 100,000 bytes; `/hang` and `/slow` never.
func observabilityServer() throws -> MockServer {
  let server = try MockServer()
  let flaky = Mutex(0)
  server.setDispatcher { request in
    switch request.path {
    case "/flaky":
      let seen = flaky.withLock { count -> Int in
        count += 1
        return count
      }
      return seen == 1 ? MockResponse(status: 503) : .json(#"{"ok":true}"#)
    case "/secure":
      return request.header("authorization") == "Bearer fresh"
        ? .json(#"{"ok":true}"#) : MockResponse(status: 401)
    case "/hang", "/slow": return MockResponse(fault: .hang)
    case "/big": return MockResponse(body: Data(repeating: 7, count: 100_000))
    default: return .json(#"{"ok":true}"#)
    }
  }
  return server
}

/// A client with auth, request id, fast retries and a timeout over `CurlTransport`.
func observedClient(
  _ server: MockServer, observers: [any ClientObserver] = [], tracer: (any RequestTracer)? = nil
) -> Client {
  Client.standard(
    baseURL: server.baseURL, transport: CurlTransport(), observers: observers, tracer: tracer
  ) {
    $0.auth = AuthMiddleware(provider: ObservedTokens())
    $0.retry = RetryMiddleware(budget: nil, jitter: { _ in .zero })
    $0.reachability = nil
  }
}

@Suite("Observers, metrics and spans over MockServer", .serialized, .timeLimit(.minutes(5)))
struct ObservabilityTests {
  @Test("a success reports start, one attempt, head, body and end, in order")
  func successOrder() async throws {
    let server = try observabilityServer()
    defer { server.shutdown() }
    let observer = RecordingObserver()
    let client = observedClient(server, observers: [observer])
    _ = try await client.send(Endpoint<Data>(.get, "ok"))
    #expect(
      observer.events == [
        "started", "attempt 1", "attempt 1 ended 200", "head 200", "body 11 true", "ended 200",
      ])
    #expect(observer.requestIDs.count == 1)
  }

  @Test("503 then 200: the retry between the attempts")
  func retryOrder() async throws {
    let server = try observabilityServer()
    defer { server.shutdown() }
    let observer = RecordingObserver()
    let client = observedClient(server, observers: [observer])
    _ = try await client.send(Endpoint<Data>(.get, "flaky"))
    #expect(
      observer.events == [
        "started", "attempt 1", "attempt 1 ended 503", "retry after 1: httpStatus 503",
        "attempt 2", "attempt 2 ended 200", "head 200", "body 11 true", "ended 200",
      ])
  }

  @Test("401, one refresh, then 200")
  func authOrder() async throws {
    let server = try observabilityServer()
    defer { server.shutdown() }
    let observer = RecordingObserver()
    let client = observedClient(server, observers: [observer])
    _ = try await client.send(Endpoint<Data>(.get, "secure"))
    #expect(
      observer.events == [
        "started", "attempt 1", "attempt 1 ended 401", "refreshed true", "attempt 2",
        "attempt 2 ended 200", "head 200", "body 11 true", "ended 200",
      ])
  }

  @Test("a timeout fails the attempt and the request")
  func timeoutOrder() async throws {
    let server = try observabilityServer()
    defer { server.shutdown() }
    let observer = RecordingObserver()
    let client = observedClient(server, observers: [observer])
    // POST is not retried: one attempt.
    let error = await courierError {
      try await client.send(Endpoint<Data>(.post, "slow").timeout(.milliseconds(200)))
    }
    #expect(error?.kind == .timedOut)
    #expect(
      observer.events == [
        "started", "attempt 1", "attempt 1 ended timedOut", "failed timedOut", "ended timedOut",
      ])
  }

  @Test("a cancelled request fails as cancelled")
  func cancelOrder() async throws {
    let server = try observabilityServer()
    defer { server.shutdown() }
    let observer = RecordingObserver()
    let client = observedClient(server, observers: [observer])
    let task = Task { try await client.send(Endpoint<Data>(.get, "hang")) }
    _ = try await server.takeRequest()
    task.cancel()
    let error = await courierError { try await task.value }
    #expect(error?.kind == .cancelled)
    #expect(
      observer.events == [
        "started", "attempt 1", "attempt 1 ended cancelled", "failed cancelled",
        "ended cancelled",
      ])
  }

  @Test("a request cancelled before it starts is reported as started and failed")
  func cancelledBeforeStart() async throws {
    let server = try observabilityServer()
    defer { server.shutdown() }
    let observer = RecordingObserver()
    let client = observedClient(server, observers: [observer])
    let task = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return try await client.send(Endpoint<Data>(.get, "ok"))
    }
    let error = await courierError { try await task.value }
    #expect(error?.kind == .cancelled)
    #expect(observer.events == ["started", "failed cancelled", "ended cancelled"])
    #expect(server.requestCount == 0)
  }

  @Test("a streamed body finishes, and its request ends, when the stream ends")
  func streamedOrder() async throws {
    let server = try observabilityServer()
    defer { server.shutdown() }
    let observer = RecordingObserver()
    let sink = InMemoryMetricsSink()
    let client = observedClient(server, observers: [observer, MetricsObserver(sink: sink)])
    // A buffer far smaller than the body: the transfer cannot end before the reader reads.
    let streamed = try await client.stream(Endpoint<Void>(.get, "big"), bufferSize: 1_024)
    #expect(observer.events == ["started", "attempt 1", "attempt 1 ended 200", "head 200"])
    var bytes = 0
    for try await chunk in streamed.body { bytes += chunk.count }
    #expect(bytes == 100_000)
    // The end is reported where the stream ends, which may be just after the reader's last
    // chunk.
    while !observer.events.contains("ended 200") { await Task.yield() }
    #expect(Array(observer.events.suffix(2)) == ["body 100000 true", "ended 200"])
    let host = "127.0.0.1:\(server.port)"
    #expect(
      sink.counter("courier_response_body_bytes_total", ["method": "GET", "host": host])
        == 100_000)
    #expect(sink.gauge("courier_requests_in_flight", ["method": "GET", "host": host]) == 0)
  }

  @Test("a scripted mix gives exact counters, and no label holds a path, id or query")
  func scriptedMixCounters() async throws {
    let server = try observabilityServer()
    defer { server.shutdown() }
    let sink = InMemoryMetricsSink()
    let client = observedClient(server, observers: [MetricsObserver(sink: sink)])
    let host = "127.0.0.1:\(server.port)"
    _ = try await client.send(Endpoint<Data>(.get, "ok"))
    _ = try await client.send(Endpoint<Data>(.get, "flaky"))
    _ = try await client.send(Endpoint<Data>(.get, "secure"))
    _ = await courierError {
      try await client.send(Endpoint<Data>(.post, "slow").timeout(.milliseconds(200)))
    }
    let task = Task { try await client.send(Endpoint<Data>(.get, "hang")) }
    // Six requests reached the server so far (a retry and an auth resend among them).
    while server.requestCount < 7 { await Task.yield() }
    task.cancel()
    _ = await courierError { try await task.value }
    _ = try await client.send(
      Endpoint<Data>(.get, "user/{id}").parameter("id", "4242").query("token", "secret"))

    func dims(_ method: String, _ extra: [String: String] = [:]) -> [String: String] {
      ["method": method, "host": host].merging(extra) { _, new in new }
    }
    let requests = "courier_requests_total"
    #expect(sink.counter(requests, dims("GET", ["outcome": "2xx"])) == 4)
    #expect(sink.counter(requests, dims("POST", ["outcome": "timedOut"])) == 1)
    #expect(sink.counter(requests, dims("GET", ["outcome": "cancelled"])) == 1)
    #expect(sink.counterTotal(requests) == 6)
    let attempts = "courier_attempts_total"
    #expect(sink.counter(attempts, dims("GET", ["outcome": "2xx"])) == 4)
    #expect(sink.counter(attempts, dims("GET", ["outcome": "5xx"])) == 1)
    #expect(sink.counter(attempts, dims("GET", ["outcome": "4xx"])) == 1)
    #expect(sink.counter(attempts, dims("POST", ["outcome": "timedOut"])) == 1)
    #expect(sink.counter(attempts, dims("GET", ["outcome": "cancelled"])) == 1)
    #expect(sink.counterTotal(attempts) == 8)
    #expect(sink.counter("courier_retries_total", dims("GET", ["reason": "5xx"])) == 1)
    #expect(sink.counterTotal("courier_retries_total") == 1)
    #expect(
      sink.counter("courier_auth_refreshes_total", dims("GET", ["outcome": "succeeded"])) == 1)
    #expect(sink.counterTotal("courier_auth_refreshes_total") == 1)
    #expect(sink.gauge("courier_requests_in_flight", dims("GET")) == 0)
    #expect(sink.gauge("courier_requests_in_flight", dims("POST")) == 0)
    // Four bodies of 11 bytes; a 503 or 401 body is an attempt's, not the request's.
    #expect(sink.counter("courier_response_body_bytes_total", dims("GET")) == 44)
    #expect(sink.timer("courier_request_duration", dims("GET", ["outcome": "2xx"])).count == 4)
    #expect(
      sink.timer("courier_request_duration", dims("POST", ["outcome": "timedOut"])).first
        ?? 0 >= 200_000_000)

    let labels = Set(sink.series.flatMap { $0.dimensions.keys })
    #expect(labels.isSubset(of: ["method", "host", "outcome", "reason"]))
    for series in sink.series {
      for value in series.dimensions.values {
        #expect(!value.contains("/") && !value.contains("?") && !value.contains("="))
        #expect(!value.contains("user") && !value.contains("token") && !value.contains("secret"))
        #expect(value != "4242", "\(series)")
      }
    }
  }

  @Test("one request span, one child span per attempt, traceparent from the attempt span")
  func spans() async throws {
    let server = try observabilityServer()
    defer { server.shutdown() }
    let tracer = InMemoryTracer()
    let caller = TraceContext.random()
    // The request id middleware sends a traceparent of its own too: the tracer's wins.
    let client = Client(
      baseURL: server.baseURL, transport: CurlTransport(),
      middleware: [
        RequestIDMiddleware(sendsTraceparent: true),
        RetryMiddleware(budget: nil, jitter: { _ in .zero }),
      ],
      tracer: tracer)
    try await TraceContext.$current.withValue(caller) {
      _ = try await client.send(
        Endpoint<Data>(.get, "flaky").query("token", "secret").query("page", "2"))
    }
    let spans = tracer.spans
    #expect(spans.count == 3)
    let request = try #require(spans.first)
    #expect(request.name == "GET")
    #expect(request.kind == .client)
    #expect(request.parent == caller)
    #expect(request.context.traceID == caller.traceID)
    let attempts = tracer.children(of: request)
    #expect(attempts.map(\.name) == ["GET attempt", "GET attempt"])
    #expect(spans.allSatisfy { $0.isEnded })

    let port = server.port
    let url = "http://127.0.0.1:\(port)/flaky?token=***&page=2"
    #expect(request.attributes["http.request.method"] == .string("GET"))
    #expect(request.attributes["server.address"] == .string("127.0.0.1"))
    #expect(request.attributes["server.port"] == .int(port))
    #expect(request.attributes["url.full"] == .string(url))
    #expect(request.attributes["http.response.status_code"] == .int(200))
    #expect(request.attributes["error.type"] == nil)
    #expect(attempts[0].attributes["http.response.status_code"] == .int(503))
    #expect(attempts[0].attributes["error.type"] == .string("503"))
    #expect(attempts[0].attributes["http.request.resend_count"] == nil)
    #expect(attempts[1].attributes["http.request.resend_count"] == .int(1))
    #expect(attempts[1].attributes["url.full"] == .string(url))
    #expect(!spans.contains { "\($0.attributes)".contains("secret") })

    for attempt in attempts {
      let recorded = try await server.takeRequest()
      #expect(recorded.headers.filter { $0.name.lowercased() == "traceparent" }.count == 1)
      let sent = try #require(recorded.header("traceparent").flatMap(TraceContext.init))
      #expect(sent.traceID == caller.traceID)
      #expect(sent.parentID == attempt.context.parentID)
    }
  }

  @Test("a failed request's spans carry error.type and the error")
  func failedSpans() async throws {
    let server = try observabilityServer()
    defer { server.shutdown() }
    let tracer = InMemoryTracer()
    let client = observedClient(server, tracer: tracer)
    _ = await courierError {
      try await client.send(Endpoint<Data>(.post, "slow").timeout(.milliseconds(100)))
    }
    let request = try #require(tracer.spans.first)
    #expect(request.parent == nil)
    #expect(request.attributes["error.type"] == .string("timedOut"))
    #expect(request.status == .error("timedOut"))
    #expect(request.errors.map(\.kind) == [.timedOut])
    #expect(tracer.children(of: request).count == 1)
  }
}
