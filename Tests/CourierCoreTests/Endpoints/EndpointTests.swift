import CourierCore
import CourierTesting
import Foundation
import Testing

@Suite("Endpoint URLs, query and bodies", .timeLimit(.minutes(5)))
struct EndpointTests {
  /// Sends `endpoint` through a client on a stub and returns the URL string that was sent.
  func sentURL<Value>(_ endpoint: Endpoint<Value>, base: URL? = testBase) async throws -> String {
    let stub = StubTransport(fallback: .json("{}"))
    let client = Client(baseURL: base, transport: stub)
    _ = try? await client.send(endpoint)
    return try #require(stub.requests.first).url.absoluteString
  }

  @Test(
    "path parameters are percent-encoded as one path segment",
    arguments: [
      ("13800138000", "13800138000"),
      ("a b", "a%20b"),
      ("a/b", "a%2Fb"),
      ("a?b", "a%3Fb"),
      ("a#b", "a%23b"),
      ("100%", "100%25"),
      ("李雷", "%E6%9D%8E%E9%9B%B7"),
      ("e\u{301}", "e%CC%81"),
      ("+86 138", "%2B86%20138"),
      ("a&b=c", "a%26b%3Dc"),
      ("...", "..."),
      ("../x", "..%2Fx"),
      ("~user_1.x-y", "~user_1.x-y"),
    ])
  func pathEncoding(value: String, encoded: String) async throws {
    let url = try await sentURL(
      Endpoint<Data>(.get, "user/check/{phone}").parameter("phone", value))
    #expect(url == "https://api.example.test/v1/user/check/\(encoded)")
  }

  @Test("a parameter may appear twice in the template")
  func repeatedParameter() async throws {
    let endpoint = Endpoint<Data>(.get, "a/{id}/b/{id}").parameter("id", "x y")
    #expect(try await sentURL(endpoint) == "https://api.example.test/v1/a/x%20y/b/x%20y")
  }

  @Test("several parameters and non-string values")
  func severalParameters() async throws {
    let endpoint = Endpoint<Data>(.get, "/users/{id}/posts/{post}")
      .parameter("id", 42).parameter("post", "a b")
    #expect(try await sentURL(endpoint) == "https://api.example.test/v1/users/42/posts/a%20b")
  }

  @Test(
    "query items keep order, repeat keys, and encode reserved characters",
    arguments: [
      ([QueryItem("q", "Beijing")], "q=Beijing"),
      ([QueryItem("q", "a b")], "q=a%20b"),
      ([QueryItem("q", "a+b")], "q=a%2Bb"),
      ([QueryItem("q", "a&b=c")], "q=a%26b%3Dc"),
      ([QueryItem("q", "北京")], "q=%E5%8C%97%E4%BA%AC"),
      ([QueryItem("tag", "a"), QueryItem("tag", "b")], "tag=a&tag=b"),
      ([QueryItem("empty", ""), QueryItem("flag", nil)], "empty=&flag"),
      ([QueryItem("a key", "v/?#%")], "a%20key=v%2F%3F%23%25"),
      ([QueryItem("z", "1"), QueryItem("a", "2")], "z=1&a=2"),
    ])
  func queryEncoding(items: [QueryItem], expected: String) async throws {
    let url = try await sentURL(Endpoint<Data>(.get, "search").query(items))
    #expect(url == "https://api.example.test/v1/search?\(expected)")
  }

  @Test(
    "base URL and path join with exactly one slash",
    arguments: [
      ("https://h.test/api", "users"),
      ("https://h.test/api/", "users"),
      ("https://h.test/api", "/users"),
      ("https://h.test/api/", "/users"),
    ])
  func baseJoining(base: String, path: String) async throws {
    let url = try await sentURL(Endpoint<Data>(.get, path), base: URL(string: base))
    #expect(url == "https://h.test/api/users")
  }

  @Test("a host-only base URL joins too, and an empty path keeps the base")
  func hostOnlyBase() async throws {
    #expect(
      try await sentURL(Endpoint<Data>(.get, "ping"), base: URL(string: "http://127.0.0.1:8080"))
        == "http://127.0.0.1:8080/ping")
    #expect(try await sentURL(Endpoint<Data>(.get, "")) == testBase.absoluteString)
  }

  @Test("an absolute URL in the path overrides the base URL")
  func absoluteOverride() async throws {
    let endpoint = Endpoint<Data>(.get, "https://other.test/x/{id}").parameter("id", "a b")
      .query("k", "v")
    #expect(try await sentURL(endpoint) == "https://other.test/x/a%20b?k=v")
    #expect(try await sentURL(endpoint, base: nil) == "https://other.test/x/a%20b?k=v")
  }

  @Test(
    "bad templates and parameters are invalidRequest errors, and nothing is sent",
    arguments: [
      (Endpoint<Data>(.get, "user/{id}"), "has no value"),
      (Endpoint<Data>(.get, "user").parameter("id", 1), "not used"),
      (Endpoint<Data>(.get, "a/{id}/b/{id}").parameter("id", 1).parameter("extra", 2), "not used"),
      (Endpoint<Data>(.get, "user/{id}").parameter("id", ""), "is empty"),
      (Endpoint<Data>(.get, "user/{id").parameter("id", 1), "unclosed"),
      (Endpoint<Data>(.get, "user/{}"), "empty or nested"),
      (Endpoint<Data>(.get, "search?q=1"), "use query items"),
      (Endpoint<Data>(.get, "x").header("Bad\r\nName", "v"), "not a valid token"),
      (Endpoint<Data>(.get, "x").header("X-Ok", "v\r\nInjected: 1"), "control character"),
    ])
  func invalidRequests(endpoint: Endpoint<Data>, message: String) async throws {
    let stub = StubTransport(fallback: .status(200))
    let client = Client(baseURL: testBase, transport: stub, locale: "en")
    let error = await courierError { try await client.send(endpoint) }
    #expect(error?.kind == .invalidRequest)
    #expect(error?.debugDescription.contains(message) == true)
    #expect(error?.stage == "request")
    #expect(error?.reason.contains("{") == false)
    #expect(stub.requests.isEmpty)
  }

  @Test("a relative path without a base URL is an invalidRequest error")
  func relativeWithoutBase() async {
    let client = Client(transport: StubTransport())
    let error = await courierError { try await client.send(Endpoint<Data>(.get, "x")) }
    #expect(error?.kind == .invalidRequest)
  }

  @Test("JSON bodies use the client's encoder and set Content-Type")
  func jsonBody() async throws {
    struct NewUser: Codable, Sendable { let userName: String }
    let encoder = JSONEncoder()
    encoder.keyEncodingStrategy = .convertToSnakeCase
    let stub = StubTransport(fallback: .json(#"{"userName":"Li"}"#, status: 201))
    let client = Client(baseURL: testBase, transport: stub, encoder: encoder)
    let created = try await client.send(
      Endpoint<NewUser>(.post, "users").jsonBody(NewUser(userName: "Li")))
    #expect(created.userName == "Li")
    let sent = try #require(stub.requests.first)
    #expect(sent.method == .post)
    #expect(sent.headers[.contentType] == "application/json")
    #expect(sent.headers[.accept] == nil)
    #expect(sent.body.data == Data(#"{"user_name":"Li"}"#.utf8))
  }

  @Test("an unencodable JSON body is an invalidRequest error")
  func unencodableBody() async {
    let error = await courierError {
      try await stubClient(StubTransport()).send(
        Endpoint<Data>(.post, "x").jsonBody(["bad": Double.nan]))
    }
    #expect(error?.kind == .invalidRequest)
    #expect(error?.underlying is EncodingError)
  }

  @Test("form bodies are x-www-form-urlencoded in order")
  func formBody() async throws {
    let stub = StubTransport(fallback: .status(204))
    try await stubClient(stub).send(
      Endpoint<Void>(.post, "login").formBody([
        ("user", "li lei"), ("pass", "a&b=c+d"), ("city", "北京"), ("empty", ""),
      ]))
    let sent = try #require(stub.requests.first)
    #expect(
      sent.headers[.contentType] == "application/x-www-form-urlencoded; charset=utf-8")
    #expect(
      sent.body.data.flatMap { String(bytes: $0, encoding: .utf8) }
        == "user=li+lei&pass=a%26b%3Dc%2Bd&city=%E5%8C%97%E4%BA%AC&empty=")
  }

  @Test("raw bodies keep their content type; an explicit header wins")
  func rawBody() async throws {
    let stub = StubTransport(fallback: .status(204))
    let client = stubClient(stub)
    try await client.send(
      Endpoint<Void>(.put, "blob").body(Data([1, 2, 3]), contentType: "application/octet-stream"))
    try await client.send(
      Endpoint<Void>(.put, "blob").header(.contentType, "image/png")
        .body(Data([4]), contentType: "application/octet-stream"))
    let requests = stub.requests
    #expect(requests[0].headers[.contentType] == "application/octet-stream")
    #expect(requests[0].body.data == Data([1, 2, 3]))
    #expect(requests[1].headers.values(for: .contentType) == ["image/png"])
  }

  @Test("a missing body file is an invalidRequest error")
  func missingFile() async {
    let error = await courierError {
      try await stubClient(StubTransport()).send(
        Endpoint<Void>(.post, "upload").fileBody(
          URL(fileURLWithPath: "/nonexistent/file.bin"), contentType: "application/octet-stream"))
    }
    #expect(error?.kind == .invalidRequest)
  }

  /// Found by a caller-side probe: a directory as the body hung URLSession until its
  /// timeout; `/dev/zero` would never end.
  @Test("a directory, a device or a symlink to one as a body file is invalidRequest, not sent")
  func notARegularFile() async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-body-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let link = folder.appendingPathComponent("link")
    try FileManager.default.createSymbolicLink(
      at: link, withDestinationURL: URL(fileURLWithPath: "/dev/zero"))
    let regular = folder.appendingPathComponent("regular.bin")
    try Data([1, 2, 3]).write(to: regular)
    let linkToRegular = folder.appendingPathComponent("regular-link")
    try FileManager.default.createSymbolicLink(at: linkToRegular, withDestinationURL: regular)
    let stub = StubTransport(fallback: .status(204))
    for file in [folder, URL(fileURLWithPath: "/dev/zero"), link] {
      let error = await courierError {
        try await stubClient(stub).send(
          Endpoint<Void>(.post, "upload").fileBody(file, contentType: "application/octet-stream"))
      }
      #expect(error?.kind == .invalidRequest, "\(file.path)")
      #expect(error?.debugDescription.contains("is not a readable regular file") == true)
    }
    #expect(stub.requests.isEmpty)
    // A symlink to a regular file is a regular file.
    try await stubClient(stub).send(
      Endpoint<Void>(.post, "upload").fileBody(linkToRegular, contentType: "text/plain"))
    #expect(stub.requests.count == 1)
  }

  @Test("per-endpoint timeout and attributes reach the transport")
  func attributes() async throws {
    let stub = StubTransport(fallback: .status(204))
    try await stubClient(stub).send(
      Endpoint<Void>(.delete, "x").timeout(.milliseconds(1500))
        .attribute(TagsAttribute.self, ["critical"]))
    let sent = try #require(stub.requests.first)
    #expect(sent.timeout == .milliseconds(1500))
    #expect(sent.tags == ["critical"])
    #expect(sent.method == .delete)
  }
}
