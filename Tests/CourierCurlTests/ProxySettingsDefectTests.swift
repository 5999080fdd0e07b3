import Courier
import CourierTesting
import Foundation
import Testing

@testable import CourierCurl

/// Proxy settings against real loopback servers (``MockServer`` stands in for an HTTP proxy:
/// it records the absolute-form requests a proxy gets): what the bypass list covers, which
/// settings (and name-resolution overrides) are refused before anything is sent, and what an
/// error may say.
@Suite("CurlTransport proxy settings, against loopback servers", .timeLimit(.minutes(5)))
struct ProxySettingsDefectTests {
  /// A transport through `proxy`.
  private static func transport(_ proxy: CurlTransport.Proxy) -> CurlTransport {
    var configuration = CurlTransport.Configuration.standard
    configuration.proxy = .through(proxy)
    return CurlTransport(configuration: configuration)
  }

  @Test("`*` in a bypass list with other entries bypasses every host, as documented")
  func starAmongOtherBypassEntries() async throws {
    let proxy = try MockServer()
    let origin = try MockServer()
    defer {
      proxy.shutdown()
      origin.shutdown()
    }
    origin.enqueue(.text("direct"))
    let transport = Self.transport(
      CurlTransport.Proxy(
        .http, host: "127.0.0.1", port: proxy.port, bypass: ["example.invalid", "*"]))
    defer { transport.shutdown() }
    let client = Client(baseURL: origin.baseURL, transport: transport, locale: "en")
    _ = try? await client.send(Endpoint<Void>(.get, "bypassed"))
    #expect(proxy.requestCount == 0)
    #expect(origin.requestCount == 1)
  }

  @Test(
    "a proxy with no host, a port outside 1...65535 or a host that is not one: invalidRequest",
    arguments: [
      ("127.0.0.1", 0), ("127.0.0.1", -1), ("127.0.0.1", 70_000), ("", 3128),
      ("courier:hunter2@127.0.0.1", 3128), ("127.0.0.1/x", 3128), ("127.0.0.1\0evil", 3128),
      ("proxy internal", 3128),
    ])
  func refusedProxyAddress(host: String, port: Int) async throws {
    let origin = try MockServer()
    defer { origin.shutdown() }
    let transport = Self.transport(CurlTransport.Proxy(.http, host: host, port: port))
    defer { transport.shutdown() }
    let error = await #expect(throws: CourierError.self) {
      _ = try await Client(baseURL: origin.baseURL, transport: transport, locale: "en")
        .send(Endpoint<Void>(.get, "never"))
    }
    #expect(error?.kind == .invalidRequest, "\(String(describing: error?.debugDescription))")
    #expect(error.map { !$0.debugDescription.contains("hunter2") } == true)
    #expect(error.map { !"\($0)".contains("hunter2") } == true)
    #expect(origin.requestCount == 0)
    var dumped = ""
    dump(transport, to: &dumped)
    let proxy = CurlTransport.Proxy(.http, host: host, port: port)
    dump(proxy, to: &dumped)
    for text in ["\(transport)", "\(proxy)", String(reflecting: proxy), dumped] {
      #expect(!text.contains("hunter2"), "\(text)")
    }
  }

  @Test("proxy credentials go to the proxy, never to a server a redirect leads to directly")
  func credentialsStayWithTheProxy() async throws {
    let proxy = try MockServer()
    let origin = try MockServer()
    defer {
      proxy.shutdown()
      origin.shutdown()
    }
    // The proxy answers for `localhost` with a redirect to 127.0.0.1, which is bypassed.
    proxy.enqueue(
      MockResponse(
        status: 302,
        headers: [MockHeader(name: "Location", value: origin.url("/next").absoluteString)]))
    origin.enqueue(.text("direct"))
    let transport = Self.transport(
      CurlTransport.Proxy(
        .http, host: "127.0.0.1", port: proxy.port, username: "courier", password: "hunter2",
        bypass: ["127.0.0.1"]))
    defer { transport.shutdown() }
    let start = try #require(URL(string: "http://localhost:\(origin.port)/"))
    let text = try await Client(baseURL: start, transport: transport, locale: "en")
      .send(Endpoint<String>(.get, "first"))
    #expect(text == "direct")
    let proxied = try await proxy.takeRequest()
    #expect(proxied.header("proxy-authorization")?.hasPrefix("Basic ") == true)
    let direct = try await origin.takeRequest()
    #expect(direct.path == "/next")
    #expect(direct.header("proxy-authorization") == nil)
    #expect(direct.header("authorization") == nil)
  }

  @Test("an override whose host starts with + or - is refused, not read as libcurl's flag")
  func overrideHostPrefixes() async throws {
    let origin = try MockServer()
    defer { origin.shutdown() }
    origin.setDispatcher { _ in .text("reached") }
    for host in ["+courier-prefix.test", "-courier-prefix.test"] {
      #expect(throws: (any Error).self, "\(host)") {
        try CurlTransport.NameResolution.Override(
          host: host, port: origin.port, addresses: ["127.0.0.1"]
        ).resolveLine().get()
      }
    }
    // `+name` is libcurl's prefix for an entry that times out: the override named another
    // host than the one it then answered for.
    var configuration = CurlTransport.Configuration.standard
    configuration.proxy = .direct
    configuration.nameResolution.overrides = [
      .init(host: "+courier-prefix.test", port: origin.port, addresses: ["127.0.0.1"])
    ]
    let transport = CurlTransport(configuration: configuration)
    defer { transport.shutdown() }
    let url = try #require(URL(string: "http://courier-prefix.test:\(origin.port)/"))
    let error = await #expect(throws: CourierError.self) {
      _ = try await Client(baseURL: url, transport: transport, locale: "en")
        .send(Endpoint<String>(.get, "x"))
    }
    #expect(error?.kind == .invalidRequest)
    #expect(origin.requestCount == 0)
  }

  @Test("the password of a proxy URL in the environment never reaches an error")
  func environmentProxyPasswordStaysOut() async {
    // In a child process: libcurl reads the variables for every request, so setting them here
    // would send the requests of the suites running beside this one through the proxy.
    _ = await withTaskExecutorPreference(OwnThreadExecutor.shared) {
      await #expect(processExitsWith: .success) {
        try await ProxySettingsDefectTests.environmentPasswordScenario()
      }
    }
  }

  /// Proxy URLs libcurl refuses, whose text its error message repeats: with a scheme, and
  /// without one as curl also takes them (`user:password@host:port`).
  static func environmentPasswordScenario() async throws {
    let secret = "hunter2-\(UUID().uuidString)"
    let values = [
      "foo://courier:\(secret)@127.0.0.1:1", "http://courier:\(secret)@127.0.0.1:99999",
      "http://courier:\(secret)@[::1", "courier:\(secret)@127.0.0.1:99999",
      "courier:\(secret)@[::1",
    ]
    for value in values {
      setenv("http_proxy", value, 1)
      let transport = CurlTransport()
      defer { transport.shutdown() }
      let url = try #require(URL(string: "http://127.0.0.1:9/"))
      do {
        _ = try await Client(baseURL: url, transport: transport, locale: "en")
          .send(Endpoint<Void>(.get, "never"))
        Issue.record("no error")
      } catch {
        var dumped = ""
        dump(error, to: &dumped)
        for text in ["\(error)", error.debugDescription, dumped] {
          try #require(!text.contains(secret), "\(text)")
        }
        try #require(
          error.debugDescription.contains("courier:<redacted>@"), "\(error.debugDescription)")
      }
    }
  }
}
