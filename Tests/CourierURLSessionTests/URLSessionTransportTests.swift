import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Every test here waits on sockets, so the suite's time limit applies to each.
@Suite("URLSessionTransport against MockServer", .timeLimit(.minutes(1)))
struct URLSessionTransportTests {
  @Test("GET: the exact target goes on the wire and JSON comes back decoded")
  func get() async throws {
    let fixture = try WireFixture()
    defer { fixture.shutdown() }
    fixture.server.enqueue(
      MockResponse.json(#"{"name":"Li","age":30}"#).addingHeader("X-Request-Id", "r-1"))
    let endpoint = Endpoint<Profile>(.get, "user/check/{phone}")
      .parameter("phone", "+86 138/0")
      .query("q", "a b&c").query("tag", "x").query("tag", "y").query("empty", "")
      .header("X-Trace", "t-1")
    let decoded = try await fixture.client.response(for: endpoint)
    #expect(decoded.value == Profile(name: "Li", age: 30))
    #expect(decoded.response.status == 200)
    #expect(decoded.response.headers["x-request-id"] == "r-1")
    #expect(decoded.response.headers[.contentType] == "application/json")
    let recorded = try await fixture.server.takeRequest()
    #expect(recorded.method == "GET")
    #expect(recorded.target == "/user/check/%2B86%20138%2F0?q=a%20b%26c&tag=x&tag=y&empty=")
    #expect(recorded.header("x-trace") == "t-1")
    #expect(recorded.body.isEmpty)
  }

  @Test("POST JSON sends the encoded body with its content type")
  func postJSON() async throws {
    let fixture = try WireFixture()
    defer { fixture.shutdown() }
    fixture.server.enqueue(.json(#"{"name":"Li","age":31}"#, status: 201))
    let created = try await fixture.client.send(
      Endpoint<Profile>(.post, "users").jsonBody(Profile(name: "Li", age: 31)))
    #expect(created.age == 31)
    let recorded = try await fixture.server.takeRequest()
    #expect(recorded.method == "POST")
    #expect(recorded.header("Content-Type") == "application/json")
    let sent = try JSONDecoder().decode(Profile.self, from: recorded.body)
    #expect(sent == Profile(name: "Li", age: 31))
  }

  @Test("form bodies arrive urlencoded")
  func form() async throws {
    let fixture = try WireFixture()
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(status: 204))
    try await fixture.client.send(
      Endpoint<Void>(.post, "login").formBody([("user", "li lei"), ("pass", "p&ss=1+")]))
    let recorded = try await fixture.server.takeRequest()
    #expect(recorded.header("content-type") == "application/x-www-form-urlencoded; charset=utf-8")
    #expect(String(decoding: recorded.body, as: UTF8.self) == "user=li+lei&pass=p%26ss%3D1%2B")
  }

  @Test("204 with no body decodes Void and nil")
  func noContent() async throws {
    let fixture = try WireFixture()
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(status: 204))
    fixture.server.enqueue(MockResponse(status: 204))
    try await fixture.client.send(Endpoint<Void>(.delete, "users/1"))
    #expect(try await fixture.client.send(Endpoint<Profile?>(.get, "users/1")) == nil)
    #expect(try await fixture.server.takeRequest().method == "DELETE")
  }

  @Test("404 with a body is httpStatus, and the body stays readable")
  func notFound() async throws {
    let fixture = try WireFixture()
    defer { fixture.shutdown() }
    fixture.server.enqueue(.text("no such user", status: 404))
    let error = await courierError {
      try await fixture.client.send(Endpoint<Profile>(.get, "users/9"))
    }
    #expect(error?.kind == .httpStatus)
    #expect(error?.status == 404)
    #expect(error?.response?.bodyText == "no such user")
    #expect(error?.reason == "The requested content could not be found.")
  }

  @Test("5 MB bodies go up and come down intact")
  func largeBodies() async throws {
    let fixture = try WireFixture()
    defer { fixture.shutdown() }
    let payload = Data((0..<(5 * 1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    fixture.server.enqueue(MockResponse(status: 200, body: payload))
    let downloaded = try await fixture.client.send(Endpoint<Data>(.get, "blob"))
    #expect(downloaded == payload)
    fixture.server.enqueue(MockResponse(status: 204))
    try await fixture.client.send(
      Endpoint<Void>(.put, "blob").body(payload, contentType: "application/octet-stream"))
    _ = try await fixture.server.takeRequest()
    let uploaded = try await fixture.server.takeRequest()
    #expect(uploaded.method == "PUT")
    #expect(uploaded.body == payload)
  }

  @Test("a file body is streamed from disk")
  func fileBody() async throws {
    let fixture = try WireFixture()
    defer { fixture.shutdown() }
    let file = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-upload-\(UUID().uuidString).bin")
    let payload = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0) })
    try payload.write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    fixture.server.enqueue(MockResponse(status: 204))
    try await fixture.client.send(
      Endpoint<Void>(.post, "upload").fileBody(file, contentType: "application/octet-stream"))
    #expect(try await fixture.server.takeRequest().body == payload)
  }

  @Test("connection refused is cannotConnect")
  func connectionRefused() async throws {
    let port = try closedPort()
    let transport = URLSessionTransport()
    defer { transport.shutdown() }
    let client = Client(
      baseURL: URL(string: "http://127.0.0.1:\(port)/")!, transport: transport, locale: "en")
    let error = await courierError { try await client.send(Endpoint<Data>(.get, "x")) }
    #expect(error?.kind == .cannotConnect)
    #expect(error?.stage == "transport")
    #expect(error?.reason == "Could not connect to the server. Please try again later.")
  }

  @Test("a server that never answers hits the per-request timeout: timedOut")
  func perRequestTimeout() async throws {
    let fixture = try WireFixture()
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(fault: .hang))
    let error = await courierError {
      try await fixture.client.send(Endpoint<Data>(.get, "slow").timeout(.milliseconds(300)))
    }
    #expect(error?.kind == .timedOut)
    #expect(error?.reason == "The server took too long to respond.")
  }

  @Test("a dropped connection is a transport-level kind, not a crash")
  func droppedConnection() async throws {
    let fixture = try WireFixture()
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(fault: .closeWithoutResponse))
    fixture.server.enqueue(MockResponse(status: 200, body: Data(count: 1000), fault: .truncateBody))
    let closed = await courierError { try await fixture.client.send(Endpoint<Data>(.get, "a")) }
    let truncated = await courierError {
      try await fixture.client.send(Endpoint<Data>(.get, "b"))
    }
    #expect([.badResponse, .connectionLost].contains(closed?.kind))
    #expect(
      [.badResponse, .connectionLost, .corruptBody].contains(truncated?.kind),
      "\(String(reflecting: truncated))")
  }

  @Test("cancelling the task mid-request ends it with kind cancelled")
  func taskCancellation() async throws {
    let fixture = try WireFixture()
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(fault: .hang))
    let client = fixture.client
    let task = Task { try await client.send(Endpoint<Data>(.get, "hang")) }
    _ = try await fixture.server.takeRequest()
    task.cancel()
    let error = await courierError { try await task.value }
    #expect(error?.kind == .cancelled)
    #expect(client.inFlightCount == 0)
  }

  @Test("cancelAll cancels 20 requests in flight on the wire")
  func cancelAllTwenty() async throws {
    let configuration = URLSessionTransport.defaultConfiguration
    configuration.httpMaximumConnectionsPerHost = 20
    let fixture = try WireFixture(configuration: configuration)
    defer { fixture.shutdown() }
    fixture.server.setDispatcher { _ in MockResponse(fault: .hang) }
    let client = fixture.client
    let tasks = (0..<20).map { index in
      Task { try await client.send(Endpoint<Data>(.get, "hang/\(index)")) }
    }
    for _ in 0..<20 { _ = try await fixture.server.takeRequest() }
    #expect(client.inFlightCount == 20)
    #expect(client.cancelAll() == 20)
    for task in tasks {
      let error = await courierError { try await task.value }
      #expect(error?.kind == .cancelled)
    }
    #expect(client.inFlightCount == 0)
    // The client still works afterwards.
    fixture.server.setDispatcher { _ in .text("ok") }
    #expect(try await client.send(Endpoint<String>(.get, "after")) == "ok")
  }

  @Test("cancelAll also reaches requests still queued inside URLSession")
  func cancelAllQueued() async throws {
    let configuration = URLSessionTransport.defaultConfiguration
    configuration.httpMaximumConnectionsPerHost = 2
    let (entered, requests) = Entered.make()
    let fixture = try WireFixture(configuration: configuration, middleware: [entered])
    defer { fixture.shutdown() }
    fixture.server.setDispatcher { _ in MockResponse(fault: .hang) }
    let client = fixture.client
    let tasks = (0..<6).map { _ in Task { try await client.send(Endpoint<Data>(.get, "q")) } }
    for _ in 0..<2 { _ = try await fixture.server.takeRequest() }
    // A request whose chain has begun is registered for cancelAll; 4 of them wait inside
    // URLSession for one of its 2 connections.
    await requests.take(6)
    #expect(client.inFlightCount == 6)
    #expect(client.cancelAll() == 6)
    for task in tasks {
      #expect(await courierError { try await task.value }?.kind == .cancelled)
    }
  }

  @Test("cancelling one client's request leaves another request on the same session running")
  func cancelsOnlyTheCancelledRequest() async throws {
    struct ViaInner: Middleware {
      let inner: Client
      func intercept(_ request: Request, next: Next) async throws -> Response {
        try await inner.send(request)
      }
    }
    let server = try MockServer()
    defer { server.shutdown() }
    server.setDispatcher { request in
      request.path == "/slow"
        ? MockResponse(status: 200, body: Data("slow".utf8), delay: .milliseconds(500))
        : MockResponse(fault: .hang)
    }
    let shared = URLSessionTransport()
    defer { shared.shutdown() }
    let inner = Client(baseURL: server.baseURL, transport: shared)
    let outer = Client(
      baseURL: server.baseURL, transport: StubTransport(), middleware: [ViaInner(inner: inner)])
    // Warm the session so the two requests below may reuse its connections.
    server.enqueue(.text("a"))
    server.enqueue(.text("b"))
    _ = try await inner.send(Endpoint<String>(.get, "warm"))
    _ = try await inner.send(Endpoint<String>(.get, "warm"))
    _ = try await server.takeRequest()
    _ = try await server.takeRequest()

    let survivor = Task { try await inner.send(Endpoint<String>(.get, "slow")) }
    let doomed = Task { try await outer.send(Endpoint<Data>(.get, "hang")) }
    var paths: Set<String> = []
    for _ in 0..<2 { paths.insert(try await server.takeRequest().path) }
    #expect(paths == ["/slow", "/hang"])
    #expect(outer.cancelAll() == 1)
    #expect(await courierError { try await doomed.value }?.kind == .cancelled)
    #expect(try await survivor.value == "slow")
  }
}
