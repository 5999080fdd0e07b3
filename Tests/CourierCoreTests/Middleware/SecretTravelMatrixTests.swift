import CourierCore
import CourierTesting
import Foundation
import Testing

/// One secret a caller (or a server, for `Location`) can hand Courier, in one of the forms it
/// can take. Each case carries its own value, found nowhere else.
struct SecretForm: Sendable, CustomTestStringConvertible {
  enum Kind: Sendable {
    /// A request header the endpoint sets, under a name ``Redaction`` lists.
    case header(String)
    /// The credential of `AuthMiddleware`, sent under this header name.
    case credential(String)
    /// The password of the URL's user info (`https://li:secret@host/`).
    case userInfo
    /// A query parameter of this name.
    case query(String)
    /// A JSON member of this name, nested in the body.
    case json(String)
    /// A URL-encoded form field of this name.
    case form(String)
    /// A multipart field of this name, beside a binary file part.
    case multipart(String)
    /// A server's `Location` carrying an authorization code, and its `Set-Cookie`.
    case location
    /// A fragment parameter (`#access_token=…`, as OAuth's implicit flow returns it).
    case fragment
  }

  let kind: Kind
  let index: Int

  /// The secret's text: unique to the case, and no substring of anything else sent.
  var secret: String { "zq\(index)-S3CR3T-\(index)qz" }

  var testDescription: String {
    switch kind {
    case .header(let name): "header \(name)"
    case .credential(let name): "AuthMiddleware credential in \(name)"
    case .userInfo: "URL user info"
    case .query(let name): "query \(name)"
    case .json(let name): "JSON member \(name)"
    case .form(let name): "form field \(name)"
    case .multipart(let name): "multipart field \(name)"
    case .location: "Location code"
    case .fragment: "fragment access_token"
    }
  }

  /// Every form: each header, query and body name ``Redaction/standard`` lists (some in
  /// another case), credential headers of any name, user info and a `Location`.
  static let all: [SecretForm] = {
    let standard = Redaction.standard
    var kinds: [Kind] = standard.headers.sorted().map { .header($0) }
    kinds += [.header("authorization"), .header("X-API-KEY")]
    kinds += ["Authorization", "X-API-Key", "X-Tenant-Credential", "Api-Token"].map {
      .credential($0)
    }
    kinds.append(.userInfo)
    kinds += standard.queryParameters.sorted().map { .query($0) } + [.query("Access_Token")]
    let bodyKeys = standard.bodyKeys.sorted()
    kinds += bodyKeys.map { .json($0) } + [.json("Password")]
    kinds += bodyKeys.map { .form($0) }
    kinds += bodyKeys.map { .multipart($0) }
    kinds += [.location, .fragment]
    return kinds.enumerated().map { SecretForm(kind: $1, index: $0) }
  }()

  /// The header value that carries the secret.
  func headerValue(_ name: String) -> String {
    switch name.lowercased() {
    case "authorization": "Bearer \(secret)"
    case "proxy-authorization": "Basic \(secret)"
    case "cookie", "set-cookie": "session=\(secret)"
    default: secret
    }
  }

  /// The endpoint that carries the secret (the credential, when it is one, is added by
  /// ``middleware``).
  var endpoint: Endpoint<Data> {
    let base = Endpoint<Data>(.post, "login").query("page", "2")
    switch kind {
    case .header(let name): return base.header(name, headerValue(name))
    case .credential, .location, .fragment: return base
    case .userInfo:
      return Endpoint<Data>(.get, "https://li:\(secret)@api.example.test/v1/me").query("page", "2")
    case .query(let name): return base.query(name, secret)
    case .json(let name):
      let json = #"{"user":"li","nested":[{"\#(name)":"\#(secret)","kept":1}]}"#
      return base.body(Data(json.utf8), contentType: "application/json")
    case .form(let name): return base.formBody([("user", "li"), (name, secret)])
    case .multipart(let name):
      return base.multipartBody(
        MultipartForm().field("user", "li").field(name, secret)
          .file("photo", data: Data([0xFF, 0xD8, 0x00]), filename: "p.jpg"))
    }
  }

  /// Whether a header list alone can tell the secret is one: anything but a credential
  /// `AuthMiddleware` sends under a name ``Redaction/standard`` does not list.
  var isKnownToHeaders: Bool {
    guard case .credential(let name) = kind else { return true }
    return Redaction.standard.hidesHeader(name)
  }

  /// Sends the request that carries the secret.
  func send(with client: Client) async throws {
    if case .fragment = kind {
      // An endpoint template takes no fragment: the request the endpoint builds (which
      // checks its response in the chain) gets one.
      var request = try client.request(for: Endpoint<Data>(.get, "cb"))
      request.url = try #require(
        URL(string: "https://api.example.test/v1/cb?page=2#access_token=\(secret)&state=1"))
      _ = try await client.send(request)
    } else {
      _ = try await client.send(endpoint)
    }
  }

  /// Hands out this case's credential.
  struct Provider: CredentialProvider {
    let credential: Credential
    func credential() async throws -> Credential? { credential }
    func refresh(rejected: Credential?) async throws -> Credential { credential }
  }

  /// `AuthMiddleware` with the credential, for a credential case.
  var middleware: [any Middleware] {
    guard case .credential(let name) = kind, let header = try? HTTPHeaders.Name(name) else {
      return []
    }
    return [
      AuthMiddleware(provider: Provider(credential: Credential(headerValue(name), header: header)))
    ]
  }

  /// Whether `request` carries the secret on its way to the transport: the cell is not
  /// vacuous.
  func isCarried(by request: Request) -> Bool {
    if case .location = kind { return true }
    let header = request.headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    let body = request.body.data.map { String(decoding: $0, as: UTF8.self) } ?? ""
    return (header + request.url.absoluteString + body).contains(secret)
  }

  /// The answer a server gives: `ok`, or for ``Kind/location`` a `302` to a URL that holds
  /// the secret, with a cookie that holds it too.
  func answer(status: Int = 200) -> StubResponse {
    guard case .location = kind else {
      return status == 200 ? .json(#"{"ok":true}"#) : .status(status)
    }
    var headers = HTTPHeaders()
    try? headers.add(.location, "https://app.example.test/callback?code=\(secret)&state=1")
    try? headers.add(.setCookie, "sid=\(secret); Path=/; HttpOnly")
    return StubResponse(status: 302, headers: headers)
  }
}

/// Where a secret could end up.
enum SecretSink: Sendable, CaseIterable, CustomTestStringConvertible {
  case logBasic, logHeaders, logBody
  case transportError, middlewareError, statusError
  case chainDescription
  case cassette, replayMismatch
  case requestDescription

  var testDescription: String {
    switch self {
    case .logBasic: "log at basic"
    case .logHeaders: "log at headers"
    case .logBody: "log at body"
    case .transportError: "a transport's error"
    case .middlewareError: "an error thrown mid-chain"
    case .statusError: "a status error with its response"
    case .chainDescription: "the chain description"
    case .cassette: "a cassette"
    case .replayMismatch: "a replay's no-match error"
    case .requestDescription: "the request's description"
    }
  }
}

/// A middleware inside the chain that throws, with the request (or what came back) attached.
struct ThrowingMiddleware: Middleware {
  enum Mode: CaseIterable {
    /// A ``CourierError`` with the request.
    case courier
    /// A caller's own error that keeps the request.
    case request
    /// A caller's own error that keeps the request's headers. (A header list knows the
    /// names ``Redaction/standard`` lists; which other name carries a credential only the
    /// request knows, in ``CredentialHeadersAttribute``: see ``SecretForm/isKnownToHeaders``.)
    case headers
    /// A caller's own error that keeps the response, after the transport answered.
    case response
  }

  struct Refusal: Error {
    let request: Request
  }

  struct HeaderRefusal: Error {
    let headers: HTTPHeaders
  }

  struct Rejection: Error {
    let response: Response
  }

  let mode: Mode

  func intercept(_ request: Request, next: Next) async throws -> Response {
    switch mode {
    case .courier:
      throw CourierError(
        kind: .middleware, debugMessage: "refused \(request.url.absoluteString)",
        request: request, stage: "test")
    case .request: throw Refusal(request: request)
    case .headers: throw HeaderRefusal(headers: request.headers)
    case .response: throw Rejection(response: try await next(request))
    }
  }
}

/// Issue #33's missing class of test: every secret a caller can hand Courier × every place it
/// can land. Each cell sends the secret through the public API and asserts that its text
/// appears nowhere in what the sink holds. The redirect sink runs over real sockets in
/// `TransportConformanceTests` (`SecretRedirectConformanceTests`), and cassettes of
/// compressed bodies in `CourierGzipTests` (`CassetteCodingTests`).
@Suite("Secret-travel matrix: secrets × logs, errors, descriptions, cassettes")
struct SecretTravelMatrixTests {
  /// Everything a failed request's error shows (its `debugMessage` is what the thrower wrote,
  /// kept as it is; `debugDescription` redacts the URLs in it).
  static func texts(of error: CourierError?) -> String {
    guard let error else { return "" }
    return [
      error.description, error.debugDescription, error.reason,
      error.localizedDescription, String(reflecting: error), "\(error)",
    ].joined(separator: "\n")
  }

  /// What `sink` holds after the secret was sent through it.
  static func exposure(of form: SecretForm, in sink: SecretSink) async throws -> String {
    switch sink {
    case .logBasic, .logHeaders, .logBody:
      let level: LoggingMiddleware.Level =
        sink == .logBasic ? .basic : sink == .logHeaders ? .headers : .body
      let logs = InMemoryLogSink()
      // The Location form's 302 must reach every sink as the answer: it is not followed.
      let stub = StubTransport(
        [form.answer(), form.answer(status: 503), .failure(.connectionLost)],
        redirectPolicy: .doNotFollow)
      let client = stubClient(
        stub, middleware: form.middleware + [LoggingMiddleware(level: level, sink: logs)])
      for _ in 0..<3 { _ = try? await form.send(with: client) }
      #expect(logs.events.count >= 3)
      #expect(stub.requests.allSatisfy(form.isCarried(by:)))
      return logs.text
    case .transportError:
      let client = stubClient(
        StubTransport(fallback: .failure(.cannotConnect)), middleware: form.middleware)
      let error = await courierError { try await form.send(with: client) }
      #expect(error?.kind == .cannotConnect)
      return texts(of: error)
    case .middlewareError:
      var text = ""
      for mode in ThrowingMiddleware.Mode.allCases where mode != .headers || form.isKnownToHeaders {
        let client = stubClient(
          StubTransport(fallback: form.answer(), redirectPolicy: .doNotFollow),
          middleware: form.middleware + [ThrowingMiddleware(mode: mode)])
        let error = await courierError { try await form.send(with: client) }
        #expect(error?.request != nil)
        text += texts(of: error)
      }
      return text
    case .statusError:
      let client = stubClient(
        StubTransport(fallback: form.answer(status: 500), redirectPolicy: .doNotFollow),
        middleware: form.middleware)
      let error = await courierError { try await form.send(with: client) }
      #expect(error?.response != nil)
      return texts(of: error)
    case .chainDescription:
      // The secret also goes into the client's own configuration where it can.
      var middleware = form.middleware
      var base = testBase
      switch form.kind {
      case .header(let name):
        middleware.append(
          HeadersMiddleware(defaults: try HTTPHeaders([(name, form.headerValue(name))])))
      case .userInfo, .query:
        base = try #require(
          URL(string: "https://li:\(form.secret)@api.example.test/v1/?token=\(form.secret)"))
      default: break
      }
      middleware.append(LoggingMiddleware(level: .body, sink: InMemoryLogSink()))
      let client = Client(
        baseURL: base,
        transport: StubTransport(fallback: form.answer(), redirectPolicy: .doNotFollow),
        middleware: middleware)
      _ = try? await form.send(with: client)
      return client.chainDescription + "\n\(client)\n" + String(reflecting: client)
    case .cassette:
      let file = FileManager.default.temporaryDirectory.appendingPathComponent(
        "courier-matrix-\(UUID().uuidString).json")
      defer { try? FileManager.default.removeItem(at: file) }
      let stub = StubTransport(
        [
          form.answer(),
          // A transport failure whose message names the URL, as a transport's may.
          .failure(
            .cannotConnect, "could not connect to \(testBase.absoluteString)?token=\(form.secret)"),
        ], redirectPolicy: .doNotFollow)
      let client = Client(
        baseURL: testBase, transport: RecordingTransport(wrapping: stub, cassette: file),
        middleware: form.middleware)
      for _ in 0..<2 { _ = try? await form.send(with: client) }
      let cassette = try Cassette(contentsOf: file)
      #expect(cassette.interactions.count == 2)
      // Base64 bodies are searched decoded.
      let decoded = cassette.interactions.flatMap { [$0.request.body, $0.response?.body] }
        .compactMap { $0?.base64.flatMap { Data(base64Encoded: $0) } }
        .map { String(decoding: $0, as: UTF8.self) }
      return ([try String(contentsOf: file, encoding: .utf8)] + decoded).joined(separator: "\n")
    case .replayMismatch:
      return await replayMismatch(form)
    case .requestDescription:
      let stub = StubTransport(fallback: form.answer(), redirectPolicy: .doNotFollow)
      _ = try? await form.send(with: stubClient(stub, middleware: form.middleware))
      let request = try #require(stub.requests.first)
      return "\(request)\n" + String(reflecting: request)
    }
  }

  /// A replay that finds no match for the request, comparing every header and the body.
  static func replayMismatch(_ form: SecretForm) async -> String {
    let recorded = Cassette.RecordedMessage(method: "GET", url: "https://api.example.test/v1/x")
    let headers = ["Authorization", "Cookie", "X-API-Key", "X-Tenant-Credential", "Api-Token"]
    let replay = ReplayTransport(
      cassette: Cassette(interactions: [Cassette.Interaction(request: recorded)]),
      matching: ReplayTransport.Matching(headers: headers, body: true))
    let client = Client(baseURL: testBase, transport: replay, middleware: form.middleware)
    let error = await courierError { try await form.send(with: client) }
    #expect(error?.kind == .transport)
    return texts(of: error)
  }

  @Test(
    "no secret reaches any sink", .timeLimit(.minutes(5)),
    arguments: SecretForm.all, SecretSink.allCases)
  func secretStaysHidden(form: SecretForm, sink: SecretSink) async throws {
    let exposed = try await Self.exposure(of: form, in: sink)
    #expect(!exposed.isEmpty)
    #expect(!exposed.contains(form.secret), "\(form.testDescription) in \(sink.testDescription)")
  }
}
