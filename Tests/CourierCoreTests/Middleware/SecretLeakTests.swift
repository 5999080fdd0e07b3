import CourierCore
import CourierTesting
import Foundation
import Testing

/// Issue #33, items 8, 9, 10 and 13: secrets that reached logs and cassettes through a URL in
/// a response header, a multipart field, a credential header of a name of one's own, and a
/// JSON body whose type did not say JSON.
@Suite(
  "Secret leaks: URL headers, multipart fields, credential headers, sniffed JSON",
  .timeLimit(.minutes(5)))
struct SecretLeakTests {
  static func temporaryFile() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-secret-leak-\(UUID().uuidString).json")
  }

  /// The cassette file's text, with every base64 body decoded and appended, so a secret in a
  /// binary body is found too.
  static func cassetteText(_ file: URL) throws -> String {
    let text = try String(contentsOf: file, encoding: .utf8)
    let cassette = try Cassette(contentsOf: file)
    let decoded = cassette.interactions.flatMap { [$0.request.body, $0.response?.body] }
      .compactMap { $0?.base64.flatMap { Data(base64Encoded: $0) } }
      .map { String(decoding: $0, as: UTF8.self) }
    return ([text] + decoded).joined(separator: "\n")
  }

  /// Item 8: a response that carries the secret in each URL-valued header.
  static func urlHeaders() throws -> HTTPHeaders {
    var headers = HTTPHeaders()
    try headers.add(.location, "https://app.example.test/callback?code=LOCATION-CODE&state=s1")
    try headers.add("Content-Location", "/v1/me?access_token=CONTENT-LOCATION-TOKEN")
    try headers.add("Refresh", "5; URL='/next?token=REFRESH-TOKEN&page=2'")
    try headers.add(
      "Link",
      #"<https://api.example.test/v1/items?api_key=LINK-KEY-1&page=2>; rel="next", "#
        + #"</v1/items?Password=LINK-PASSWORD-2>; rel="prev""#)
    try headers.add("X-Callback", "see https://u:USERINFO-PW@cb.example.test/x?sig=HEADER-SIG")
    return headers
  }

  static let urlHeaderSecrets = [
    "LOCATION-CODE", "CONTENT-LOCATION-TOKEN", "REFRESH-TOKEN", "LINK-KEY-1", "LINK-PASSWORD-2",
    "USERINFO-PW", "HEADER-SIG",
  ]

  @Test("item 8: URLs in response headers are logged with their query secrets hidden")
  func urlHeadersInLogs() async throws {
    let sink = InMemoryLogSink()
    let stub = StubTransport(
      fallback: StubResponse(status: 302, headers: try Self.urlHeaders()),
      redirectPolicy: .doNotFollow)
    let client = stubClient(stub, middleware: [LoggingMiddleware(level: .headers, sink: sink)])
    // The pipeline rejects the 302; the response is logged either way.
    _ = try? await client.send(Endpoint<Data>(.get, "login"))
    let text = sink.text
    for secret in Self.urlHeaderSecrets {
      #expect(!text.contains(secret), "\(secret) logged")
    }
    // What is not a secret stays readable.
    let headers = try #require(sink.events.last?.metadata["response_headers"])
    #expect(headers.contains("Location: https://app.example.test/callback?code=***&state=s1"))
    #expect(headers.contains("Refresh: 5; URL='/next?token=***&page=2'"))
    #expect(headers.contains(#"items?api_key=***&page=2>; rel="next", </v1/items?Password=***>"#))
  }

  @Test("item 8: URLs in response headers are recorded with their query secrets hidden")
  func urlHeadersInCassettes() async throws {
    let file = Self.temporaryFile()
    defer { try? FileManager.default.removeItem(at: file) }
    let stub = StubTransport(
      fallback: StubResponse(status: 302, headers: try Self.urlHeaders()),
      redirectPolicy: .doNotFollow)
    let recording = RecordingTransport(wrapping: stub, cassette: file)
    _ = try await recording.send(Request(url: testBase.appendingPathComponent("login")))
    let text = try Self.cassetteText(file)
    for secret in Self.urlHeaderSecrets {
      #expect(!text.contains(secret), "\(secret) recorded")
    }
    let headers = try #require(Cassette(contentsOf: file).interactions.first?.response?.headers)
    #expect(headers.contains(["Content-Location", "/v1/me?access_token=***"]))
  }

  @Test(
    "item 8: Redaction.header rewrites the URL-valued headers by the query rules",
    arguments: [
      ("Location", "/cb?code=X1&state=ok#token=X2", "/cb?code=***&state=ok#token=***"),
      ("location", "//h.test/p?Sig=X1", "//h.test/p?Sig=***"),
      ("Content-Location", "https://a:X1@h.test/p", "https://***@h.test/p"),
      ("Refresh", "0;url=/x?key=X1", "0;url=/x?key=***"),
      (
        "Refresh", #"3; URL = "https://h.test/?secret=X1""#,
        #"3; URL = "https://h.test/?secret=***""#
      ),
      ("Refresh", "10", "10"),
      (
        "Link", "</a?token=X1>; rel=next,</b?code=X2>;rel=prev",
        "</a?token=***>; rel=next,</b?code=***>;rel=prev"
      ),
      (
        "Link", #"<https://h.test/a>; rel="x"; anchor="/?token=X1""#,
        #"<https://h.test/a>; rel="x"; anchor="/?token=***""#
      ),
      (
        "Link", "<https://h.test/a>; rel=next; title='https://h.test/cb?code=X1'",
        "<https://h.test/a>; rel=next; title='https://h.test/cb?code=***'"
      ),
      (
        "Link", "<https://h.test/a>; rel=next; anchor=https://h.test/?token=X1, <b>",
        "<https://h.test/a>; rel=next; anchor=https://h.test/?token=***, <b>"
      ),
      ("Link", "https://h.test/?sig=X1", "https://h.test/?sig=***"),
      ("Referer", "https://h.test/p?password=X1&q=1", "https://h.test/p?password=***&q=1"),
      ("X-Anything", "go to https://h.test/?apikey=X1 now", "go to https://h.test/?apikey=*** now"),
    ])
  func urlHeaderRules(name: String, value: String, expected: String) throws {
    var headers = HTTPHeaders()
    try headers.add(name, value)
    let field = try #require(headers.first { _ in true })
    #expect(Redaction.standard.header(field) == expected)
    // Without listed names, only user info is hidden, as in `url(_:)`.
    #expect(Redaction.none.header(field) == (value.contains("@") ? expected : value))
  }

  /// Hands out one credential.
  struct FixedCredential: CredentialProvider {
    let credential: Credential
    func credential() async throws -> Credential? { credential }
    func refresh(rejected: Credential?) async throws -> Credential { credential }
  }

  @Test("item 10: a credential AuthMiddleware sends under a name of its own is hidden too")
  func customCredentialHeader() async throws {
    let header = try HTTPHeaders.Name("X-Tenant-Credential")
    let auth = AuthMiddleware(
      provider: FixedCredential(credential: Credential("TENANT-SECRET", header: header)))
    let sink = InMemoryLogSink()
    let file = Self.temporaryFile()
    defer { try? FileManager.default.removeItem(at: file) }
    let stub = StubTransport(fallback: .json("{}"))
    let client = Client(
      baseURL: testBase, transport: RecordingTransport(wrapping: stub, cassette: file),
      middleware: [auth, LoggingMiddleware(level: .headers, sink: sink)])
    _ = try await client.send(Endpoint<Data>(.get, "me"))
    #expect(stub.requests.first?.headers[header] == "TENANT-SECRET")
    #expect(stub.requests.first?.attributes[CredentialHeadersAttribute.self] == [header])
    #expect(!sink.text.contains("TENANT-SECRET"))
    #expect(
      sink.events.first?.metadata["request_headers"]?.contains("X-Tenant-Credential: ***") == true)
    #expect(!(try Self.cassetteText(file)).contains("TENANT-SECRET"))
    // A name the standard lists needs no mark (and costs no allocation).
    let standard = AuthMiddleware(provider: FixedCredential(credential: Credential(bearer: "t")))
    let plain = StubTransport(fallback: .json("{}"))
    _ = try await stubClient(plain, middleware: [standard]).send(Endpoint<Data>(.get, "me"))
    #expect(plain.requests.first?.attributes.contains(CredentialHeadersAttribute.self) == false)
  }

  /// Item 9: a multipart form with a listed field, a file part holding binary bytes (so the
  /// body is not UTF-8 and was written as base64), and a JSON part.
  static func multipartEndpoint() -> Endpoint<Data> {
    let form = MultipartForm(boundary: "courier-test-boundary")
      .field("user", "li")
      .field("password", "MULTIPART-PASSWORD-1")
      .field("Client_Secret", "MULTIPART-SECRET-2")
      .file(
        "avatar", data: Data([0xFF, 0xD8, 0x00, 0x01]) + Data("keep".utf8), filename: "a.jpg",
        contentType: "image/jpeg"
      )
      .file(
        "settings", data: Data(#"{"theme":"dark","token":"MULTIPART-JSON-3"}"#.utf8),
        filename: "s.json", contentType: "application/json")
    return Endpoint<Data>(.post, "upload").multipartBody(form)
  }

  @Test("item 9: multipart fields are recorded with listed names hidden, file bytes kept")
  func multipartInCassettes() async throws {
    let file = Self.temporaryFile()
    defer { try? FileManager.default.removeItem(at: file) }
    let recording = RecordingTransport(
      wrapping: StubTransport(fallback: .status(204)), cassette: file)
    let client = Client(baseURL: testBase, transport: recording)
    _ = try await client.send(Self.multipartEndpoint())
    let text = try Self.cassetteText(file)
    for secret in ["MULTIPART-PASSWORD-1", "MULTIPART-SECRET-2", "MULTIPART-JSON-3"] {
      #expect(!text.contains(secret), "\(secret) recorded")
    }
    let body = try #require(Cassette(contentsOf: file).interactions.first?.request.body?.data)
    let recorded = String(decoding: body, as: UTF8.self)
    #expect(recorded.contains("name=\"password\"\r\n\r\n***\r\n--courier-test-boundary"))
    #expect(recorded.contains("name=\"user\"\r\n\r\nli\r\n"))
    #expect(recorded.contains(#"{"theme":"dark","token":"***"}"#))
    // The file's bytes are kept as they were, binary included.
    #expect(body.range(of: Data([0xFF, 0xD8, 0x00, 0x01]) + Data("keep".utf8)) != nil)
  }

  @Test("item 9: a multipart response body is logged with listed fields hidden")
  func multipartResponseInLogs() async throws {
    let sink = InMemoryLogSink()
    var headers = HTTPHeaders()
    try headers.add(.contentType, "multipart/form-data; boundary=\"b1\"")
    let body =
      "--b1\r\nContent-Disposition: form-data; name=\"token\"\r\n\r\nMULTIPART-RESPONSE-4\r\n"
      + "--b1\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n--b1--\r\n"
    let client = stubClient(
      StubTransport(fallback: StubResponse(status: 200, headers: headers, body: Data(body.utf8))),
      middleware: [LoggingMiddleware(level: .body, sink: sink)])
    _ = try await client.send(Endpoint<Data>(.get, "parts"))
    #expect(!sink.text.contains("MULTIPART-RESPONSE-4"))
    #expect(sink.events.last?.metadata["response_body"]?.contains("hello") == true)
  }

  @Test(
    "item 13: JSON after white space or a BOM is redacted whatever the type says",
    arguments: [
      ("text/plain", " {\"password\":\"SECRETI\"}"),
      ("text/plain", "\n{\"password\":\"SECRETI\"}"),
      (nil, "\r\n\t [{\"password\":\"SECRETI\"}]"),
      ("text/plain; charset=utf-8", "\u{FEFF}{\"password\":\"SECRETI\"}"),
      ("application/octet-stream", "  {\"password\":\"SECRETI\"}"),
    ] as [(String?, String)])
  func sniffedJSON(contentType: String?, body: String) async throws {
    let sink = InMemoryLogSink()
    var headers = HTTPHeaders()
    if let contentType { try headers.add(.contentType, contentType) }
    let client = stubClient(
      StubTransport(fallback: StubResponse(status: 200, headers: headers, body: Data(body.utf8))),
      middleware: [LoggingMiddleware(level: .body, sink: sink)])
    _ = try await client.send(Endpoint<Data>(.get, "me"))
    #expect(!sink.text.contains("SECRETI"))
    #expect(sink.events.last?.metadata["response_body"]?.contains("password") == true)

    let file = Self.temporaryFile()
    defer { try? FileManager.default.removeItem(at: file) }
    let recording = RecordingTransport(
      wrapping: StubTransport(
        fallback: StubResponse(status: 200, headers: headers, body: Data(body.utf8))),
      cassette: file)
    _ = try await recording.send(Request(url: testBase))
    #expect(!(try Self.cassetteText(file)).contains("SECRETI"))
  }

  @Test(
    "a body whose type names another shape is redacted by its own shape too",
    arguments: [
      ("application/json", "password=MISTYPED-1&user=li"),
      ("application/json; charset=utf-8", "user=li&client_secret=MISTYPED-2"),
      ("application/x-www-form-urlencoded", #"{"user":"li","password":"MISTYPED-3"}"#),
      ("application/x-www-form-urlencoded", #" [{"token":"MISTYPED-4"}]"#),
      ("multipart/form-data; boundary=b0", #"{"password":"MISTYPED-5"}"#),
      ("multipart/form-data; boundary=b0", "token=MISTYPED-6&page=2"),
    ])
  func mistypedBody(contentType: String, body: String) async throws {
    let secret = try #require(body.firstRange(of: "MISTYPED-").map { body[$0.lowerBound...] })
      .prefix(while: { $0 != "\"" && $0 != "&" })
    var headers = HTTPHeaders()
    try headers.add(.contentType, contentType)
    let answer = StubResponse(status: 200, headers: headers, body: Data(body.utf8))
    // A response body in the log.
    let sink = InMemoryLogSink()
    let client = stubClient(
      StubTransport(fallback: answer), middleware: [LoggingMiddleware(level: .body, sink: sink)])
    _ = try await client.send(Endpoint<Data>(.get, "me"))
    #expect(!sink.text.contains(secret), "\(secret) logged")
    // A request body and a response body in a cassette.
    let file = Self.temporaryFile()
    defer { try? FileManager.default.removeItem(at: file) }
    let recording = RecordingTransport(wrapping: StubTransport(fallback: answer), cassette: file)
    var request = Request(method: .post, url: testBase)
    try request.headers.set(.contentType, contentType)
    request.body = .data(Data(body.utf8))
    _ = try await recording.send(request)
    let text = try Self.cassetteText(file)
    #expect(!text.contains(secret), "\(secret) recorded")
    #expect(text.contains("***"))
  }

  @Test(
    "a multipart body is split on the boundary it opens with when its type has none or another",
    arguments: ["multipart/form-data; boundary=other", "multipart/form-data", nil] as [String?])
  func multipartWithoutItsBoundary(contentType: String?) async throws {
    let body =
      Data("--b7\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\nSPLIT-1\r\n".utf8)
      + Data("--b7\r\nContent-Disposition: form-data; name=\"f\"; filename=\"p.bin\"\r\n\r\n".utf8)
      + Data([0xFF, 0xD8, 0x00, 0x0D, 0x0A]) + Data("--b7--\r\n".utf8)
    var headers = HTTPHeaders()
    if let contentType { try headers.add(.contentType, contentType) }
    let answer = StubResponse(status: 200, headers: headers, body: body)
    let file = Self.temporaryFile()
    defer { try? FileManager.default.removeItem(at: file) }
    let recording = RecordingTransport(wrapping: StubTransport(fallback: answer), cassette: file)
    var request = Request(method: .post, url: testBase, body: .data(body))
    if let contentType { try request.headers.set(.contentType, contentType) }
    _ = try await recording.send(request)
    let text = try Self.cassetteText(file)
    #expect(!text.contains("SPLIT-1"))
    #expect(text.contains("***"))
    // Text with such a first line is redacted in logs too.
    let textBody =
      "--b7\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\nSPLIT-1\r\n--b7--\r\n"
    #expect(
      Redaction.standard.redactedBody(textBody, contentType: contentType)?.contains("SPLIT-1")
        == false)
  }

  @Test("a form, query or multipart name that nests fields hides a listed part's value")
  func bracketedNames() async throws {
    let endpoints: [(String, Endpoint<Data>)] = [
      ("NESTED-1", Endpoint(.post, "a").formBody([("user[password]", "NESTED-1"), ("x", "1")])),
      ("NESTED-2", Endpoint(.post, "a").formBody([("cards[0][token]", "NESTED-2")])),
      ("NESTED-3", Endpoint(.post, "a").formBody([("password[]", "NESTED-3")])),
      ("NESTED-4", Endpoint(.get, "a").query("auth[access_token]", "NESTED-4")),
      (
        "NESTED-5",
        Endpoint(.post, "a").multipartBody(MultipartForm().field("u[secret]", "NESTED-5"))
      ),
    ]
    for (secret, endpoint) in endpoints {
      let sink = InMemoryLogSink()
      let file = Self.temporaryFile()
      defer { try? FileManager.default.removeItem(at: file) }
      let recording = RecordingTransport(
        wrapping: StubTransport(fallback: .json("{}")), cassette: file)
      let client = Client(
        baseURL: testBase, transport: recording,
        middleware: [LoggingMiddleware(level: .body, sink: sink)])
      _ = try await client.send(endpoint)
      #expect(!sink.text.contains(secret), "\(secret) logged")
      let text = try Self.cassetteText(file)
      #expect(!text.contains(secret), "\(secret) recorded")
      #expect(text.contains("***"))
    }
    // A name that only contains a listed one is not it.
    let kept = Redaction.standard.redactedBody("passwords_hint=kept", contentType: nil)
    #expect(kept == "passwords_hint=kept")
  }

  @Test("item 13: text that is neither JSON nor a form is logged as its size only")
  func unstructuredText() async throws {
    let sink = InMemoryLogSink()
    var headers = HTTPHeaders()
    try headers.add(.contentType, "text/plain")
    let client = stubClient(
      StubTransport([
        StubResponse(status: 200, headers: headers, body: Data("password: SECRET-TEXT".utf8)),
        StubResponse(status: 200, headers: headers, body: Data("sk_live_RAWTOKEN".utf8)),
        StubResponse(status: 200, headers: headers, body: Data(" {not json, SECRET-SNIFF".utf8)),
      ]),
      middleware: [LoggingMiddleware(level: .body, sink: sink)])
    for _ in 0..<3 { _ = try await client.send(Endpoint<Data>(.get, "me")) }
    for secret in ["SECRET-TEXT", "RAWTOKEN", "SECRET-SNIFF"] {
      #expect(!sink.text.contains(secret), "\(secret) logged")
    }
    #expect(
      sink.events.compactMap { $0.metadata["response_body"] } == [
        "<21 bytes text/plain, not logged: not JSON, a form or multipart>",
        "<16 bytes text/plain, not logged: not JSON, a form or multipart>",
        "<24 bytes text/plain, not logged: not JSON, a form or multipart>",
      ])
  }

  @Test("a request's description hides fragment values as it hides query values")
  func fragmentInDescription() throws {
    let url = try #require(
      URL(string: "https://li:pw@h.test/cb?code=1#access_token=FRAGMENT-TOKEN&state=s&top"))
    let request = Request(url: url)
    #expect("\(request)" == "GET https://***:***@h.test/cb?code=***#access_token=***&state=***&top")
    #expect(String(reflecting: request) == "\(request)")
  }

  /// A caller's own error that keeps the headers it refused.
  struct HeaderRefusal: Error {
    let headers: HTTPHeaders
  }

  @Test("headers print credentials hidden, inside an error's description too")
  func headersDescription() async throws {
    var headers = HTTPHeaders()
    try headers.add(.authorization, "Bearer HEADER-TOKEN-1")
    try headers.add(.setCookie, "sid=HEADER-COOKIE-2; Path=/")
    try headers.add(.location, "/cb?code=HEADER-CODE-3")
    try headers.add(.accept, "application/json")
    #expect(
      "\(headers)" == "Authorization: ***\nSet-Cookie: ***\nLocation: /cb?code=***\n"
        + "Accept: application/json")
    let error = CourierError(
      kind: .middleware, debugMessage: "refused", underlying: HeaderRefusal(headers: headers))
    for text in [error.debugDescription, String(reflecting: error)] {
      for secret in ["HEADER-TOKEN-1", "HEADER-COOKIE-2", "HEADER-CODE-3"] {
        #expect(!text.contains(secret), "\(secret) in \(text)")
      }
    }
  }

  @Test("a recorded transport failure's message has the URLs in it redacted")
  func recordedErrorMessage() async throws {
    let file = Self.temporaryFile()
    defer { try? FileManager.default.removeItem(at: file) }
    let message = "could not reach https://li:USERINFO-4@h.test/x?token=FAILURE-TOKEN-5&page=2"
    let recording = RecordingTransport(
      wrapping: StubTransport(fallback: .failure(.cannotConnect, message)), cassette: file)
    _ = await courierError { try await recording.send(Request(url: testBase)) }
    let recorded = try #require(Cassette(contentsOf: file).interactions.first?.error)
    #expect(recorded.kind == "cannotConnect")
    #expect(recorded.message == "could not reach https://***@h.test/x?token=***&page=***")
  }
}
