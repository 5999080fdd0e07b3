import CourierCore
import CourierTesting
import Foundation
import Synchronization
import Testing

/// Promises of the Middleware article (Sources/Courier/Courier.docc) and of the middleware's
/// doc comments that no other test held (see `Docs/Promises.md`).
@Suite("Promises: standard middleware", .timeLimit(.minutes(5)))
struct PromisesMiddlewareTests {
  // MARK: Retry

  @Test(
    "retry sends idempotent methods again (GET, HEAD, OPTIONS, PUT, DELETE, TRACE), not POST or PATCH",
    arguments: [
      ("GET", true), ("HEAD", true), ("OPTIONS", true), ("PUT", true), ("DELETE", true),
      ("TRACE", true), ("POST", false), ("PATCH", false),
    ])
  func idempotentMethods(method: String, retried: Bool) async throws {
    let stub = StubTransport([.status(503), .status(204)])
    // No backoff: the retry, if any, follows at once.
    let retry = RetryMiddleware(policy: RetryPolicy(baseDelay: .zero), budget: nil)
    let client = stubClient(stub, middleware: [retry])
    let error = await courierError {
      try await client.send(Endpoint<Void>(try HTTPMethod(method), "x"))
    }
    if retried {
      #expect(error == nil)
      #expect(stub.requests.count == 2)
    } else {
      #expect(error?.status == 503)
      #expect(stub.requests.count == 1)
    }
  }

  @Test("RetryMiddleware() defaults: the standard policy and a budget of 10 + 20 % per 10 s")
  func retryDefaults() {
    let retry = RetryMiddleware()
    #expect(retry.policy == .standard)
    #expect(retry.policy.maximumAttempts == 3)
    #expect(retry.policy.baseDelay == .milliseconds(500))
    #expect(retry.policy.multiplier == 2)
    #expect(retry.policy.maximumDelay == .seconds(30))
    #expect(retry.policy.maximumRetryAfter == .seconds(60))
    #expect(retry.policy.retryableStatuses == [408, 429, 500, 502, 503, 504])
    #expect(
      retry.policy.retryableKinds == [.timedOut, .cannotConnect, .connectionLost, .cannotFindHost])
    #expect(retry.budget != nil)
  }

  // MARK: Timeout

  @Test("Endpoint.deadline(_:) replaces the middleware's overall limit", .timeLimit(.minutes(5)))
  func endpointDeadline() async throws {
    let clock = TestClock()
    let stub = StubTransport(fallback: .never)
    let client = stubClient(
      stub, middleware: [TimeoutMiddleware(attempt: nil, overall: .seconds(60), clock: clock)])
    let task = Task { try await client.send(Endpoint<Void>(.get, "slow").deadline(.seconds(5))) }
    await clock.waitForSleepers(1)
    await stub.waitForRequests(1)
    clock.advance(by: .seconds(5) - .milliseconds(1))
    #expect(client.inFlightCount == 1)
    clock.advance(by: .milliseconds(1))
    let error = await courierError { try await task.linkedValue }
    #expect(error?.kind == .timedOut)
    #expect(error?.debugDescription.contains("overall deadline of 5") == true)
  }

  @Test("TimeoutMiddleware() defaults: 30 s per attempt, 60 s overall")
  func timeoutDefaults() {
    let timeout = TimeoutMiddleware()
    #expect(timeout.attemptTimeout == .seconds(30))
    #expect(timeout.overallTimeout == .seconds(60))
    #expect(timeout.description == "TimeoutMiddleware(attempt 30 s; overall 60 s)")
  }

  // MARK: Auth

  @Test(
    "the storm guard allows 3 refreshes per 60 s by default, and more once the window moves",
    .timeLimit(.minutes(5)))
  func stormGuardWindow() async throws {
    let clock = TestClock()
    let tokens = CountingTokens()
    let stub = StubTransport(fallback: .status(401))
    let client = stubClient(stub, middleware: [AuthMiddleware(provider: tokens, clock: clock)])
    for _ in 0..<4 {
      _ = await courierError { try await client.send(Endpoint<Data>(.get, "me")) }
    }
    #expect(tokens.refreshes == 3)
    clock.advance(by: .seconds(59))
    let guarded = await courierError { try await client.send(Endpoint<Data>(.get, "me")) }
    #expect(guarded?.kind == .authenticationFailed)
    #expect(tokens.refreshes == 3)
    clock.advance(by: .seconds(1))
    _ = await courierError { try await client.send(Endpoint<Data>(.get, "me")) }
    #expect(tokens.refreshes == 4, "the first refresh left the 60 s window")
  }

  @Test("a credential's description names its header, never its value")
  func credentialDescription() throws {
    let credential = Credential("sk_live_SECRET", header: try HTTPHeaders.Name("X-API-Key"))
    #expect(credential.description == "Credential(X-API-Key: ***)")
    #expect(Credential(bearer: "abc").header == .authorization)
    #expect(Credential(bearer: "abc").value == "Bearer abc")
  }

  // MARK: Logging

  @Test("LoggingMiddleware() defaults: basic, to standard error, standard redaction, 4,096 bytes")
  func loggingDefaults() {
    let logging = LoggingMiddleware()
    #expect(logging.level == .basic)
    #expect(logging.sink is StandardErrorLogSink)
    #expect(logging.redaction == .standard)
    #expect(logging.maximumBodyBytes == 4096)
    #expect(
      logging.description
        == "LoggingMiddleware(basic; sink StandardErrorLogSink; redaction: 6 headers, 11 query "
        + "parameters, 7 body keys; text bodies up to 4 KiB)")
  }

  @Test("Redaction.standard lists exactly the names the Middleware article gives")
  func standardRedactionNames() {
    let standard = Redaction.standard
    #expect(
      Set(standard.headers.map { $0.lowercased() })
        == [
          "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key",
          "x-auth-token",
        ])
    #expect(
      Set(standard.queryParameters.map { $0.lowercased() })
        == [
          "token", "access_token", "refresh_token", "api_key", "apikey", "key", "password",
          "secret", "signature", "sig", "code",
        ])
    #expect(
      Set(standard.bodyKeys.map { $0.lowercased() })
        == [
          "password", "token", "access_token", "refresh_token", "secret", "client_secret",
          "id_token",
        ])
    #expect(Redaction.marker == "***")
  }

  @Test("JSONLinesLogSink writes one JSON object a line, keys sorted, the event's fields first")
  func jsonLines() throws {
    let lines = Mutex<[String]>([])
    let sink = JSONLinesLogSink(metadata: ["service": "shop", "status": "the sink's"]) { line in
      lines.withLock { $0.append(line) }
    }
    #expect(sink.logLevel == .debug)
    sink.log(
      LogEvent(
        severity: .warning, message: "GET https://h.test/a → 503",
        metadata: ["status": "503", "response_body": "busy\nnow"],
        date: Date(timeIntervalSince1970: 0)))
    let written = lines.withLock { $0 }
    #expect(written.count == 1)
    let line = try #require(written.first)
    #expect(!line.contains("\n"))
    #expect(
      line
        == #"{"date":"1970-01-01T00:00:00Z","level":"warning","message":"GET https://h.test/a → 503","#
        + #""metadata":{"response_body":"busy\nnow","service":"shop","status":"503"}}"#)
  }

  @Test("StandardErrorLogSink writes one line an event, fields sorted, line breaks escaped")
  func standardErrorLine() {
    let event = LogEvent(
      severity: .info, message: "GET https://h.test/a → 200 (3 ms)",
      metadata: ["status": "200", "response_body": "a \"b\"\nc"],
      date: Date(timeIntervalSince1970: 0))
    #expect(
      StandardErrorLogSink.line(for: event, metadata: ["service": "shop", "status": "x"])
        == #"1970-01-01T00:00:00Z info courier: GET https://h.test/a → 200 (3 ms) "#
        + #"response_body="a \"b\"\nc" service=shop status=200"#)
  }
}
