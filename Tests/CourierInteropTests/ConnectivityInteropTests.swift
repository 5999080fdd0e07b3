import Courier
import Foundation
import Testing

/// CurlTransport's connectivity settings against real servers `.ci/run` starts on loopback:
/// client certificates (nginx with `ssl_verify_client on`, and OpenSSL's `s_server`, which
/// ends the handshake instead of answering `400`), a Unix domain socket nginx listens on, name
/// overrides to nginx on `127.0.0.1` and `::1`, and HTTP/2 with prior knowledge (h2c).
///
/// The environment (see `.ci/run`): `COURIER_NGINX_MTLS_URL`, `COURIER_MTLS_STRICT_URL`,
/// `COURIER_MTLS_DIR` (the client CA's certificates and keys: `client.pem`, `client.key`,
/// `client-encrypted.key`, `other-client.pem`, `other-client.key`),
/// `COURIER_MTLS_PASSPHRASE`, `COURIER_NGINX_UNIX_SOCKET`, `COURIER_NGINX_H2C_URL`,
/// `COURIER_NGINX_URL`, `COURIER_NGINX_IPV6` (`1` when nginx listens on `[::1]` too, on the
/// same port) and `COURIER_TLS_CA_BUNDLE`.
/// Each suite is skipped, saying which variables it needs, when they are missing.
enum Connectivity {
  private static let environment = ProcessInfo.processInfo.environment

  private static func value(_ name: String) -> String? {
    environment[name].flatMap { $0.isEmpty ? nil : $0 }
  }

  private static func url(_ name: String) -> URL? {
    value(name).flatMap { URL(string: $0.hasSuffix("/") ? $0 : $0 + "/") }
  }

  static let mtlsURL = url("COURIER_NGINX_MTLS_URL")
  static let strictURL = url("COURIER_MTLS_STRICT_URL")
  static let mtlsDirectory = value("COURIER_MTLS_DIR")
  static let passphrase = value("COURIER_MTLS_PASSPHRASE")
  static let unixSocket = value("COURIER_NGINX_UNIX_SOCKET")
  static let h2cURL = url("COURIER_NGINX_H2C_URL")
  static let nginxURL = url("COURIER_NGINX_URL")
  static let caBundle = value("COURIER_TLS_CA_BUNDLE")
  /// nginx listens on `[::1]` too (`COURIER_NGINX_IPV6=1`, where the machine has IPv6
  /// loopback).
  static let ipv6 = value("COURIER_NGINX_IPV6") == "1"

  /// A file of ``mtlsDirectory``.
  static func file(_ name: String) throws -> String {
    try #require(mtlsDirectory) + "/" + name
  }

  /// nginx's `/where` answer: the protocol, the address it was reached on, the `Host` it got
  /// and the client certificate's subject.
  struct Where: Decodable, Sendable {
    let protocolName: String
    let address: String
    let host: String
    let client: String

    enum CodingKeys: String, CodingKey {
      case protocolName = "protocol"
      case address, host, client
    }
  }

  /// A transport with `change` applied to the standard configuration.
  static func transport(
    _ change: (inout CurlTransport.Configuration) -> Void
  ) -> CurlTransport {
    var configuration = CurlTransport.Configuration.standard
    change(&configuration)
    return CurlTransport(configuration: configuration)
  }
}

@Suite(
  "Connectivity: client certificates", .serialized, .timeLimit(.minutes(5)),
  .enabled(
    if: Connectivity.mtlsURL != nil && Connectivity.strictURL != nil
      && Connectivity.mtlsDirectory != nil && Connectivity.passphrase != nil
      && Connectivity.caBundle != nil,
    """
    skipped: set COURIER_NGINX_MTLS_URL, COURIER_MTLS_STRICT_URL, COURIER_MTLS_DIR, \
    COURIER_MTLS_PASSPHRASE and COURIER_TLS_CA_BUNDLE (.ci/run makes the certificates and \
    starts the servers)
    """))
struct ClientCertificateInteropTests {
  typealias Where = Connectivity.Where

  private func client(
    _ certificate: CurlTransport.TLS.ClientCertificate?, base: URL? = Connectivity.mtlsURL
  ) throws -> (Client, CurlTransport) {
    let transport = Connectivity.transport {
      $0.tls = CurlTransport.TLS(
        caBundlePath: Connectivity.caBundle, clientCertificate: certificate)
    }
    let url: URL = try #require(base)
    return (Client(baseURL: url, transport: transport, locale: "en"), transport)
  }

  @Test("the right certificate from files, its key plain or with a passphrase: 200")
  func fromFiles() async throws {
    let certificate = try Connectivity.file("client.pem")
    for identity in [
      CurlTransport.TLS.ClientCertificate.files(
        certificate: certificate, key: try Connectivity.file("client.key")),
      .files(
        certificate: certificate, key: try Connectivity.file("client-encrypted.key"),
        passphrase: Connectivity.passphrase),
    ] {
      let (client, transport) = try client(identity)
      defer { transport.shutdown() }
      let seen = try await client.send(Endpoint<Where>(.get, "where"))
      #expect(seen.client == "CN=courier-client", "\(identity)")
    }
  }

  @Test("the right certificate from memory, its key plain or with a passphrase: 200")
  func fromMemory() async throws {
    let certificate = try Data(contentsOf: URL(fileURLWithPath: Connectivity.file("client.pem")))
    for (keyFile, passphrase) in [
      ("client.key", nil), ("client-encrypted.key", Connectivity.passphrase),
    ] {
      let key = try Data(contentsOf: URL(fileURLWithPath: Connectivity.file(keyFile)))
      let identity = CurlTransport.TLS.ClientCertificate.pem(
        certificate: certificate, key: key, passphrase: passphrase)
      let (client, transport) = try client(identity)
      defer { transport.shutdown() }
      let seen = try await client.send(Endpoint<Where>(.get, "where"))
      #expect(seen.client == "CN=courier-client")
      #expect(!"\(identity)".contains("PRIVATE KEY"))
    }
  }

  @Test("nginx answers a missing or foreign certificate with its 400, not a TLS failure")
  func nginxAnswers400() async throws {
    for identity in [
      nil,
      CurlTransport.TLS.ClientCertificate.files(
        certificate: try Connectivity.file("other-client.pem"),
        key: try Connectivity.file("other-client.key")),
    ] {
      let (client, transport) = try client(identity)
      defer { transport.shutdown() }
      let error = await courierError { _ = try await client.send(Endpoint<Where>(.get, "where")) }
      #expect(error?.kind == .httpStatus, "\(String(reflecting: error))")
      #expect(error?.status == 400)
      let body = String(decoding: error?.response?.body ?? Data(), as: UTF8.self)
      #expect(body.contains("SSL certificate"), "\(body)")
    }
  }

  @Test("a server that requires a certificate and gets none: secureConnectionFailed, says so")
  func missingCertificate() async throws {
    let (client, transport) = try client(nil, base: Connectivity.strictURL)
    defer { transport.shutdown() }
    let error = await courierError { _ = try await client.send(Endpoint<Void>(.get, "")) }
    #expect(error?.kind == .secureConnectionFailed, "\(String(reflecting: error))")
    #expect(
      error?.debugMessage.contains("requires a client certificate, and none is configured")
        == true, "\(String(reflecting: error))")
  }

  @Test("a certificate from another CA is refused: secureConnectionFailed, says so")
  func foreignCertificate() async throws {
    let (client, transport) = try client(
      .files(
        certificate: try Connectivity.file("other-client.pem"),
        key: try Connectivity.file("other-client.key")),
      base: Connectivity.strictURL)
    defer { transport.shutdown() }
    let error = await courierError { _ = try await client.send(Endpoint<Void>(.get, "")) }
    #expect(error?.kind == .secureConnectionFailed, "\(String(reflecting: error))")
    #expect(
      error?.debugMessage.contains("the server refused the client certificate") == true,
      "\(String(reflecting: error))")
  }

  @Test("the strict server takes the right certificate: 200")
  func strictAccepts() async throws {
    let (client, transport) = try client(
      .files(
        certificate: try Connectivity.file("client.pem"),
        key: try Connectivity.file("client.key")),
      base: Connectivity.strictURL)
    defer { transport.shutdown() }
    let response = try await client.send(Endpoint<Data>(.get, ""))
    #expect(!response.isEmpty)
  }

  @Test("a wrong passphrase: secureConnectionFailed that says why, and never the passphrase")
  func wrongPassphrase() async throws {
    let wrong = "not-the-passphrase-\(UUID().uuidString)"
    let key = try Data(
      contentsOf: URL(fileURLWithPath: Connectivity.file("client-encrypted.key")))
    let certificate = try Data(contentsOf: URL(fileURLWithPath: Connectivity.file("client.pem")))
    for identity in [
      CurlTransport.TLS.ClientCertificate.files(
        certificate: try Connectivity.file("client.pem"),
        key: try Connectivity.file("client-encrypted.key"), passphrase: wrong),
      .pem(certificate: certificate, key: key, passphrase: wrong),
    ] {
      let (client, transport) = try client(identity)
      defer { transport.shutdown() }
      let error = await courierError { _ = try await client.send(Endpoint<Where>(.get, "where")) }
      #expect(error?.kind == .secureConnectionFailed, "\(String(reflecting: error))")
      let everything =
        "\(String(reflecting: error)) \(error?.reason ?? "") \(transport) "
        + "\(transport.configuration) \(String(reflecting: transport.configuration))"
      #expect(everything.contains("could not be used"), "\(everything)")
      #expect(!everything.contains(wrong), "\(everything)")
      #expect(!everything.contains("ENCRYPTED"), "\(everything)")
    }
  }
}

@Suite(
  "Connectivity: a Unix domain socket", .serialized, .timeLimit(.minutes(5)),
  .enabled(
    if: Connectivity.unixSocket != nil,
    "skipped: set COURIER_NGINX_UNIX_SOCKET (.ci/run has nginx listen on one)"))
struct UnixSocketInteropTests {
  typealias Where = Connectivity.Where

  private func client(socket: String?) throws -> (Client, CurlTransport) {
    let transport = Connectivity.transport { $0.unixSocketPath = socket }
    let base = try #require(URL(string: "http://courier.sock/"))
    return (Client(baseURL: base, transport: transport, locale: "en"), transport)
  }

  @Test("GET, a POST echoed through nginx, and an 8 MiB download, all over the socket")
  func getPostDownload() async throws {
    let socket = try #require(Connectivity.unixSocket)
    let (client, transport) = try client(socket: socket)
    defer { transport.shutdown() }
    let seen = try await client.send(Endpoint<Where>(.get, "where"))
    #expect(seen.address == "unix:" + socket)
    #expect(seen.host == "courier.sock")

    let text = String(repeating: "over a unix socket ", count: 4_000)
    let echo = try await client.send(
      Endpoint<HTTPBinInteropTests.Echo>(.post, "anything/unix")
        .body(Data(text.utf8), contentType: "text/plain"))
    #expect(echo.data == text)

    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("courier-unix-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("pattern.bin")
    let result = try await client.download(
      Endpoint<Void>(.get, "files/pattern.bin"), to: destination)
    #expect(result.byteCount == 8 << 20)
    let bytes = try Data(contentsOf: destination)
    let mismatch = bytes.enumerated().first { $0.element != UInt8($0.offset % 251) }
    #expect(mismatch == nil, "first wrong byte at \(mismatch?.offset ?? -1)")
    // Every request went over one kept-alive connection.
    #expect(transport.openedConnections == 1)
  }

  @Test("a socket path that does not exist: cannotConnect, the path in the debug description")
  func missingSocket() async throws {
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("courier-missing-\(UUID().uuidString).sock").path
    let (client, transport) = try client(socket: path)
    defer { transport.shutdown() }
    let error = await courierError { _ = try await client.send(Endpoint<Where>(.get, "where")) }
    #expect(error?.kind == .cannotConnect, "\(String(reflecting: error))")
    #expect(
      error?.debugMessage.contains("the Unix socket \(path) does not exist") == true,
      "\(String(reflecting: error))")
  }
}

@Suite(
  "Connectivity: name overrides and address families", .serialized, .timeLimit(.minutes(5)),
  .enabled(
    if: Connectivity.nginxURL != nil,
    "skipped: set COURIER_NGINX_URL (.ci/run has nginx listen on 127.0.0.1 and [::1])"))
struct NameResolutionInteropTests {
  typealias Where = Connectivity.Where
  typealias Override = CurlTransport.NameResolution.Override

  private var port: Int {
    get throws { try #require(Connectivity.nginxURL?.port) }
  }

  private func seen(
    _ resolution: CurlTransport.NameResolution
  ) async throws -> Where {
    let transport = Connectivity.transport { $0.nameResolution = resolution }
    defer { transport.shutdown() }
    let base = try #require(URL(string: "http://api.internal.test:\(try port)/"))
    return try await Client(baseURL: base, transport: transport, locale: "en")
      .send(Endpoint<Where>(.get, "where"))
  }

  @Test("a made-up host name reaches nginx on 127.0.0.1 and on ::1, Host kept")
  func overrides() async throws {
    let cases =
      [("127.0.0.1", "127.0.0.1")] + (Connectivity.ipv6 ? [("::1", "::1"), ("[::1]", "::1")] : [])
    for (address, expected) in cases {
      let seen = try await seen(
        .init(overrides: [Override(host: "api.internal.test", port: try port, addresses: [address])]
        )
      )
      #expect(seen.address == expected)
      #expect(seen.host == "api.internal.test")
    }
  }

  @Test(
    "a name with both families: .ipv4 connects over IPv4, .ipv6 over IPv6",
    .enabled(if: Connectivity.ipv6, "skipped: nginx has no [::1] listener (COURIER_NGINX_IPV6)"))
  func addressFamily() async throws {
    let both = [
      Override(host: "api.internal.test", port: try port, addresses: ["::1", "127.0.0.1"])
    ]
    let v4 = try await seen(.init(overrides: both, addressFamily: .ipv4))
    #expect(v4.address == "127.0.0.1")
    let reversed = [
      Override(host: "api.internal.test", port: try port, addresses: ["127.0.0.1", "::1"])
    ]
    let v6 = try await seen(.init(overrides: reversed, addressFamily: .ipv6))
    #expect(v6.address == "::1")
    let eyeballs = try await seen(.init(overrides: both, happyEyeballsDelay: .milliseconds(50)))
    #expect(["::1", "127.0.0.1"].contains(eyeballs.address))
  }

  @Test("an override that is not an address: invalidRequest, not a silent DNS lookup")
  func badOverride() async throws {
    let error = await courierError {
      _ = try await seen(
        .init(overrides: [
          Override(host: "api.internal.test", port: try port, addresses: ["not-an-address"])
        ]))
    }
    #expect(error?.kind == .invalidRequest, "\(String(reflecting: error))")
    #expect(error?.debugMessage.contains("not-an-address") == true)
  }
}

@Suite(
  "Connectivity: HTTP/2 with prior knowledge (h2c)", .serialized, .timeLimit(.minutes(5)),
  .enabled(
    if: Connectivity.h2cURL != nil,
    "skipped: set COURIER_NGINX_H2C_URL (.ci/run has nginx listen with http2 without ssl)"))
struct PriorKnowledgeInteropTests {
  @Test("requests over h2c are HTTP/2, one after another and at once, and a POST arrives")
  func h2c() async throws {
    let transport = Connectivity.transport { $0.httpVersion = .http2PriorKnowledge }
    defer { transport.shutdown() }
    let base: URL = try #require(Connectivity.h2cURL)
    let client = Client(baseURL: base, transport: transport)
    let seen = try await client.send(Endpoint<Connectivity.Where>(.get, "where"))
    #expect(seen.protocolName == "HTTP/2.0")
    try await withThrowingTaskGroup(of: String.self) { group in
      for _ in 0..<8 {
        group.addTask {
          try await client.send(Endpoint<Connectivity.Where>(.get, "where")).protocolName
        }
      }
      for try await name in group { #expect(name == "HTTP/2.0") }
    }
    // libcurl before 8.0 cannot send on an h2c connection another transfer made
    // (curl/curl#10634): a connection per request there.
    #expect([1, 9].contains(transport.openedConnections), "\(transport.openedConnections)")
    let text = String(repeating: "h2c ", count: 20_000)
    let echo = try await client.send(
      Endpoint<HTTPBinInteropTests.Echo>(.post, "anything/h2c")
        .body(Data(text.utf8), contentType: "text/plain"))
    #expect(echo.data == text)
  }
}
