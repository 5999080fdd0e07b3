import CourierCore
import CourierTesting
import Foundation
import Synchronization
import Testing

@Suite("HeadersMiddleware and RequestIDMiddleware", .timeLimit(.minutes(5)))
struct HeadersMiddlewareTests {
  @Test("defaults are added, request and endpoint headers win, providers beat defaults")
  func precedence() async throws {
    let stub = StubTransport(fallback: .status(204))
    let headers = try HeadersMiddleware(providers: [
      HeaderProvider("X-Device-ID") { _ in "device-1" },
      HeaderProvider(.accept) { _ in "application/vnd.api+json" },
      HeaderProvider("X-Skipped") { _ in nil },
    ])
    let client = stubClient(stub, middleware: [headers])
    try await client.send(Endpoint<Void>(.get, "a"))
    try await client.send(
      Endpoint<Void>(.get, "b").header(.accept, "text/csv").header("X-Device-ID", "mine")
        .header(.userAgent, "MyApp/2"))

    let first = try #require(stub.requests.first).headers
    #expect(first[.userAgent] == HeadersMiddleware.userAgent)
    #expect(first[.accept] == "application/vnd.api+json")
    #expect(first["X-Device-ID"] == "device-1")
    #expect(first["X-Skipped"] == nil)

    let second = try #require(stub.requests.last).headers
    #expect(second.values(for: .accept) == ["text/csv"])
    #expect(second["X-Device-ID"] == "mine")
    #expect(second.values(for: .userAgent) == ["MyApp/2"])
  }

  @Test("a request with no headers and one with some get the same defaults, every value of each")
  func defaultsWithSeveralValues() async throws {
    let stub = StubTransport(fallback: .status(204))
    var defaults = HTTPHeaders()
    try defaults.add("X-Feature", "a")
    try defaults.add("X-Feature", "b")
    try defaults.add(.accept, "application/json")
    let client = stubClient(stub, middleware: [HeadersMiddleware(defaults: defaults)])
    try await client.send(Endpoint<Void>(.get, "plain"))
    try await client.send(Endpoint<Void>(.get, "own").header("X-Own", "1"))
    let plain = try #require(stub.requests.first).headers
    let own = try #require(stub.requests.last).headers
    #expect(plain.values(for: try HTTPHeaders.Name("X-Feature")) == ["a", "b"])
    #expect(own.values(for: try HTTPHeaders.Name("X-Feature")) == ["a", "b"])
    #expect(own["X-Own"] == "1" && own[.accept] == "application/json")
  }

  @Test("defaults built from received fields are still checked before they are sent")
  func receivedDefaultsAreChecked() async throws {
    let stub = StubTransport(fallback: .status(204))
    // Received values may hold non-ASCII bytes; a sent value may not.
    let defaults = HTTPHeaders(received: [("X-Name", "café")])
    let client = stubClient(stub, middleware: [HeadersMiddleware(defaults: defaults)])
    let error = await #expect(throws: CourierError.self) {
      try await client.send(Endpoint<Void>(.get, "plain"))
    }
    #expect(error?.kind == .invalidRequest)
    #expect(stub.requests.isEmpty)
  }

  @Test("the default User-Agent names Courier, its version, the OS and the architecture")
  func userAgent() {
    let agent = HeadersMiddleware.userAgent
    #expect(agent.hasPrefix("Courier/\(CourierVersion.current) ("))
    #if os(Linux)
      #expect(agent.contains("Linux; "))
    #endif
    #expect(HeadersMiddleware.standardDefaults[.accept] == "application/json")
  }

  @Test("a provider runs once per request, at send time, and not again on a retry inside")
  func providerOncePerRequest() async throws {
    let calls = Mutex(0)
    let headers = try HeadersMiddleware(providers: [
      HeaderProvider("X-Call") { _ in
        String(
          calls.withLock { count in
            count += 1
            return count
          })
      }
    ])
    /// Sends every request twice, as a retry would.
    struct Twice: Middleware {
      func intercept(_ request: Request, next: Next) async throws -> Response {
        _ = try await next(request)
        return try await next(request)
      }
    }
    let stub = StubTransport(fallback: .status(204))
    let client = stubClient(stub, middleware: [headers, Twice()])
    #expect(calls.withLock { $0 } == 0, "nothing runs before a request is sent")
    try await client.send(Endpoint<Void>(.get, "a"))
    try await client.send(Endpoint<Void>(.get, "b"))
    #expect(calls.withLock { $0 } == 2)
    #expect(stub.requests.map { $0.headers["X-Call"] } == ["1", "1", "2", "2"])
  }

  @Test("a provider that throws fails the request as kind middleware")
  func providerFailure() async throws {
    struct NoKey: Error {}
    let headers = try HeadersMiddleware(providers: [HeaderProvider("X-Sign") { _ in throw NoKey() }]
    )
    let stub = StubTransport(fallback: .status(204))
    let error = await courierError {
      try await stubClient(stub, middleware: [headers]).send(Endpoint<Void>(.get, "a"))
    }
    #expect(error?.kind == .middleware)
    #expect(stub.requests.isEmpty)
  }

  @Test("a request id is stable across retries and unique across 10,000 requests")
  func requestIDs() async throws {
    struct Twice: Middleware {
      func intercept(_ request: Request, next: Next) async throws -> Response {
        _ = try await next(request)
        return try await next(request)
      }
    }
    let stub = StubTransport(fallback: .status(204))
    let client = stubClient(
      stub, middleware: [RequestIDMiddleware(requestIDHeader: true), Twice()])
    try await client.send(Endpoint<Void>(.get, "a"))
    let attempts = stub.requests
    #expect(attempts.count == 2)
    let header = try #require(attempts[0].headers[.traceparent])
    #expect(attempts[1].headers[.traceparent] == header)
    let context = try #require(TraceContext(traceparent: header))
    #expect(attempts[0].headers[.requestID] == context.traceID)
    #expect(attempts[0].attributes[RequestIDAttribute.self] == context)
    #expect(header.wholeMatch(of: /00-[0-9a-f]{32}-[0-9a-f]{16}-01/) != nil)

    var seen = Set<String>()
    let middleware = RequestIDMiddleware()
    let echo = Next { request in Response(status: 204, request: request) }
    for _ in 0..<10_000 {
      let response = try await middleware.intercept(Request(url: testBase), next: echo)
      seen.insert(try #require(response.request.attributes[RequestIDAttribute.self]).traceID)
    }
    #expect(seen.count == 10_000)
  }

  @Test("the request id appears in CourierError.debugDescription")
  func requestIDInErrors() async throws {
    let stub = StubTransport(fallback: .status(500))
    let client = stubClient(stub, middleware: [RequestIDMiddleware()])
    let error = await courierError { try await client.send(Endpoint<Void>(.get, "x")) }
    let id = try #require(stub.requests.first?.attributes[RequestIDAttribute.self]).traceID
    #expect(error?.debugDescription.contains("request id: \(id)") == true)
  }

  @Test("with sendsTraceparent off the id is recorded, the same across retries, and not sent")
  func recordedOnly() async throws {
    struct Twice: Middleware {
      func intercept(_ request: Request, next: Next) async throws -> Response {
        _ = try? await next(request)
        return try await next(request)
      }
    }
    let stub = StubTransport(fallback: .status(500))
    let client = stubClient(
      stub, middleware: [RequestIDMiddleware(sendsTraceparent: false), Twice()])
    let error = await courierError { try await client.send(Endpoint<Void>(.get, "a")) }
    let attempts = stub.requests
    try #require(attempts.count == 2)
    #expect(attempts.allSatisfy { $0.headers[.traceparent] == nil })
    let context = try #require(attempts[0].attributes[RequestIDAttribute.self])
    #expect(attempts[1].attributes[RequestIDAttribute.self] == context)
    #expect(error?.debugDescription.contains("request id: \(context.traceID)") == true)

    // X-Request-ID is independent of it.
    let echo = Next { request in Response(status: 204, request: request) }
    let withHeader = try await RequestIDMiddleware(sendsTraceparent: false, requestIDHeader: true)
      .intercept(Request(url: testBase), next: echo).request
    #expect(withHeader.headers[.traceparent] == nil)
    #expect(
      withHeader.headers[.requestID] == withHeader.attributes[RequestIDAttribute.self]?.traceID)
    #expect(withHeader.headers[.requestID] != nil)

    // A caller's own traceparent goes as it is, and its trace is the one recorded.
    let incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    var request = Request(url: testBase)
    try request.headers.set(.traceparent, incoming)
    let sent = try await RequestIDMiddleware(sendsTraceparent: false)
      .intercept(request, next: echo).request
    #expect(sent.headers[.traceparent] == incoming)
    #expect(sent.attributes[RequestIDAttribute.self] == TraceContext(traceparent: incoming))
  }

  @Test("an incoming traceparent is continued with a new parent id; a bad one is replaced")
  func continuesTrace() async throws {
    let incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    let echo = Next { request in Response(status: 204, request: request) }
    var request = Request(url: testBase)
    try request.headers.set(.traceparent, incoming)
    let continued = try await RequestIDMiddleware().intercept(request, next: echo).request
    let context = try #require(continued.attributes[RequestIDAttribute.self])
    #expect(context.traceID == "4bf92f3577b34da6a3ce929d0e0e4736")
    #expect(context.parentID != "00f067aa0ba902b7")

    for bad in [
      "garbage", "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
      "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
    ] {
      try request.headers.set(.traceparent, bad)
      let replaced = try await RequestIDMiddleware().intercept(request, next: echo).request
      #expect(
        replaced.attributes[RequestIDAttribute.self]?.traceID != "4bf92f3577b34da6a3ce929d0e0e4736")
      #expect(TraceContext(traceparent: replaced.headers[.traceparent] ?? "") != nil)
    }
  }
}
