import CourierCore
import CourierTesting
import Foundation
import Testing

/// Regression tests for issue #6's request-side defects: dot segments, IPv6 literals, URL
/// schemes, and errors thrown by middleware.
@Suite(
  "Request safety: path segments, IPv6 hosts, schemes, middleware errors", .timeLimit(.minutes(5)))
struct RequestSafetyTests {
  @Test(
    "'.' and '..' as path parameters are invalidRequest, never a walk up the path",
    arguments: [".", ".."])
  func dotSegments(value: String) async throws {
    let stub = StubTransport(fallback: .status(204))
    let client = stubClient(stub)
    let error = await courierError {
      try await client.send(
        Endpoint<Void>(.delete, "users/{id}/sessions").parameter("id", value))
    }
    #expect(error?.kind == .invalidRequest)
    #expect(error?.debugDescription.contains("remove a path segment") == true)
    #expect(stub.requests.isEmpty, "nothing may reach the transport")
  }

  @Test(
    "an absolute template with an IPv6 literal host is sent as written",
    arguments: [
      ("http://[::1]:8080/x/{id}", "http://[::1]:8080/x/a%20b"),
      ("https://[2001:db8::1]/v1/{id}", "https://[2001:db8::1]/v1/a%20b"),
      ("HTTP://[::1]/{id}", "HTTP://[::1]/a%20b"),
    ])
  func ipv6Template(template: String, expected: String) async throws {
    let stub = StubTransport(fallback: .status(204))
    let client = Client(transport: stub)
    try await client.send(Endpoint<Void>(.get, template).parameter("id", "a b"))
    let sent = try #require(stub.requests.first).url
    #expect(sent.absoluteString == expected)
    #expect(sent.host?.contains(":") == true)
  }

  @Test("a base URL with an IPv6 literal host joins relative paths")
  func ipv6Base() async throws {
    let stub = StubTransport(fallback: .status(204))
    let client = Client(baseURL: URL(string: "http://[::1]:9000/api/"), transport: stub)
    try await client.send(Endpoint<Void>(.get, "users/{id}").parameter("id", 7))
    #expect(try #require(stub.requests.first).url.absoluteString == "http://[::1]:9000/api/users/7")
  }

  @Test(
    "anything but http and https is invalidRequest before a transport is called",
    arguments: ["ftp://files.example.test/", "file:///etc/", "gopher://h.test/", "ws://h.test/"])
  func schemes(base: String) async throws {
    let stub = StubTransport(fallback: .status(200))
    let client = Client(baseURL: URL(string: base), transport: stub)
    let viaBase = await courierError { try await client.send(Endpoint<Data>(.get, "passwd")) }
    #expect(viaBase?.kind == .invalidRequest)

    let raw = await courierError {
      try await client.send(Request(url: try #require(URL(string: base + "passwd"))))
    }
    #expect(raw?.kind == .invalidRequest)
    #expect(raw?.debugDescription.contains("only http and https") == true)

    let absolute = await courierError {
      try await Client(transport: stub).send(Endpoint<Data>(.get, base + "passwd"))
    }
    #expect(absolute?.kind == .invalidRequest)
    #expect(stub.requests.isEmpty, "nothing may reach the transport")
  }

  @Test(
    "a template with another scheme is invalidRequest under an http base, with or without parameters",
    arguments: [
      "ftp://h.test/x", "file:///etc/passwd", "FILE:///etc/passwd", "gopher://h.test/{p}",
      "ws://h.test/x",
    ])
  func otherSchemeTemplate(template: String) async throws {
    let stub = StubTransport(fallback: .status(200))
    let client = Client(baseURL: URL(string: "https://api.test/v1/"), transport: stub)
    var endpoint = Endpoint<Data>(.get, template)
    if template.contains("{p}") { endpoint = endpoint.parameter("p", "x") }
    let error = await courierError { try await client.send(endpoint) }
    #expect(error?.kind == .invalidRequest)
    #expect(error?.debugDescription.contains("only http and https") == true)
    #expect(stub.requests.isEmpty, "sent: \(stub.requests.map(\.url))")
  }

  @Test("a middleware that rewrites the URL to another scheme is stopped before the transport")
  func rewrittenScheme() async throws {
    struct Rewrite: Middleware {
      func intercept(_ request: Request, next: Next) async throws -> Response {
        var request = request
        request.url = URL(string: "ftp://files.example.test/x")!
        return try await next(request)
      }
    }
    let stub = StubTransport(fallback: .status(200))
    let client = stubClient(stub, middleware: [Rewrite()])
    let error = await courierError { try await client.send(Endpoint<Void>(.get, "x")) }
    #expect(error?.kind == .invalidRequest)
    #expect(stub.requests.isEmpty)
  }

  @Test("a plain error thrown by a middleware is kind middleware, not a network error")
  func middlewareError() async throws {
    struct LocalFailure: Error {}
    struct Failing: Middleware {
      func intercept(_ request: Request, next: Next) async throws -> Response {
        throw LocalFailure()
      }
    }
    let client = stubClient(StubTransport(fallback: .status(200)), middleware: [Failing()])
    let error = await courierError { try await client.send(Endpoint<Void>(.get, "x")) }
    #expect(error?.kind == .middleware)
    #expect(error?.stage == "middleware Failing")
    #expect(error?.underlying is LocalFailure)
    let networkReasons = [
      ReasonCatalog.standard.text(for: "transport", locale: "en"),
      ReasonCatalog.standard.text(for: "connectionLost", locale: "en"),
    ]
    #expect(!networkReasons.contains(error?.reason))
  }

  @Test("a plain error thrown by a response stage is kind badResponse")
  func stageError() async throws {
    struct Rejected: Error {}
    struct Rejecting: ResponseStage {
      func process(_ context: inout ResponseContext) throws { throw Rejected() }
    }
    let client = stubClient(
      StubTransport(fallback: .status(200)), pipeline: ResponsePipeline([Rejecting()]))
    let error = await courierError { try await client.send(Endpoint<Void>(.get, "x")) }
    #expect(error?.kind == .badResponse)
    #expect(error?.stage == "Rejecting")
  }
}

@Suite("Doc examples that did not compile", .timeLimit(.minutes(5)))
struct DocExampleTests {
  @Test("query(name, nil) writes a bare flag; typed values still work")
  func queryFlag() async throws {
    let stub = StubTransport(fallback: .status(204))
    try await stubClient(stub).send(
      Endpoint<Void>(.get, "search").query("q", "a b").query("flag", nil).query("page", 2))
    #expect(
      try #require(stub.requests.first).url.absoluteString
        == "https://api.example.test/v1/search?q=a%20b&flag&page=2")
  }

  @Test("a custom method is made with try")
  func customMethod() throws {
    #expect(try HTTPMethod("PROPFIND").rawValue == "PROPFIND")
    #expect(throws: CourierError.self) { try HTTPMethod("BAD METHOD") }
  }
}
