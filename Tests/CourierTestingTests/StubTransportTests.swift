import CourierCore
import CourierTesting
import Foundation
import Testing

/// `StubTransport` refuses what the wire transports refuse before sending, so that a unit
/// test sees what production would.
@Suite("StubTransport: the wire transports' checks", .timeLimit(.minutes(5)))
struct StubTransportTests {
  @Test(
    "a caller's Content-Length that is not the body's, or a Transfer-Encoding, is invalidRequest and not recorded"
  )
  func framing() async throws {
    let stub = StubTransport(fallback: .json("{}"))
    let client = Client(baseURL: URL(string: "https://api.test/"), transport: stub)
    let long = Endpoint<Data>(.post, "x").body(Data("ab".utf8), contentType: "text/plain")
      .header("Content-Length", "99999")
    #expect(await courierError { try await client.send(long) }?.kind == .invalidRequest)
    let chunked = Endpoint<Data>(.post, "x").body(Data("ab".utf8), contentType: "text/plain")
      .header("Transfer-Encoding", "chunked")
    #expect(await courierError { try await client.send(chunked) }?.kind == .invalidRequest)
    #expect(stub.requests.isEmpty)
    _ = try await client.send(
      Endpoint<Data>(.post, "x").body(Data("ab".utf8), contentType: "text/plain")
        .header("Content-Length", "2"))
    #expect(stub.requests.count == 1)
  }

  @Test("a body file that is a directory is invalidRequest and not recorded")
  func directoryBody() async throws {
    let stub = StubTransport(fallback: .json("{}"))
    let client = Client(baseURL: URL(string: "https://api.test/"), transport: stub)
    let error = await courierError {
      try await client.send(
        Endpoint<Data>(.put, "x").fileBody(
          FileManager.default.temporaryDirectory, contentType: "text/plain"))
    }
    #expect(error?.kind == .invalidRequest)
    #expect(error?.debugDescription.contains("not a readable regular file") == true)
    #expect(stub.requests.isEmpty)
  }

  @Test(
    "a route's {name} matches one encoded segment whatever the value holds, as the wire path does",
    arguments: ["a/b", "a%2Fb", "a b", "李雷", "..."])
  func routeParameterWithSlash(value: String) async throws {
    let stub = StubTransport()
    stub.on(.get, "user/{id}", .json(#"{"ok":true}"#))
    stub.on(.get, "files/a b/raw", .json(#"{"file":true}"#))
    let client = Client(baseURL: URL(string: "https://api.test/"), transport: stub)
    let body = try await client.send(Endpoint<Data>(.get, "user/{id}").parameter("id", value))
    #expect(String(decoding: body, as: UTF8.self) == #"{"ok":true}"#)
    let file = try await client.send(
      Endpoint<Data>(.get, "files/{name}/raw").parameter("name", "a b"))
    #expect(String(decoding: file, as: UTF8.self) == #"{"file":true}"#)
    // A value with a slash is one segment: it does not match a two-segment route's tail.
    stub.on(.get, "deep/{a}/{b}", .json(#"{"deep":true}"#))
    let deep = await courierError {
      try await client.send(Endpoint<Data>(.get, "deep/{a}").parameter("a", "x/y"))
    }
    #expect(deep?.status == 404)
  }

  @Test("a route written with escapes, as the wire path is, matches; its %2F is no separator")
  func routeWithEscapes() async throws {
    let stub = StubTransport()
    stub.on(.get, "files/a%2Fb/raw", .json(#"{"slash":true}"#))
    stub.on(.get, "caf%C3%A9", .json(#"{"cafe":true}"#))
    stub.on(.get, "100%", .json(#"{"percent":true}"#))
    let client = Client(baseURL: URL(string: "https://api.test/"), transport: stub)
    let slash = try await client.send(
      Endpoint<Data>(.get, "files/{name}/raw").parameter("name", "a/b"))
    #expect(String(decoding: slash, as: UTF8.self) == #"{"slash":true}"#)
    let cafe = try await client.send(Endpoint<Data>(.get, "café"))
    #expect(String(decoding: cafe, as: UTF8.self) == #"{"cafe":true}"#)
    // Not an escape: the route's text as it is (the wire path is /100%25).
    let percent = try await client.send(Endpoint<Data>(.get, "100%"))
    #expect(String(decoding: percent, as: UTF8.self) == #"{"percent":true}"#)
    // Three segments on the wire are not the route's two.
    let split = await courierError { try await client.send(Endpoint<Data>(.get, "files/a/b/raw")) }
    #expect(split?.status == 404)
  }

  @Test("empty segments are skipped in routing; the recorded request keeps its URL")
  func emptySegments() async throws {
    let stub = StubTransport()
    stub.on(.get, "a/b", .text("ab"))
    let client = Client(baseURL: URL(string: "https://api.test/"), transport: stub)
    #expect(try await client.send(Endpoint<String>(.get, "a//b")) == "ab")
    #expect(stub.requests.last?.url.path(percentEncoded: true) == "/a//b")
  }

  @Test(
    "a request's timeout ends a scripted delay on the stub's clock, across redirect hops",
    .timeLimit(.minutes(5)))
  func requestTimeoutOnTheClock() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    var moved = HTTPHeaders()
    try moved.add(.location, "/new")
    stub.on(.get, "old", StubResponse(status: 302, headers: moved).delayed(by: .seconds(3)))
    stub.on(.get, "new", StubResponse.text("late").delayed(by: .seconds(3)))
    let client = Client(baseURL: URL(string: "https://api.test/"), transport: stub)
    async let failure = courierError {
      try await client.send(Endpoint<String>(.get, "old").timeout(.seconds(5)))
    }
    await clock.waitForSleepers(1)
    clock.advance(by: .seconds(3))
    // The hop gets what is left of the 5 s: 2 s, not its 3 s delay (which a stub without the
    // limit would finish a second later, answering "late").
    await clock.waitForSleepers(2)
    clock.advance(by: .seconds(2))
    clock.advance(by: .seconds(1))
    let error = await failure
    #expect(error?.kind == .timedOut)
    #expect(error?.request?.url.path == "/old")
    #expect(stub.requests.map(\.url.path) == ["/old", "/new"])
  }
}
