import CourierCore
import CourierTesting
import Foundation
import Testing

@Suite("LoggingMiddleware and redaction", .timeLimit(.minutes(5)))
struct LoggingMiddlewareTests {
  /// Every credential form the redaction must hide, each with a value found nowhere else.
  static let secrets = [
    "AUTHZ-SECRET-1", "PROXY-SECRET-2", "COOKIE-SECRET-3", "SETCOOKIE-SECRET-4",
    "APIKEY-HEADER-5", "AUTHTOKEN-HEADER-6", "QTOKEN-7", "QACCESS-8", "QREFRESH-9", "QAPIKEY-10",
    "QAPIKEY2-11", "QKEY-12", "QPASSWORD-13", "QSECRET-14", "QSIGNATURE-15", "QSIG-16",
    "QCODE-17", "BODYPASS-18", "BODYTOKEN-19", "BODYACCESS-20", "BODYREFRESH-21",
    "BODYSECRET-22", "BODYCLIENT-23", "BODYID-24", "FORMPASS-25", "FORMTOKEN-26",
    "USERINFO-27", "RESPTOKEN-28",
  ]

  /// A request carrying every credential form above.
  static func endpoints() -> [Endpoint<Data>] {
    let query = Endpoint<Data>(.post, "login")
      .query("token", "QTOKEN-7").query("access_token", "QACCESS-8")
      .query("refresh_token", "QREFRESH-9").query("api_key", "QAPIKEY-10")
      .query("apikey", "QAPIKEY2-11").query("key", "QKEY-12").query("password", "QPASSWORD-13")
      .query("secret", "QSECRET-14").query("signature", "QSIGNATURE-15").query("sig", "QSIG-16")
      .query("code", "QCODE-17").query("page", "2")
      .header(.authorization, "Bearer AUTHZ-SECRET-1")
      .header(.proxyAuthorization, "Basic PROXY-SECRET-2")
      .header(.cookie, "session=COOKIE-SECRET-3")
      .header("X-API-Key", "APIKEY-HEADER-5").header("x-auth-token", "AUTHTOKEN-HEADER-6")
    let json = #"""
      {"user":"li","password":"BODYPASS-18","nested":{"token":"BODYTOKEN-19",
      "deeper":[{"access_token":"BODYACCESS-20"},{"Refresh_Token":"BODYREFRESH-21"}]},
      "secret":{"kind":"BODYSECRET-22"},"client_secret":"BODYCLIENT-23","id_token":"BODYID-24"}
      """#
    return [
      query.body(Data(json.utf8), contentType: "application/json"),
      query.formBody([("user", "li"), ("password", "FORMPASS-25"), ("token", "FORMTOKEN-26")]),
      Endpoint<Data>(.get, "https://li:USERINFO-27@api.example.test/v1/me"),
    ]
  }

  static func stub() -> StubTransport {
    var headers = HTTPHeaders()
    try? headers.add(.setCookie, "session=SETCOOKIE-SECRET-4; Path=/")
    try? headers.add(.contentType, "application/json")
    return StubTransport(
      fallback: StubResponse(
        status: 200, headers: headers,
        body: Data(#"{"code":0,"data":{"access_token":"RESPTOKEN-28","name":"Li"}}"#.utf8)))
  }

  @Test(
    "no secret of any credential form reaches any sink at any level",
    arguments: [LoggingMiddleware.Level.basic, .headers, .body])
  func noSecretAnywhere(level: LoggingMiddleware.Level) async throws {
    let sink = InMemoryLogSink()
    let client = stubClient(
      Self.stub(), middleware: [LoggingMiddleware(level: level, sink: sink)])
    for endpoint in Self.endpoints() { _ = try await client.send(endpoint) }
    let text = sink.text
    #expect(!text.isEmpty)
    for secret in Self.secrets {
      #expect(!text.contains(secret), "\(secret) leaked at level \(level)")
    }
    // Names stay readable, and the marker does not tell a secret's length.
    #expect(text.contains("token=***"))
    #expect(text.contains("page=2"))
    if level >= .headers {
      #expect(text.contains("Authorization: ***"))
      #expect(text.contains("Set-Cookie: ***"))
    }
    if level == .body {
      #expect(text.contains(#"\"password\":\"***\""#) || text.contains(#""password":"***""#))
      #expect(text.contains("li"))
    }
  }

  @Test("basic logs one line per attempt with status, attempt, sizes, duration and request id")
  func basicFields() async throws {
    let sink = InMemoryLogSink()
    let client = stubClient(
      StubTransport(fallback: .json(#"{"ok":true}"#)),
      middleware: [RequestIDMiddleware(), LoggingMiddleware(level: .basic, sink: sink)])
    _ = try await client.send(Endpoint<Data>(.get, "users").query("q", "a b"))
    let events = sink.events
    #expect(events.count == 1)
    let event = try #require(events.first)
    #expect(event.severity == .info)
    #expect(event.metadata["method"] == "GET")
    #expect(event.metadata["url"] == "https://api.example.test/v1/users?q=a%20b")
    #expect(event.metadata["status"] == "200")
    #expect(event.metadata["attempt"] == "1")
    #expect(event.metadata["response_bytes"] == "11")
    #expect(event.metadata["duration_ms"] != nil)
    #expect(event.metadata["request_id"]?.count == 32)
    #expect(event.message.hasPrefix("GET https://api.example.test/v1/users?q=a%20b → 200"))
    #expect(!StandardErrorLogSink.line(for: event).contains("\n"))
  }

  @Test("failures log their kind as errors; 4xx and 5xx are warnings; none logs nothing")
  func severities() async throws {
    let sink = InMemoryLogSink()
    let stub = StubTransport([.status(503), .failure(.connectionLost)])
    let client = stubClient(stub, middleware: [LoggingMiddleware(level: .basic, sink: sink)])
    _ = await courierError { try await client.send(Endpoint<Void>(.get, "a")) }
    _ = await courierError { try await client.send(Endpoint<Void>(.get, "b")) }
    #expect(sink.events.map(\.severity) == [.warning, .error])
    #expect(sink.events.last?.metadata["error_kind"] == "connectionLost")

    let quiet = InMemoryLogSink()
    let silent = stubClient(
      StubTransport(fallback: .status(200)),
      middleware: [LoggingMiddleware(level: .none, sink: quiet)])
    try await silent.send(Endpoint<Void>(.get, "a"))
    #expect(quiet.events.isEmpty)
  }

  @Test("a sink's level filters events; binary, oversized and unreadable bodies are summarised")
  func filteringAndBodies() async throws {
    let sink = InMemoryLogSink(logLevel: .warning)
    let client = stubClient(
      StubTransport([.data(Data([0, 1, 2, 255])), .status(404)]),
      middleware: [LoggingMiddleware(level: .body, sink: sink)])
    _ = try await client.send(Endpoint<Data>(.get, "a"))
    _ = await courierError { try await client.send(Endpoint<Data>(.get, "b")) }
    #expect(sink.events.map(\.severity) == [.warning])

    let all = InMemoryLogSink()
    let small = LoggingMiddleware(level: .body, sink: all, maximumBodyBytes: 8)
    let bodies = stubClient(
      StubTransport([
        .data(Data([0, 1, 2, 255])), .json("[\"" + String(repeating: "x", count: 96) + "\"]"),
        .text("Service unavailable"),
      ]),
      middleware: [small])
    for path in ["a", "b", "c"] { _ = try await bodies.send(Endpoint<Data>(.get, path)) }
    let responses = all.events.compactMap { $0.metadata["response_body"] }
    #expect(
      responses == [
        "<4 bytes binary>", #"["xxxxxx… (100 bytes)"#,
        "<19 bytes text/plain, not logged: not JSON, a form or multipart>",
      ])
  }

  @Test("redaction lists take additions and opt-outs, case-insensitively")
  func customRedaction() throws {
    var redaction = Redaction.standard
    redaction.queryParameters.remove("code")
    redaction.queryParameters.insert("PIN")
    let url = try #require(URL(string: "https://h.test/x?code=42&pin=1234&Token=abc#frag"))
    #expect(redaction.url(url) == "https://h.test/x?code=42&pin=***&Token=***#frag")
    #expect(Redaction.none.url(url) == url.absoluteString)
    #expect(
      Redaction.standard.body(#"{"a":{"PassWord" : "x"},"b":"password"}"#, contentType: nil)
        == #"{"a":{"PassWord" : "***"},"b":"password"}"#)
    #expect(
      Redaction.standard.body(#"{"token":"abc", "truncat"#, contentType: "application/json")
        == #"{"token":"***", "truncat"#)
  }
}

/// The basic line's timings (``LoggingMiddleware/timingsText(_:)``).
@Suite("LoggingMiddleware's timings")
struct LoggingTimingsTests {
  /// Sets the timings on every response, as a transport would.
  struct Timed: Middleware {
    let timings: Response.Timings
    nonisolated(nonsending) func intercept(
      _ request: Request, next: Next
    ) async throws
      -> Response
    {
      var response = try await next(request)
      response.timings = timings
      return response
    }
  }

  static let fresh = Response.Timings(
    nameLookup: .microseconds(210), connect: .microseconds(420), tlsHandshake: .microseconds(3_100),
    requestSent: .microseconds(3_200), firstByte: .microseconds(4_960),
    bodyComplete: .microseconds(6_249), connectionReused: false, remoteAddress: "127.0.0.1:443",
    httpVersion: "HTTP/1.1")

  @Test("only the fields present, in phase order; a reused connection says so instead")
  func text() {
    #expect(
      LoggingMiddleware.timingsText(Self.fresh)
        == "dns 0.2ms connect 0.4ms tls 3.1ms ttfb 5.0ms total 6.2ms HTTP/1.1")
    let reused = Response.Timings(
      nameLookup: .zero, connect: .zero, requestSent: .microseconds(40),
      firstByte: .milliseconds(2), bodyComplete: .microseconds(2_460), connectionReused: true,
      httpVersion: "HTTP/2")
    #expect(LoggingMiddleware.timingsText(reused) == "ttfb 2.0ms total 2.5ms reused HTTP/2")
    #expect(
      LoggingMiddleware.timingsText(Response.Timings(firstByte: .microseconds(950)))
        == "ttfb 1.0ms")
    #expect(LoggingMiddleware.timingsText(Response.Timings(total: .seconds(1))) == nil)
    #expect(LoggingMiddleware.shortMilliseconds(.seconds(12)) == "12000.0ms")
    #expect(LoggingMiddleware.shortMilliseconds(.seconds(Int64.max)).hasSuffix("ms"))
  }

  @Test("basic puts them on the line and in `timings`; headers adds the remote address")
  func line() async throws {
    for level in [LoggingMiddleware.Level.basic, .headers] {
      let sink = InMemoryLogSink()
      let client = Client(
        baseURL: URL(string: "https://api.example.test/"),
        transport: StubTransport(fallback: .status(200)),
        middleware: [LoggingMiddleware(level: level, sink: sink), Timed(timings: Self.fresh)])
      _ = try await client.send(
        Request(url: try #require(URL(string: "https://api.example.test/a"))))
      let event = try #require(sink.events.last)
      let text = "dns 0.2ms connect 0.4ms tls 3.1ms ttfb 5.0ms total 6.2ms HTTP/1.1"
      #expect(event.message.hasSuffix(" ms) " + text), "\(event.message)")
      #expect(event.metadata["timings"] == text)
      #expect(event.metadata["remote_address"] == (level >= .headers ? "127.0.0.1:443" : nil))
    }
  }

  @Test("a failure logs the phases its attempt reached")
  func failure() async throws {
    var error = CourierError(kind: .timedOut, debugMessage: "silent server")
    error.timings = Response.Timings(
      nameLookup: .microseconds(15), connect: .microseconds(300), requestSent: .microseconds(320),
      connectionReused: false)
    let sink = InMemoryLogSink()
    let client = Client(
      baseURL: URL(string: "https://api.example.test/"),
      transport: StubTransport(fallback: .failure(error)),
      middleware: [LoggingMiddleware(level: .basic, sink: sink)])
    _ = await courierError {
      try await client.send(Request(url: try #require(URL(string: "https://api.example.test/a"))))
    }
    let event = try #require(sink.events.last)
    #expect(event.message.hasSuffix(" ms) dns 0.0ms connect 0.3ms"), "\(event.message)")
  }
}
