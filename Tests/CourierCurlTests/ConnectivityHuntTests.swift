import Courier
import CourierLibcurlSupport
import CourierTesting
import Foundation
import Testing

@testable import CourierCurl

/// Connectivity settings against loopback servers: where a proxy URL's password may show,
/// which proxy hosts and name-resolution overrides are refused before anything is sent, and
/// where a request goes when an override cannot be used.
@Suite("CurlTransport connectivity, review of #39", .timeLimit(.minutes(5)))
struct ConnectivityHuntTests {
  typealias Override = CurlTransport.NameResolution.Override

  @Test("a proxy string libcurl refuses keeps its password out, with or without a scheme")
  func refusedProxyStringsAreRedacted() {
    // libcurl 7.88's own words (`http_proxy=… curl …`) for proxy strings it cannot parse.
    let details = [
      "Unsupported proxy syntax in 'courier:hunter2@127.0.0.1:99999'",
      "Unsupported proxy syntax in 'courier:hunter2@[::1'",
      "Unsupported proxy syntax in 'http://courier:hun ter2@127.0.0.1:99999'",
      "Unsupported proxy syntax in 'http://courier:hun'ter2@127.0.0.1:99999'",
      "Unsupported proxy syntax in 'http://courier:hun\"ter2@127.0.0.1:99999'",
      "Unsupported proxy syntax in 'courier:hun://ter2@127.0.0.1:99999'",
    ]
    for detail in details {
      let redacted = LibcurlDetail.redactingCredentials(detail)
      #expect(!redacted.contains("hun"), "\(redacted)")
      #expect(!redacted.contains("ter2"), "\(redacted)")
      #expect(redacted.contains("courier:<redacted>@"), "\(redacted)")
    }
    // A URL with a scheme keeps being redacted as before.
    #expect(
      LibcurlDetail.redactingCredentials(
        "Unsupported proxy scheme for 'foo://courier:hunter2@127.0.0.1:1'")
        == "Unsupported proxy scheme for 'foo://courier:<redacted>@127.0.0.1:1'")
  }

  @Test(
    "a proxy host libcurl's URL parser refuses: invalidRequest before anything is sent",
    arguments: [
      "proxy,internal", "proxy+internal", "prox*y.internal", "proxy;internal", "proxy'internal",
      "proxy=internal", "proxy!internal", "[127.0.0.1]", "[proxy.internal]",
    ])
  func refusedProxyHost(host: String) async throws {
    let origin = try MockServer()
    defer { origin.shutdown() }
    var configuration = CurlTransport.Configuration.standard
    configuration.proxy = .through(CurlTransport.Proxy(.http, host: host, port: origin.port))
    let transport = CurlTransport(configuration: configuration)
    defer { transport.shutdown() }
    let error = await #expect(throws: CourierError.self) {
      _ = try await Client(baseURL: origin.baseURL, transport: transport, locale: "en")
        .send(Endpoint<Void>(.get, "never"))
    }
    #expect(error?.kind == .invalidRequest, "\(String(describing: error?.debugDescription))")
    #expect(origin.requestCount == 0)
  }

  @Test("an override with no address of the address family never falls back to DNS")
  func overrideOutsideTheAddressFamily() async throws {
    // `localhost` is 127.0.0.1 in the hosts file, where the server listens; the override
    // says ::1, where it does not. libcurl drops a cached entry without an address of the
    // family asked for ("doesn't have needed family, zapped") and asks DNS instead.
    let server = try MockServer()
    defer { server.shutdown() }
    server.setDispatcher { _ in .text("reached through DNS") }
    var configuration = CurlTransport.Configuration.standard
    configuration.proxy = .direct
    configuration.nameResolution = CurlTransport.NameResolution(
      overrides: [Override(host: "localhost", port: server.port, addresses: ["::1"])],
      addressFamily: .ipv4)
    let transport = CurlTransport(configuration: configuration)
    defer { transport.shutdown() }
    let url = try #require(URL(string: "http://localhost:\(server.port)/"))
    let error = await #expect(throws: CourierError.self) {
      _ = try await Client(baseURL: url, transport: transport, locale: "en")
        .send(Endpoint<String>(.get, "x"))
    }
    #expect(error?.kind == .invalidRequest, "\(String(describing: error?.debugDescription))")
    #expect(server.requestCount == 0)
  }

  @Test("an override address with a NUL byte is refused, not cut short")
  func overrideAddressWithNUL() {
    for address in ["127.0.0.1\u{0}junk", "::1\u{0},10.0.0.1"] {
      let line = Override(host: "a.test", port: 80, addresses: [address]).resolveLine()
      guard case .failure = line else {
        Issue.record("accepted \(address.debugDescription) as \(line)")
        continue
      }
    }
  }
}
