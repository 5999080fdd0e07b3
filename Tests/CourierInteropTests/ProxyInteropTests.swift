import Courier
import CourierTesting
import Foundation
import Testing

/// `CurlTransport` through proxies nobody here wrote, started by `.ci/run`: tinyproxy (an HTTP
/// proxy, one open and one asking for a user name and password) and microsocks (SOCKS5, one
/// open and one with credentials), in front of the nginx of ``NginxInteropTests``. Each proxy's
/// log proves the path a request took.
///
/// `.ci/run` passes `COURIER_PROXY_HTTP`, `COURIER_PROXY_HTTP_AUTH`, `COURIER_PROXY_SOCKS` and
/// `COURIER_PROXY_SOCKS_AUTH` (each `host:port`), their logs in the same names with `_LOG`,
/// and the password of the two with credentials (user `courier`) in `COURIER_PROXY_PASSWORD`.
@Suite(
  "Interop through proxies", .serialized, .timeLimit(.minutes(5)),
  .enabled(
    if: Proxies.http != nil && Proxies.socks != nil && Nginx.plainURL != nil
      && Nginx.tlsURL != nil && TLSServer.caBundle != nil,
    """
    skipped: set COURIER_PROXY_HTTP, COURIER_PROXY_HTTP_AUTH, COURIER_PROXY_SOCKS, \
    COURIER_PROXY_SOCKS_AUTH (with _LOG), COURIER_PROXY_PASSWORD and nginx's variables \
    (.ci/run starts tinyproxy, microsocks and nginx)
    """))
struct ProxyInteropTests {
  /// A transport through `proxy`, trusting the private CA.
  private static func transport(_ proxy: CurlTransport.Proxy) -> CurlTransport {
    var configuration = CurlTransport.Configuration.standard
    configuration.proxy = .through(proxy)
    configuration.tls = .init(caBundlePath: TLSServer.caBundle)
    return CurlTransport(configuration: configuration)
  }

  /// `name`'s proxy as a ``CurlTransport/Proxy`` of `kind`.
  private static func proxy(
    _ kind: CurlTransport.Proxy.Kind, _ address: String?, password: String? = nil,
    bypass: [String] = []
  ) throws -> CurlTransport.Proxy {
    let address = try #require(address)
    let parts = address.split(separator: ":")
    return CurlTransport.Proxy(
      kind, host: String(parts[0]), port: try #require(Int(parts[1])),
      username: password == nil ? nil : "courier", password: password, bypass: bypass)
  }

  /// A value no other request carries, to find in a proxy's log.
  private static func probe() -> String { UUID().uuidString }

  /// nginx's `/protocol`, with `probe` in its query.
  private static func seen(_ probe: String) -> Endpoint<NginxInteropTests.Seen> {
    Endpoint<NginxInteropTests.Seen>(.get, "protocol").query("probe", probe)
  }

  @Test("an http URL through an HTTP proxy: sent to the proxy whole, answered by nginx")
  func httpThroughHTTPProxy() async throws {
    let transport = Self.transport(try Self.proxy(.http, Proxies.http))
    defer { transport.shutdown() }
    let probe = Self.probe()
    let client = Client(baseURL: Nginx.plainURL, transport: transport)
    let seen = try await client.send(Self.seen(probe))
    #expect(seen.protocolName == "HTTP/1.1")
    #expect(try Proxies.log(Proxies.httpLog).contains(probe))
  }

  @Test("an https URL through an HTTP proxy with credentials: a CONNECT tunnel, then TLS")
  func httpsThroughConnectWithCredentials() async throws {
    let transport = Self.transport(
      try Self.proxy(.http, Proxies.httpAuth, password: Proxies.password))
    defer { transport.shutdown() }
    let tls = try #require(Nginx.tlsURL)
    let client = Client(baseURL: tls, transport: transport)
    let seen = try await client.send(Endpoint<NginxInteropTests.Seen>(.get, "protocol"))
    #expect(seen.protocolName == "HTTP/1.1")
    let port = try #require(tls.port)
    #expect(try Proxies.log(Proxies.httpAuthLog).contains("CONNECT 127.0.0.1:\(port)"))
  }

  @Test("credentials the HTTP proxy refuses: proxyAuthenticationFailed for a tunnel, 407 without")
  func refusedHTTPProxyCredentials() async throws {
    let wrong = Self.transport(try Self.proxy(.http, Proxies.httpAuth, password: "not-it"))
    defer { wrong.shutdown() }
    let tunnel = await #expect(throws: CourierError.self) {
      _ = try await Client(baseURL: Nginx.tlsURL, transport: wrong, locale: "en")
        .send(Endpoint<Void>(.get, "protocol"))
    }
    #expect(tunnel?.kind == .proxyAuthenticationFailed)
    #expect(tunnel?.reason.contains("proxy") == true)
    #expect(tunnel.map { !"\($0)".contains("not-it") } == true)
    // No credentials: tinyproxy answers an http request 407 itself (to wrong ones it answers
    // 401, a quirk of its own).
    let none = Self.transport(try Self.proxy(.http, Proxies.httpAuth))
    defer { none.shutdown() }
    let plain = await #expect(throws: CourierError.self) {
      _ = try await Client(baseURL: Nginx.plainURL, transport: none, locale: "en")
        .send(Endpoint<Void>(.get, "protocol"))
    }
    #expect(plain?.status == 407)
    #expect(plain?.reason.contains("proxy") == true)
  }

  @Test(
    "SOCKS5 with credentials; names resolved here or by the proxy",
    arguments: [CurlTransport.Proxy.Kind.socks5, .socks5RemoteDNS])
  func throughSOCKS(_ kind: CurlTransport.Proxy.Kind) async throws {
    let transport = Self.transport(
      try Self.proxy(kind, Proxies.socksAuth, password: Proxies.password))
    defer { transport.shutdown() }
    let plain = try #require(Nginx.plainURL)
    let port = try #require(plain.port)
    // `localhost`: the SOCKS5 proxy's log names it when the proxy resolved it.
    let url = try #require(URL(string: "http://localhost:\(port)/"))
    let seen = try await Client(baseURL: url, transport: transport)
      .send(Endpoint<NginxInteropTests.Seen>(.get, "protocol"))
    #expect(seen.protocolName == "HTTP/1.1")
    let log = try Proxies.log(Proxies.socksAuthLog)
    let target = kind == .socks5RemoteDNS ? "localhost:\(port)" : "127.0.0.1:\(port)"
    #expect(log.contains("connected to \(target)"), "\(log.suffix(300))")
  }

  @Test("credentials the SOCKS5 proxy refuses: proxyAuthenticationFailed, without the password")
  func refusedSOCKSCredentials() async throws {
    let transport = Self.transport(try Self.proxy(.socks5, Proxies.socksAuth, password: "nope"))
    defer { transport.shutdown() }
    let error = await #expect(throws: CourierError.self) {
      _ = try await Client(baseURL: Nginx.plainURL, transport: transport)
        .send(Endpoint<Void>(.get, "protocol"))
    }
    #expect(error?.kind == .proxyAuthenticationFailed)
    #expect(
      error.map { !"\($0)".contains("nope") && !$0.debugDescription.contains("nope") } == true)
  }

  @Test("a host in the bypass list is reached directly; the proxy never sees it")
  func bypassList() async throws {
    let transport = Self.transport(
      try Self.proxy(.http, Proxies.http, bypass: ["localhost", "127.0.0.0/8"]))
    defer { transport.shutdown() }
    let probe = Self.probe()
    let client = Client(baseURL: Nginx.plainURL, transport: transport)
    _ = try await client.send(Self.seen(probe))
    #expect(try !Proxies.log(Proxies.httpLog).contains(probe))
  }

  @Test(
    "the environment's proxy is followed by default on both transports, NO_PROXY too; .direct ignores it"
  )
  func environmentPolicy() async throws {
    // In a child process: libcurl reads the variables for every request, so setting them here
    // would send the requests of the suites running beside this one through the proxy.
    _ = await withTaskExecutorPreference(OwnThreadExecutor.shared) {
      await #expect(processExitsWith: .success) {
        try await ProxyInteropTests.environmentScenario()
      }
    }
  }

  static func environmentScenario() async throws {
    let address = try #require(Proxies.http)
    unsetenv("NO_PROXY")
    unsetenv("no_proxy")
    setenv("http_proxy", "http://\(address)", 1)
    let base = try #require(Nginx.plainURL)
    let followed = Self.probe()
    let transport = CurlTransport()
    defer { transport.shutdown() }
    _ = try await Client(baseURL: base, transport: transport)
      .send(Self.seen(followed))
    #expect(try Proxies.log(Proxies.httpLog).contains(followed))
    var configuration = CurlTransport.Configuration.standard
    configuration.proxy = .direct
    let direct = CurlTransport(configuration: configuration)
    defer { direct.shutdown() }
    let ignored = Self.probe()
    _ = try await Client(baseURL: base, transport: direct)
      .send(Self.seen(ignored))
    #expect(try !Proxies.log(Proxies.httpLog).contains(ignored))
    // URLSessionTransport follows the same variables (libcurl inside FoundationNetworking).
    let session = URLSessionTransport()
    defer { session.shutdown() }
    let throughSession = Self.probe()
    _ = try await Client(baseURL: base, transport: session).send(Self.seen(throughSession))
    #expect(try Proxies.log(Proxies.httpLog).contains(throughSession))
    setenv("NO_PROXY", "127.0.0.1", 1)
    let bypassed = Self.probe()
    _ = try await Client(baseURL: base, transport: transport)
      .send(Self.seen(bypassed))
    #expect(try !Proxies.log(Proxies.httpLog).contains(bypassed))
    let bypassedBySession = Self.probe()
    _ = try await Client(baseURL: base, transport: session).send(Self.seen(bypassedBySession))
    #expect(try !Proxies.log(Proxies.httpLog).contains(bypassedBySession))
  }
}

/// The proxies `.ci/run` starts, from the environment.
enum Proxies {
  static let http = variable("COURIER_PROXY_HTTP")
  static let httpAuth = variable("COURIER_PROXY_HTTP_AUTH")
  static let socks = variable("COURIER_PROXY_SOCKS")
  static let socksAuth = variable("COURIER_PROXY_SOCKS_AUTH")
  static let password = variable("COURIER_PROXY_PASSWORD")
  static let httpLog = variable("COURIER_PROXY_HTTP_LOG")
  static let httpAuthLog = variable("COURIER_PROXY_HTTP_AUTH_LOG")
  static let socksAuthLog = variable("COURIER_PROXY_SOCKS_AUTH_LOG")

  /// The text of the log at `path`.
  static func log(_ path: String?) throws -> String {
    try String(contentsOfFile: try #require(path), encoding: .utf8)
  }

  private static func variable(_ name: String) -> String? {
    ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
  }
}
