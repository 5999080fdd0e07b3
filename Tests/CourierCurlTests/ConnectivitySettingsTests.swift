import Courier
import Foundation
import Testing

@testable import CourierCurl

/// CurlTransport's connectivity settings without a server: what their descriptions show
/// (never a key or a passphrase), which overrides are refused, and the words for a TLS alert
/// about the client certificate.
@Suite("CurlTransport connectivity settings")
struct ConnectivitySettingsTests {
  typealias ClientCertificate = CurlTransport.TLS.ClientCertificate
  typealias Override = CurlTransport.NameResolution.Override

  @Test("a client key and its passphrase are redacted from every description and dump")
  func redactsClientKey() {
    let passphrase = "hunter2-passphrase-\(UUID().uuidString)"
    let keyText =
      "-----BEGIN ENCRYPTED PRIVATE KEY-----\nS3CR3TKEYBYTES\n-----END ENCRYPTED PRIVATE KEY-----\n"
    let certificates = [
      ClientCertificate.pem(
        certificate: Data("-----BEGIN CERTIFICATE-----\n".utf8), key: Data(keyText.utf8),
        passphrase: passphrase),
      .files(
        certificate: "/etc/courier/client.pem", key: "/etc/courier/client.key",
        passphrase: passphrase),
    ]
    for certificate in certificates {
      var configuration = CurlTransport.Configuration.standard
      configuration.tls.clientCertificate = certificate
      let transport = CurlTransport(configuration: configuration)
      defer { transport.shutdown() }
      var dumped = ""
      dump(configuration, to: &dumped)
      var dumpedCertificate = ""
      dump(certificate, to: &dumpedCertificate)
      let texts = [
        "\(certificate)", String(reflecting: certificate), "\(configuration)",
        String(reflecting: configuration), "\(configuration.tls)", "\(transport)", dumped,
        dumpedCertificate, "\(Mirror(reflecting: certificate).children.map { $0.value })",
      ]
      for text in texts {
        #expect(!text.contains(passphrase), "\(text)")
        #expect(!text.contains("S3CR3TKEYBYTES"), "\(text)")
        #expect(!text.contains("PRIVATE KEY"), "\(text)")
      }
      #expect("\(certificate)".contains("passphrase: set (redacted)"))
    }
    #expect(
      "\(certificates[1])"
        == "ClientCertificate(certificate: file /etc/courier/client.pem, "
        + "key: file /etc/courier/client.key, passphrase: set (redacted))")
  }

  @Test("overrides become CURLOPT_RESOLVE lines; a bad one is refused with its reason")
  func overrideLines() throws {
    #expect(
      try Override(host: "api.internal.test", port: 443, addresses: ["10.0.0.7", "::1"])
        .resolveLine().get() == "api.internal.test:443:10.0.0.7,[::1]")
    #expect(
      try Override(host: "a.test", port: 80, addresses: ["[fd00::7]"]).resolveLine().get()
        == "a.test:80:[fd00::7]")
    let refused: [(Override, String)] = [
      (Override(host: "a.test", port: 80, addresses: ["a.test"]), "not an IPv4 or IPv6"),
      (Override(host: "a.test", port: 80, addresses: []), "no address"),
      (Override(host: "a.test", port: 0, addresses: ["127.0.0.1"]), "not in 1...65535"),
      (Override(host: "a:b", port: 80, addresses: ["127.0.0.1"]), "not a plain host name"),
      (Override(host: "", port: 80, addresses: ["127.0.0.1"]), "not a plain host name"),
    ]
    for (override, words) in refused {
      guard case .failure(let problem) = override.resolveLine() else {
        Issue.record("accepted \(override)")
        continue
      }
      #expect(problem.message.contains(words), "\(problem.message)")
    }
  }

  @Test("TLS alerts about the client certificate: secureConnectionFailed, in plain words")
  func clientCertificateAlerts() {
    let required =
      "OpenSSL SSL_read: OpenSSL/3.0.19: error:0A00045C:SSL routines::tlsv13 alert "
      + "certificate required, errno 0"
    let unknownCA = "OpenSSL/3.0.19: error:0A000418:SSL routines::tlsv1 alert unknown ca"
    #expect(CurlErrorMapping.kind(forCode: 56, detail: required) == .secureConnectionFailed)
    #expect(CurlErrorMapping.kind(forCode: 56, detail: unknownCA) == .secureConnectionFailed)
    #expect(CurlErrorMapping.kind(forCode: 35, detail: unknownCA) == .secureConnectionFailed)
    #expect(
      CurlErrorMapping.kind(forCode: 56, detail: "Recv failure: Connection reset by peer")
        == .connectionLost)
  }

  @Test("HTTP/2 with prior knowledge multiplexes and describes itself")
  func priorKnowledge() {
    #expect(CurlTransport.HTTPVersion.http2PriorKnowledge.multiplexes)
    #expect(!CurlTransport.HTTPVersion.http1.multiplexes)
    let transport = CurlTransport(
      configuration: .init(httpVersion: .http2PriorKnowledge, eventLoops: 2))
    defer { transport.shutdown() }
    #expect(transport.eventLoopCount == 1)
    #expect("\(transport)".hasPrefix("CurlTransport(HTTP/2 with prior knowledge;"))
  }
}

/// A proxy's password never appears in a description, a `dump` or a debugger's view; the
/// description says which proxy and that a password is set.
@Suite("Proxy settings")
struct ProxySettingsTests {
  @Test("descriptions and dumps never show a proxy's password")
  func passwordNeverPrinted() {
    let proxy = CurlTransport.Proxy(
      .http, host: "egress.internal", port: 3128, username: "svc", password: "hunter2-secret")
    var configuration = CurlTransport.Configuration.standard
    configuration.proxy = .through(proxy)
    let transport = CurlTransport(configuration: configuration)
    defer { transport.shutdown() }
    var dumped = ""
    dump(configuration, to: &dumped)
    for text in [
      "\(proxy)", String(reflecting: proxy), "\(configuration)", String(reflecting: configuration),
      "\(transport)", dumped,
    ] {
      #expect(!text.contains("hunter2"), "\(text)")
    }
    #expect("\(transport)".contains("http proxy egress.internal:3128 as svc (password set)"))
  }

  @Test("the environment's proxy leaves the description as it was; .direct says so")
  func descriptionsOfPolicies() {
    let plain = CurlTransport()
    defer { plain.shutdown() }
    #expect(!"\(plain)".contains("proxy"))
    var configuration = CurlTransport.Configuration.standard
    configuration.proxy = .direct
    let direct = CurlTransport(configuration: configuration)
    defer { direct.shutdown() }
    #expect("\(direct)".hasSuffix("; proxy: direct)"))
    #expect(
      CurlTransport.Proxy(.socks5RemoteDNS, host: "::1", port: 1080).description
        == "socks5h proxy [::1]:1080")
  }
}

/// Values libcurl cannot be given as they are: a NUL byte (libcurl reads a C string up to it)
/// and a Unix socket path no socket address holds. Each fails the request as the caller's
/// mistake before anything is sent, naming the setting and never showing its value.
@Suite("Settings libcurl cannot take", .timeLimit(.minutes(5)))
struct UnrepresentableSettingsTests {
  /// The error `configuration` gives a request to a port nobody listens on.
  private func failure(_ configuration: CurlTransport.Configuration) async -> CourierError? {
    let transport = CurlTransport(configuration: configuration)
    defer { transport.shutdown() }
    let client = Client(transport: transport)
    do {
      _ = try await client.send(Request(url: URL(string: "http://127.0.0.1:9/")!))
      return nil
    } catch {
      return error
    }
  }

  @Test("a NUL in a proxy's password or username: invalidRequest naming it, value hidden")
  func nulInProxyCredentials() async {
    for (username, password, named) in [
      ("svc", "hunter2\u{0}tail-secret", "the proxy's password"),
      ("svc\u{0}admin", "hunter2", "the proxy's username"),
    ] {
      var configuration = CurlTransport.Configuration.standard
      configuration.proxy = .through(
        CurlTransport.Proxy(
          .http, host: "127.0.0.1", port: 9, username: username, password: password))
      let error = await failure(configuration)
      #expect(error?.kind == .invalidRequest)
      #expect(error?.debugMessage.contains("\(named) holds a NUL byte") == true)
      #expect(error?.attempts == 1)
      let texts = ["\(String(describing: error))", String(reflecting: error as Any)]
      for text in texts {
        #expect(!text.contains("hunter2"), "\(text)")
        #expect(!text.contains("tail-secret"), "\(text)")
      }
    }
  }

  @Test("a Unix socket path that is empty, too long or holds a NUL: invalidRequest")
  func unrepresentableSocketPaths() async {
    for (path, expected) in [
      ("", "unixSocketPath is empty"),
      ("/tmp/" + String(repeating: "s", count: 103), "108 bytes long"),
      ("/tmp/a\u{0}b.sock", "unixSocketPath holds a NUL byte"),
    ] {
      var configuration = CurlTransport.Configuration.standard
      configuration.unixSocketPath = path
      let error = await failure(configuration)
      #expect(error?.kind == .invalidRequest, "\(path.utf8.count) bytes")
      #expect(error?.debugMessage.contains(expected) == true, "\(error?.debugMessage ?? "")")
    }
  }
}
