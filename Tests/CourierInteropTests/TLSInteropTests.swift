import Courier
import Foundation
import Testing

/// Courier over TLS against a real server nobody here wrote: httpbin behind gunicorn's own
/// TLS (Python's `ssl`, OpenSSL), with a certificate for `127.0.0.1` from a private CA that
/// `.ci/run` makes with the `openssl` command for each run.
///
/// `.ci/run` passes the server in `COURIER_HTTPBIN_TLS_URL`, the CA's PEM file in
/// `COURIER_TLS_CA_BUNDLE`, and the server key's pin (`sha256//` and the base64 SHA-256 of its
/// SubjectPublicKeyInfo) in `COURIER_TLS_PIN`; without them every test here is skipped with
/// that message. The plain httpbin of ``HTTPBinInteropTests`` (`COURIER_HTTPBIN_URL`) is the
/// target of the downgrade redirect.
@Suite(
  "Interop over TLS with httpbin", .serialized, .timeLimit(.minutes(5)),
  .enabled(
    if: TLSServer.baseURL != nil && TLSServer.caBundle != nil && TLSServer.pin != nil
      && HTTPBin.baseURL != nil,
    """
    skipped: set COURIER_HTTPBIN_TLS_URL, COURIER_TLS_CA_BUNDLE, COURIER_TLS_PIN and \
    COURIER_HTTPBIN_URL (.ci/run makes the CA and starts both servers)
    """))
struct TLSInteropTests {
  typealias Echo = HTTPBinInteropTests.Echo

  /// The server's URL with `host` in place of `127.0.0.1`.
  private func base(host: String = "127.0.0.1") throws -> URL {
    let url = try #require(TLSServer.baseURL)
    var components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
    components.host = host
    return try #require(components.url)
  }

  /// A plain client over a `CurlTransport` with `tls` (and `httpVersion`), and the transport
  /// to shut down.
  private func curlClient(
    _ tls: CurlTransport.TLS, httpVersion: CurlTransport.HTTPVersion = .http1,
    host: String = "127.0.0.1"
  ) throws -> (Client, CurlTransport) {
    var configuration = CurlTransport.Configuration.standard
    configuration.tls = tls
    configuration.httpVersion = httpVersion
    let transport = CurlTransport(configuration: configuration)
    return (Client(baseURL: try base(host: host), transport: transport, locale: "en"), transport)
  }

  private var trusted: CurlTransport.TLS {
    CurlTransport.TLS(caBundlePath: TLSServer.caBundle)
  }

  @Test("the private CA as the bundle: GET and a 1 MiB POST arrive whole over TLS")
  func trustedBundle() async throws {
    let (client, transport) = try curlClient(trusted)
    defer { transport.shutdown() }
    let echo = try await client.send(Endpoint<Echo>(.get, "get").query("q", "tls"))
    #expect(echo.url?.hasPrefix("https://127.0.0.1:") == true, "\(echo.url ?? "")")
    #expect(echo.args == ["q": "tls"])
    // Larger than OpenSSL's 16 KiB records and libcurl's upload buffer: many TLS writes.
    let text = String(repeating: "0123456789abcdef", count: 65_536)
    let posted = try await client.send(
      Endpoint<Echo>(.post, "anything").body(Data(text.utf8), contentType: "text/plain"))
    #expect(posted.data == text)
  }

  @Test("system trust refuses the private CA on both transports: secureConnectionFailed")
  func untrustedBySystem() async throws {
    let (curl, transport) = try curlClient(.system)
    defer { transport.shutdown() }
    let session = URLSessionTransport()
    defer { session.shutdown() }
    let overSession = Client(baseURL: try base(), transport: session, locale: "en")
    for client in [curl, overSession] {
      let error = await courierError { _ = try await client.send(Endpoint<Echo>(.get, "get")) }
      #expect(error?.kind == .secureConnectionFailed, "\(String(reflecting: error))")
      // libcurl's words are for developers; the reason is for people.
      let debug = String(reflecting: error)
      #expect(debug.contains("certificate"), "\(debug)")
      #expect(error?.reason.contains("SSL") == false, "\(error?.reason ?? "")")
      #expect(error?.reason.contains("certificate") == false, "\(error?.reason ?? "")")
    }
  }

  @Test("a certificate for 127.0.0.1 reached as localhost: secureConnectionFailed, host named")
  func otherHostName() async throws {
    let (client, transport) = try curlClient(trusted, host: "localhost")
    defer { transport.shutdown() }
    let error = await courierError { _ = try await client.send(Endpoint<Echo>(.get, "get")) }
    #expect(error?.kind == .secureConnectionFailed, "\(String(reflecting: error))")
    #expect(String(reflecting: error).contains("'localhost'"), "\(String(reflecting: error))")
  }

  @Test("the server's own key pinned passes; another key is secureConnectionFailed")
  func pinnedKey() async throws {
    let pin = try #require(TLSServer.pin)
    let (pinned, pinnedTransport) = try curlClient(
      CurlTransport.TLS(caBundlePath: TLSServer.caBundle, pinnedPublicKey: pin))
    defer { pinnedTransport.shutdown() }
    let echo = try await pinned.send(Endpoint<Echo>(.get, "get"))
    #expect(echo.url?.hasPrefix("https://") == true)

    let other = "sha256//" + Data(repeating: 7, count: 32).base64EncodedString()
    let (wrong, wrongTransport) = try curlClient(
      CurlTransport.TLS(caBundlePath: TLSServer.caBundle, pinnedPublicKey: other))
    defer { wrongTransport.shutdown() }
    let error = await courierError {
      _ = try await wrong.send(
        Endpoint<Echo>(.post, "anything").body(Data("secret".utf8), contentType: "text/plain"))
    }
    #expect(error?.kind == .secureConnectionFailed, "\(String(reflecting: error))")
    #expect(String(reflecting: error).contains("pinned"), "\(String(reflecting: error))")
  }

  @Test("the HTTP/2 opt-in talks HTTP/1.1 to a server whose ALPN offers only that")
  func http2FallsBack() async throws {
    let (client, transport) = try curlClient(trusted, httpVersion: .http2)
    defer { transport.shutdown() }
    let echo = try await client.send(Endpoint<Echo>(.get, "get"))
    #expect(echo.url?.hasPrefix("https://") == true)
  }

  @Test("a gzip body over TLS is decoded once by the preset over curl")
  func gzipOverTLS() async throws {
    var configuration = CurlTransport.Configuration.standard
    configuration.tls = trusted
    let transport = CurlTransport(configuration: configuration)
    defer { transport.shutdown() }
    let client = Client.standard(baseURL: try base(), transport: transport)
    let echo = try await client.send(Endpoint<Echo>(.get, "gzip"))
    #expect(echo.gzipped == true)
  }

  @Test(
    "an https redirect to http drops Authorization and Cookie; one on the same origin keeps them")
  func downgradeRedirect() async throws {
    let plain = try #require(HTTPBin.baseURL)
    let (client, transport) = try curlClient(trusted)
    defer { transport.shutdown() }
    let credentials = Endpoint<Echo>(.get, "redirect-to")
      .header("Authorization", "Bearer tls-only-token")
      .header("Cookie", "session=tls-only")
    let downgraded = try await client.send(
      credentials.query("url", plain.appendingPathComponent("headers").absoluteString))
    #expect(downgraded.headers?["Authorization"] == nil, "\(downgraded.headers ?? [:])")
    #expect(downgraded.headers?["Cookie"] == nil)
    #expect(downgraded.headers?["Host"] == plain.host.map { "\($0):\(plain.port ?? 80)" })

    let sameOrigin = try await client.send(credentials.query("url", "/headers"))
    #expect(sameOrigin.headers?["Authorization"] == "Bearer tls-only-token")
    #expect(sameOrigin.headers?["Cookie"] == "session=tls-only")
  }
}

/// The TLS server `.ci/run` starts, from the environment.
enum TLSServer {
  static let baseURL: URL? = ProcessInfo.processInfo.environment["COURIER_HTTPBIN_TLS_URL"]
    .flatMap { URL(string: $0.hasSuffix("/") ? $0 : $0 + "/") }
  static let caBundle: String? = ProcessInfo.processInfo.environment["COURIER_TLS_CA_BUNDLE"]
    .flatMap { $0.isEmpty ? nil : $0 }
  static let pin: String? = ProcessInfo.processInfo.environment["COURIER_TLS_PIN"]
    .flatMap { $0.isEmpty ? nil : $0 }
}
