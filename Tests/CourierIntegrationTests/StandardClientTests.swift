import Courier
import CourierTesting
import Foundation
import Synchronization
import Testing

/// Issue #8: `Client.standard` composes the standard middleware in Docs/Design.md's order.
@Suite("Client.standard", .timeLimit(.minutes(5)))
struct StandardClientTests {
  /// The type names of a client's chain, in order, from its description.
  static func names(_ client: Client) -> [String] {
    client.chainDescription.split(separator: "\n").map { line in
      let text = line.drop { $0 != " " }.dropFirst()
      return String(text.prefix { $0 != "(" })
    }
  }

  /// Sends through `client` to `server`, which answers with a gzip body: it must arrive
  /// decoded, once, without its `Content-Encoding`.
  static func expectGzipDecodedOnce(_ client: Client, server: MockServer) async throws {
    let json = Data(#"{"name":"Li"}"#.utf8)
    server.enqueue(
      MockResponse(status: 200, body: try GzipCompressor.compress(json, format: .gzip))
        .addingHeader("Content-Encoding", "gzip"))
    let response = try await client.send(Request(url: server.url("/me")))
    #expect(response.body == json)
    #expect(response.headers[.contentEncoding] == nil)
  }

  @Test("the default chain: headers, request id, retry, reachability, timeout, logging, gzip")
  func defaultOrder() {
    let client = Client.standard(transport: StubTransport())
    var expected = [
      "HeadersMiddleware", "RequestIDMiddleware", "RetryMiddleware", "ReachabilityMiddleware",
      // The response checks just outside gzip, so they read the decoded body.
      "TimeoutMiddleware", "LoggingMiddleware", "ResponseValidation", "GzipMiddleware",
      "StubTransport",
    ]
    if SharedPathMonitor.system == nil { expected.removeAll { $0 == "ReachabilityMiddleware" } }
    #expect(Self.names(client) == expected)
    #expect(client.chainDescription.contains("LoggingMiddleware(none;"))
    #expect(
      client.chainDescription.contains(
        "ResponseValidation(status and envelope checks of the response pipeline)\n"
          + "\(expected.count - 1). GzipMiddleware("))
    // The preset places the checks itself, in the same place whatever gzip does; without
    // gzip they are innermost.
    let plain = Client.standard(transport: StubTransport()) {
      $0.gzip = GzipMiddleware(responseDecompression: .disabled)
    }
    #expect(
      Self.names(plain).suffix(3) == ["ResponseValidation", "GzipMiddleware", "StubTransport"])
    let withoutGzip = Client.standard(transport: StubTransport()) { $0.gzip = nil }
    #expect(Self.names(withoutGzip).suffix(2) == ["ResponseValidation", "StubTransport"])
    #expect(client.chainDescription.contains("TimeoutMiddleware(attempt 30 s; overall 60 s)"))
  }

  @Test("the preset's timeout is Courier's timer, and the transport gets the limit itself")
  func timeoutLimit() async throws {
    let stub = StubTransport(fallback: .status(204))
    let client = Client.standard(transport: stub)
    #expect(client.chainDescription.contains("TimeoutMiddleware(attempt 30 s; overall 60 s)\n"))
    _ = try await client.send(Request(url: URL(string: "http://127.0.0.1:1/a")!))
    #expect(stub.requests.first?.timeout == .seconds(30), "the limit, no backstop")
  }

  @Test("members can be replaced or removed, and your middleware goes where you say")
  func configure() throws {
    struct Signing: Middleware, CustomStringConvertible {
      var description: String { "Signing" }
      func intercept(_ request: Request, next: Next) async throws -> Response {
        try await next(request)
      }
    }
    struct Metrics: Middleware, CustomStringConvertible {
      var description: String { "Metrics" }
      func intercept(_ request: Request, next: Next) async throws -> Response {
        try await next(request)
      }
    }
    let client = Client.standard(transport: StubTransport()) {
      $0.auth = AuthMiddleware(provider: WireTokens())
      $0.reachability = nil
      $0.gzip = nil
      $0.timeout = TimeoutMiddleware(attempt: .seconds(5), overall: nil)
      $0.logging?.level = .basic
      $0.perRequest = [Metrics()]
      $0.perAttempt = [Signing()]
    }
    #expect(
      Self.names(client) == [
        "HeadersMiddleware", "AuthMiddleware", "RequestIDMiddleware", "Metrics",
        "RetryMiddleware", "TimeoutMiddleware", "Signing", "LoggingMiddleware",
        "ResponseValidation", "StubTransport",
      ])
    #expect(client.chainDescription.contains("TimeoutMiddleware(attempt 5 s; overall none)"))
    #expect(client.chainDescription.contains("LoggingMiddleware(basic;"))
  }

  @Test("a middleware of yours that decodes response bodies has the checks just outside it")
  func checksOutsideYourDecoder() async throws {
    /// Answers are sent reversed; this middleware turns them back, as a decryption would.
    struct Reversing: Middleware, CustomStringConvertible {
      var description: String { "Reversing" }
      var decodesResponseBodies: Bool { true }
      func intercept(_ request: Request, next: Next) async throws -> Response {
        var response = try await next(request)
        response.body = Data(response.body.reversed())
        return response
      }
    }
    struct Named: Decodable, Equatable { let name: String }
    let stub = StubTransport()
    let client = Client.standard(
      baseURL: URL(string: "http://stub.test/"), transport: stub, pipeline: .envelope(.codeZero)
    ) {
      $0.retry = nil
      $0.perAttempt = [Reversing()]
    }
    #expect(
      Self.names(client).drop { $0 != "TimeoutMiddleware" } == [
        "TimeoutMiddleware", "ResponseValidation", "Reversing", "LoggingMiddleware",
        "GzipMiddleware", "StubTransport",
      ])
    let envelope = #"{"code":0,"data":{"name":"Li"}}"#
    stub.enqueue(.json(String(envelope.reversed())))
    #expect(try await client.send(Endpoint<Named>(.get, "me")) == Named(name: "Li"))
    // A failing envelope is still a thrown business error to everything above the checks.
    stub.enqueue(.json(String(#"{"code":7,"message":"no"}"#.reversed())))
    let error = await #expect(throws: CourierError.self) {
      _ = try await client.send(Endpoint<Named>(.get, "me"))
    }
    #expect(error?.kind == .business)
  }

  @Test("a ResponseValidation you list is the only one: the checks run where you put them")
  func yourOwnChecks() async throws {
    /// Records the status of each response it sees returned (not thrown) from below.
    final class Seer: Middleware, CustomStringConvertible {
      let seen = Mutex<[Int]>([])
      var description: String { "Seer" }
      func intercept(_ request: Request, next: Next) async throws -> Response {
        let response = try await next(request)
        seen.withLock { $0.append(response.status) }
        return response
      }
    }
    let seer = Seer()
    let stub = StubTransport()
    let client = Client.standard(baseURL: URL(string: "http://stub.test/"), transport: stub) {
      $0.reachability = nil
      $0.retry = nil
      $0.perRequest = [ResponseValidation()]
      $0.perAttempt = [seer]
    }
    #expect(
      Self.names(client) == [
        "HeadersMiddleware", "RequestIDMiddleware", "ResponseValidation", "TimeoutMiddleware",
        "Seer", "LoggingMiddleware", "GzipMiddleware", "StubTransport",
      ])
    // Below your checks a 503 is a response; above them, the error.
    stub.enqueue(.status(503))
    let error = await #expect(throws: CourierError.self) {
      try await client.send(Endpoint<Void>(.get, "busy"))
    }
    #expect(error?.kind == .httpStatus)
    #expect(seer.seen.withLock { $0 } == [503])
  }

  @Test("Accept-Encoding: gzip's over every transport; a body URLSession decoded stays decoded")
  func acceptEncoding() async throws {
    let stub = StubTransport()
    stub.enqueue(.json("{}"))
    _ = try await Client.standard(baseURL: URL(string: "http://stub.test/"), transport: stub)
      .send(Request(url: try #require(URL(string: "http://stub.test/a"))))
    #expect(stub.requests.last?.headers[.acceptEncoding] == GzipMiddleware.acceptEncoding)

    // URLSession decodes what it is sent by itself: gzip's value goes out, and the body is
    // decoded once.
    let server = try MockServer()
    defer { server.shutdown() }
    let transport = URLSessionTransport()
    defer { transport.shutdown() }
    let client = Client.standard(baseURL: server.baseURL, transport: transport)
    #expect(client.chainDescription.contains("defaults: User-Agent, Accept, Accept-Encoding"))
    try await Self.expectGzipDecodedOnce(client, server: server)
    #expect(
      try await server.takeRequest().header("Accept-Encoding") == GzipMiddleware.acceptEncoding)

    // `configure` can leave the header to the transport.
    let leaving = Client.standard(baseURL: server.baseURL, transport: transport) {
      $0.gzip?.addsAcceptEncoding = false
    }
    #expect(leaving.chainDescription.contains("Accept-Encoding: the transport's)"))
    server.enqueue(.text("plain"))
    _ = try await leaving.send(Request(url: server.url("/again")))
    let own = try #require(try await server.takeRequest().header("Accept-Encoding"))
    #expect(own != GzipMiddleware.acceptEncoding)
  }

  @Test("over URLSession and MockServer: a 503 is retried and a gzip body decodes, once")
  func endToEnd() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let transport = URLSessionTransport()
    defer { transport.shutdown() }
    let sink = InMemoryLogSink()
    let client = Client.standard(baseURL: server.baseURL, transport: transport) {
      $0.retry = RetryMiddleware(policy: RetryPolicy(baseDelay: .milliseconds(1)), budget: nil)
      $0.logging = LoggingMiddleware(level: .basic, sink: sink)
      // No real-clock limit: a loaded full run has stretched this exchange past 30 s.
      $0.timeout = nil
    }
    struct Profile: Decodable, Equatable { let name: String }
    let json = Data(#"{"name":"Li"}"#.utf8)
    server.enqueue(MockResponse(status: 503))
    server.enqueue(
      MockResponse(status: 200, body: try GzipCompressor.compress(json, format: .gzip))
        .addingHeader("Content-Type", "application/json")
        .addingHeader("Content-Encoding", "gzip"))
    let response = try await client.response(for: Endpoint<Profile>(.get, "me"))
    #expect(response.value == Profile(name: "Li"))
    #expect(response.response.attempts == 2)
    #expect(response.response.body == json)
    #expect(response.response.headers[.contentEncoding] == nil)
    let first = try await server.takeRequest()
    #expect(first.header("user-agent") == HeadersMiddleware.userAgent)
    // The preset records a trace id for its log lines but sends none until asked.
    #expect(first.header("traceparent") == nil)
    #expect(sink.text.contains("503"))
    let id = try #require(response.response.request.attributes[RequestIDAttribute.self])
    #expect(sink.text.contains(id.traceID))

    #expect(try await server.takeRequest().header("traceparent") == nil)  // the retry

    let sending = Client.standard(baseURL: server.baseURL, transport: transport) {
      $0.requestID?.sendsTraceparent = true
    }
    server.enqueue(.text("plain"))
    let sent = try await sending.send(Request(url: server.url("/traced")))
    let header = try #require(try await server.takeRequest().header("traceparent"))
    #expect(
      TraceContext(traceparent: header)?.traceID
        == sent.request.attributes[RequestIDAttribute.self]?.traceID)
  }

  @Test(
    "with no transport given: CurlTransport on Linux, which reports a cut head that would stop the process under URLSession",
    .timeLimit(.minutes(5)))
  func defaultTransport() async throws {
    let made = Client.standardTransport()
    #if canImport(FoundationNetworking)
      #expect(made is CurlTransport)
    #else
      #expect(made is URLSessionTransport)
    #endif
    let server = try MockServer()
    defer { server.shutdown() }
    let client = Client.standard(baseURL: server.baseURL) {
      $0.retry = nil
      $0.timeout = TimeoutMiddleware(attempt: .seconds(5))
    }
    let expected = String(describing: type(of: made)) + "("
    #expect(client.chainDescription.split(separator: "\n").last?.contains(expected) == true)

    // Gzip asks for compression over libcurl, and decodes it once.
    try await Self.expectGzipDecodedOnce(client, server: server)
    #expect(try await server.takeRequest().header("Accept-Encoding") != nil)

    #if canImport(FoundationNetworking)
      // FoundationNetworking's fatalError ("Transfer completed, but there's no response"):
      // over the default transport it is an error a caller can catch.
      server.enqueue(MockResponse(body: Data("{}".utf8), fault: .closeBeforeHeadEnds))
      let error = await #expect(throws: CourierError.self) {
        _ = try await client.send(Request(url: server.url("/cut")))
      }
      #expect(error?.kind == .connectionLost)
    #endif
  }
}
