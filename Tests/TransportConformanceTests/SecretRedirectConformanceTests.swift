import Courier
import CourierTesting
import Foundation
import Testing

/// The wire half of issue #33's secret-travel matrix (the rest is `SecretTravelMatrixTests` in
/// `CourierCoreTests`): every secret a caller can hand Courier × a redirect to another origin
/// (what the second server receives) and a transport's own error, on every transport.
@Suite("Transport conformance: secrets never follow a redirect to another origin")
struct SecretRedirectConformanceTests {
  /// One secret, in one of the forms a caller can give it.
  enum Form: Sendable, CustomTestStringConvertible {
    case header(String)
    case credential(String)
    case userInfo
    case query(String)
    case json(String)
    case form(String)
    case multipart(String)

    var testDescription: String {
      switch self {
      case .header(let name): "header \(name)"
      case .credential(let name): "AuthMiddleware credential in \(name)"
      case .userInfo: "URL user info"
      case .query(let name): "query \(name)"
      case .json(let name): "JSON member \(name)"
      case .form(let name): "form field \(name)"
      case .multipart(let name): "multipart field \(name)"
      }
    }

    static let all: [Form] =
      Redaction.standard.headers.sorted().map { .header($0) }
      + ["X-API-Key", "X-Tenant-Credential", "Authorization"].map { .credential($0) }
      + [.userInfo]
      + ["token", "code", "api_key", "password"].map { .query($0) }
      + ["password", "client_secret"].map { .json($0) }
      + ["password", "token"].map { .form($0) }
      + ["password", "refresh_token"].map { .multipart($0) }

    var hasBody: Bool {
      switch self {
      case .json, .form, .multipart: true
      default: false
      }
    }
  }

  static let secret = "zq-W1RE-S3CR3T-qz"

  /// Hands out one credential.
  struct Provider: CredentialProvider {
    let credential: Credential
    func credential() async throws -> Credential? { credential }
    func refresh(rejected: Credential?) async throws -> Credential { credential }
  }

  static func middleware(_ form: Form) throws -> [any Middleware] {
    guard case .credential(let name) = form else { return [] }
    let credential = Credential(
      name == "Authorization" ? "Bearer \(secret)" : secret, header: try HTTPHeaders.Name(name))
    return [AuthMiddleware(provider: Provider(credential: credential))]
  }

  /// The request that carries the secret, to `url`.
  static func request(_ form: Form, to url: URL) throws -> Request {
    var request = Request(method: form.hasBody ? .post : .get, url: url)
    switch form {
    case .header(let name): try request.headers.set(name, "\(secret)")
    case .credential: break
    case .userInfo:
      var components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
      components.user = "li"
      components.password = secret
      request.url = try #require(components.url)
    case .query(let name):
      request.url = try #require(URL(string: url.absoluteString + "?\(name)=\(secret)&page=2"))
    case .json(let name):
      request.body = .data(Data(#"{"user":"li","\#(name)":"\#(secret)"}"#.utf8))
      try request.headers.set(.contentType, "application/json")
    case .form(let name):
      request.body = .data(Data("user=li&\(name)=\(secret)".utf8))
      try request.headers.set(.contentType, "application/x-www-form-urlencoded")
    case .multipart(let name):
      let encoded = try MultipartForm().field("user", "li").field(name, secret).encoded()
      request.body = encoded.body
      try request.headers.set(.contentType, encoded.contentType)
    }
    return request
  }

  /// Everything a server received, as text: request line, headers, body.
  static func text(of request: RecordedRequest) -> String {
    ([request.method + " " + request.target] + request.headers.map(\.description)
      + [String(decoding: request.body, as: UTF8.self)]).joined(separator: "\n")
  }

  @Test(
    "a redirect to another origin carries none of the request's secrets",
    .timeLimit(.minutes(5)), arguments: TransportKind.wire, Form.all)
  func otherOrigin(kind: TransportKind, form: Form) async throws {
    let fixture = try Fixture(kind, middleware: try Self.middleware(form))
    let other = try MockServer()
    defer {
      fixture.shutdown()
      other.shutdown()
    }
    let encodedUserInfo = Data("li:\(Self.secret)".utf8).base64EncodedString()
    // A body goes on only with the method (307, 308: see `bodyOnTemporaryRedirect`).
    let statuses = form.hasBody ? [301, 302, 303] : [301, 302, 303, 307, 308]
    for status in statuses {
      // An absolute Location, and a network-path one (`//host:port/…`).
      let target = other.url("/landing/\(status)").absoluteString
      let location = status % 2 == 0 ? target : String(target.drop { $0 != "/" })
      fixture.server.enqueue(MockResponse(status: status).addingHeader("Location", location))
      other.enqueue(.text("arrived"))
      let response = try await fixture.client.send(
        Self.request(form, to: fixture.server.url("/start/\(status)")))
      #expect(response.bodyText == "arrived", "\(status)")
      let first = Self.text(of: try await fixture.server.takeRequest())
      if case .userInfo = form {
      } else {
        #expect(first.contains(Self.secret), "the first origin got no secret: the cell is void")
      }
      let landed = try await other.takeRequest()
      #expect(landed.path == "/landing/\(status)")
      let received = Self.text(of: landed)
      #expect(!received.contains(Self.secret), "\(status): \(received)")
      #expect(!received.contains(encodedUserInfo), "\(status): \(received)")
    }
  }

  @Test(
    "307 and 308 to another origin send the body on, as asked; a custom policy can refuse",
    .timeLimit(.minutes(5)), arguments: TransportKind.wire)
  func bodyOnTemporaryRedirect(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    let other = try MockServer()
    defer {
      fixture.shutdown()
      other.shutdown()
    }
    fixture.server.enqueue(
      MockResponse(status: 307).addingHeader("Location", other.url("/moved").absoluteString))
    other.enqueue(.text("arrived"))
    var request = try Self.request(.json("password"), to: fixture.server.url("/login"))
    try request.headers.set(.authorization, "Bearer \(Self.secret)")
    _ = try await fixture.client.send(request)
    let moved = try await other.takeRequest()
    // The method and its body are the request the server redirected; the credential is not.
    #expect(moved.method == "POST")
    #expect(String(decoding: moved.body, as: UTF8.self).contains(Self.secret))
    #expect(moved.header("Authorization") == nil)

    fixture.server.enqueue(
      MockResponse(status: 308).addingHeader("Location", other.url("/moved").absoluteString))
    request.attributes[RedirectPolicyAttribute.self] = .custom { redirect in
      Redirect.sameOrigin(redirect.original.url, redirect.location) ? redirect.next : nil
    }
    let response = try await fixture.client.send(request)
    #expect(response.status == 308)
    #expect(other.requestCount == 1)
  }

  @Test(
    "a transport's own error shows no user info or query secret",
    .timeLimit(.minutes(5)), arguments: TransportKind.wire)
  func transportError(kind: TransportKind) async throws {
    let underTest = kind.make()
    defer { underTest.shutdown() }
    let refusing = try RefusingPort()
    let client = Client(transport: underTest.transport, locale: "en")
    let url = try #require(
      URL(
        string:
          "http://li:\(Self.secret)@127.0.0.1:\(refusing.port)/x?token=\(Self.secret)#code=\(Self.secret)"
      ))
    let error = await courierError { try await client.send(Request(url: url)) }
    #expect(error?.kind == .cannotConnect)
    let text = [
      error?.description, error?.debugDescription, error?.reason,
      error.map { String(reflecting: $0) },
    ].compactMap { $0 }.joined(separator: "\n")
    #expect(!text.contains(Self.secret), "\(text)")
    withExtendedLifetime(refusing) {}
  }
}
