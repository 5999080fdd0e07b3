import Courier
import CourierTesting
import Foundation
import Testing

/// Redirects, the same on every transport that talks to a real server: credentials dropped
/// across hosts and kept on the same host, the method rules of 303 and 307, loops and hop
/// limits, and `doNotFollow`.
@Suite("Transport conformance: redirects", .timeLimit(.minutes(5)))
struct RedirectConformanceTests {
  static func credentialed(
    _ url: URL, method: HTTPMethod = .get, body: RequestBody = .empty
  ) throws -> Request {
    var request = Request(method: method, url: url, body: body)
    try request.headers.set("Authorization", "Bearer secret")
    try request.headers.set("Cookie", "session=s1")
    return request
  }

  @Test(
    "a cross-host redirect (127.0.0.1 → 127.0.0.2) drops Authorization and Cookie",
    arguments: TransportKind.wire)
  func crossHost(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    let other = try MockServer(host: "127.0.0.2")
    defer {
      fixture.shutdown()
      other.shutdown()
    }
    fixture.server.enqueue(
      MockResponse(status: 302).addingHeader("Location", other.url("/landing").absoluteString))
    other.enqueue(.text("arrived"))
    let response = try await fixture.client.send(Self.credentialed(fixture.server.url("/start")))
    #expect(response.status == 200)
    #expect(response.bodyText == "arrived")
    #expect(try await fixture.server.takeRequest().header("Authorization") == "Bearer secret")
    let second = try await other.takeRequest()
    #expect(second.path == "/landing")
    #expect(second.header("Authorization") == nil)
    #expect(second.header("Cookie") == nil)
  }

  @Test("a same-host redirect keeps Authorization and Cookie", arguments: TransportKind.wire)
  func sameHost(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(status: 301).addingHeader("Location", "/moved"))
    fixture.server.enqueue(.text("here"))
    let response = try await fixture.client.send(Self.credentialed(fixture.server.url("/old")))
    #expect(response.bodyText == "here")
    _ = try await fixture.server.takeRequest()
    let moved = try await fixture.server.takeRequest()
    #expect(moved.path == "/moved")
    #expect(moved.header("Authorization") == "Bearer secret")
    #expect(moved.header("Cookie") == "session=s1")
  }

  @Test(
    "303 turns POST into GET without a body; 307 keeps method and body",
    arguments: TransportKind.wire)
  func methodRules(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(status: 303).addingHeader("Location", "/see"))
    fixture.server.enqueue(.text("ok"))
    fixture.server.enqueue(MockResponse(status: 307).addingHeader("Location", "/again"))
    fixture.server.enqueue(.text("ok"))
    let body = RequestBody.data(Data("hello".utf8))
    let url = fixture.server.url("/p")
    _ = try await fixture.client.send(Self.credentialed(url, method: .post, body: body))
    _ = try await fixture.server.takeRequest()
    let seeOther = try await fixture.server.takeRequest()
    #expect(seeOther.method == "GET")
    #expect(seeOther.body.isEmpty)
    #expect(seeOther.header("Authorization") == "Bearer secret")
    let response = try await fixture.client.send(Request(method: .post, url: url, body: body))
    #expect(response.status == 200)
    _ = try await fixture.server.takeRequest()
    let temporary = try await fixture.server.takeRequest()
    #expect(temporary.method == "POST")
    #expect(temporary.path == "/again")
    #expect(String(decoding: temporary.body, as: UTF8.self) == "hello")
  }

  @Test(
    "a redirect loop ends with tooManyRedirects and a clear reason", arguments: TransportKind.wire)
  func loop(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    fixture.server.setDispatcher { _ in MockResponse(status: 302).addingHeader("Location", "/a") }
    let error = await courierError {
      try await fixture.client.send(Request(url: fixture.server.url("/a")))
    }
    #expect(error?.kind == .tooManyRedirects)
    #expect(error?.debugMessage.contains("loop") == true)
    #expect(error?.reason == "The server redirected the request too many times.")
    #expect(fixture.server.requestCount == 1)
  }

  @Test(
    "follow(maximum: 3): the fourth hop fails; doNotFollow returns the 3xx as it is",
    arguments: TransportKind.wire)
  func hopLimit(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    fixture.server.setDispatcher { request in
      let next = (Int(request.path.dropFirst()) ?? 0) + 1
      return MockResponse(status: 307).addingHeader("Location", "/\(next)")
    }
    let limited = Endpoint<Void>(.get, "0").redirects(.follow(maximum: 3))
    let error = await courierError { try await fixture.client.send(limited) }
    #expect(error?.kind == .tooManyRedirects)
    #expect(fixture.server.requestCount == 4)
    var request = Request(url: fixture.server.url("/0"))
    request.attributes[RedirectPolicyAttribute.self] = .doNotFollow
    let response = try await fixture.client.send(request)
    #expect(response.status == 307)
    #expect(response.headers[.location] == "/1")
  }

  @Test(
    "a redirect to file:, ftp:, data: or another scheme is not followed: the 302 comes back",
    arguments: TransportKind.wire)
  func otherSchemes(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    let locations = [
      "file:///etc/hostname", "FILE:///etc/passwd", "ftp://127.0.0.1:1/x",
      "gopher://127.0.0.1:1/x", "data:text/plain,hello", "httpx://a/b", "http:///no-host",
    ]
    fixture.server.setDispatcher { request in
      let index = Int(request.path.dropFirst()) ?? 0
      return request.path.count < 4
        ? MockResponse(status: 302).addingHeader("Location", locations[index])
        : .text("followed to \(request.path)")
    }
    for index in locations.indices {
      let before = fixture.server.requestCount
      let response = try await fixture.client.send(
        Request(method: .get, url: fixture.server.url("/\(index)")))
      #expect(response.status == 302, "\(locations[index]): \(response.bodyText ?? "")")
      #expect(response.headers[.location] == locations[index])
      #expect(fixture.server.requestCount == before + 1, "\(locations[index]) was followed")
    }
  }

  @Test(
    "a protocol-relative Location is followed; one that does not parse is badResponse",
    arguments: TransportKind.wire)
  func relativeAndBroken(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    let port = fixture.server.port
    fixture.server.setDispatcher { request in
      switch request.path {
      case "/relative": MockResponse(status: 302).addingHeader("Location", "//127.0.0.1:\(port)/x")
      case "/broken": MockResponse(status: 302).addingHeader("Location", "http://[::1")
      default: .text("arrived at \(request.path)")
      }
    }
    let response = try await fixture.client.send(Request(url: fixture.server.url("/relative")))
    #expect(response.bodyText == "arrived at /x")
    let error = await courierError {
      try await fixture.client.send(Request(url: fixture.server.url("/broken")))
    }
    #expect(error?.kind == .badResponse)
  }

  @Test(
    "a hop that fails reports the caller's request, not the hop's",
    arguments: TransportKind.wire)
  func failedHop(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    let refusing = try RefusingPort()
    defer { withExtendedLifetime(refusing) {} }
    fixture.server.enqueue(
      MockResponse(status: 302).addingHeader("Location", refusing.url("gone").absoluteString))
    let start = fixture.server.url("/start")
    let error = await courierError { try await fixture.client.send(Request(url: start)) }
    #expect(error?.kind == .cannotConnect, "\(String(reflecting: error))")
    #expect(error?.request?.url == start)
    if kind == .curl { #expect(error?.debugMessage.contains("on redirect hop 1") == true) }
  }

  @Test("the shared target rule: http and https only, relative values resolved")
  func targetRule() throws {
    let base = try #require(URL(string: "https://a.test/dir/page?q=1"))
    #expect(
      Redirect.target(ofLocation: "next", from: base)?.absoluteString == "https://a.test/dir/next")
    #expect(Redirect.target(ofLocation: "/top", from: base)?.absoluteString == "https://a.test/top")
    #expect(
      Redirect.target(ofLocation: "//b.test/x", from: base)?.absoluteString == "https://b.test/x")
    #expect(Redirect.target(ofLocation: "HTTP://b.test/", from: base) != nil)
    for refused in ["file:///etc/passwd", "ftp://b.test/", "javascript:alert(1)", "http:///x"] {
      #expect(Redirect.target(ofLocation: refused, from: base) == nil, "\(refused)")
    }
  }

  @Test("the shared rule: 307 keeps method and body, 302 POST becomes GET, ports count")
  func sharedRule() throws {
    let original = try Self.credentialed(
      try #require(URL(string: "http://a.test/x")), method: .post, body: .data(Data("b".utf8)))
    let kept = Redirect.nextRequest(
      after: original, status: 307, location: try #require(URL(string: "http://a.test:80/y")))
    #expect(kept?.method == .post)
    #expect(kept?.body == .data(Data("b".utf8)))
    #expect(kept?.headers["Authorization"] == "Bearer secret")
    let moved = Redirect.nextRequest(
      after: original, status: 302, location: try #require(URL(string: "http://a.test:8080/y")))
    #expect(moved?.method == .get)
    #expect(moved?.body == .empty)
    #expect(moved?.headers["Authorization"] == nil)
    #expect(moved?.headers["Cookie"] == nil)
    #expect(Redirect.nextRequest(after: original, status: 304, location: original.url) == nil)
  }

  /// Hands out one credential under a header of the caller's choosing.
  struct FixedCredential: CredentialProvider {
    let credential: Credential
    func credential() async throws -> Credential? { credential }
    func refresh(rejected: Credential?) async throws -> Credential { credential }
  }

  @Test(
    "a redirect to another port drops the header AuthMiddleware set and every header Redaction hides",
    arguments: TransportKind.wire,
    ["X-API-Key", "X-Tenant-Credential", "Authorization"])
  func customCredentialHeader(kind: TransportKind, headerName: String) async throws {
    let header = try HTTPHeaders.Name(headerName)
    let auth = AuthMiddleware(
      provider: FixedCredential(credential: Credential("sk_live_SECRET1", header: header)))
    let fixture = try Fixture(kind, middleware: [auth])
    let other = try MockServer()
    defer {
      fixture.shutdown()
      other.shutdown()
    }
    #expect(other.port != fixture.server.port)
    fixture.server.enqueue(MockResponse(status: 301).addingHeader("Location", "/same"))
    fixture.server.enqueue(
      MockResponse(status: 302).addingHeader("Location", other.url("/landing").absoluteString))
    other.enqueue(.text("arrived"))
    let endpoint = Endpoint<String>(.get, "start").header("X-Auth-Token", "AUTH-TOKEN-2")
      .header("X-Trace", "kept")
    #expect(try await fixture.client.send(endpoint) == "arrived")
    let first = try await fixture.server.takeRequest()
    #expect(first.header(header.rawName) == "sk_live_SECRET1")
    // The same origin keeps every header.
    let same = try await fixture.server.takeRequest()
    #expect(same.path == "/same")
    #expect(same.header(header.rawName) == "sk_live_SECRET1")
    #expect(same.header("X-Auth-Token") == "AUTH-TOKEN-2")
    let landed = try await other.takeRequest()
    #expect(landed.path == "/landing")
    #expect(landed.header(header.rawName) == nil)
    #expect(landed.header("X-Auth-Token") == nil)
    #expect(landed.header("X-Trace") == "kept")
    let everything = landed.headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    #expect(!everything.contains("SECRET1"))
    #expect(!everything.contains("AUTH-TOKEN-2"))
  }
}
