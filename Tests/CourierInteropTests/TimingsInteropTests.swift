import Courier
import Foundation
import Testing

/// ``Response/Timings`` against nginx (see ``NginxInteropTests`` for the server and its
/// environment): every phase present and ordered over HTTP and TLS, and the reused connection
/// reported, on `CurlTransport`; on `URLSessionTransport` (plain HTTP: it cannot trust the
/// private CA on Linux) the head and the completion it measures itself.
@Suite(
  "Timings against nginx", .serialized, .timeLimit(.minutes(5)),
  .enabled(
    if: Nginx.plainURL != nil && Nginx.tlsURL != nil && TLSServer.caBundle != nil,
    """
    skipped: set COURIER_NGINX_URL, COURIER_NGINX_TLS_URL and COURIER_TLS_CA_BUNDLE (.ci/run \
    configures and starts nginx)
    """))
struct TimingsInteropTests {
  /// The phases present, in their order.
  static func phases(_ timings: Response.Timings) -> [Duration] {
    [
      timings.nameLookup, timings.connect, timings.tlsHandshake, timings.requestSent,
      timings.firstByte, timings.bodyComplete,
    ].compactMap { $0 }
  }

  /// Two requests to `/protocol` on one client; their responses' timings.
  static func twice(_ transport: any Transport, base: URL) async throws -> [Response.Timings] {
    let client = Client(baseURL: base, transport: transport)
    var timings: [Response.Timings] = []
    for _ in 0..<2 {
      let response = try await client.send(Request(url: base.appendingPathComponent("protocol")))
      #expect(response.status == 200)
      timings.append(response.timings)
    }
    return timings
  }

  /// `host:port` of `url`, as the timings name the remote address.
  static func address(_ url: URL) -> String { "\(url.host ?? ""):\(url.port ?? 0)" }

  @Test(
    "CurlTransport: every phase over HTTP/1.1 and over TLS (HTTP/1.1 and HTTP/2), in order",
    arguments: ["http", "tls", "tls-http2"])
  func curl(route: String) async throws {
    var configuration = CurlTransport.Configuration.standard
    let base = try #require(route == "http" ? Nginx.plainURL : Nginx.tlsURL)
    if route != "http" { configuration.tls = CurlTransport.TLS(caBundlePath: TLSServer.caBundle) }
    if route == "tls-http2" { configuration.httpVersion = .http2 }
    let transport = CurlTransport(configuration: configuration)
    defer { transport.shutdown() }
    let both = try await Self.twice(transport, base: base)
    let (fresh, reused) = (both[0], both[1])
    for timings in [fresh, reused] {
      #expect(Self.phases(timings) == Self.phases(timings).sorted(), "\(timings)")
      #expect(timings.nameLookup != nil)
      #expect(timings.connect != nil)
      #expect(timings.requestSent != nil)
      #expect(timings.firstByte != nil)
      #expect(timings.bodyComplete != nil)
      #expect((timings.tlsHandshake != nil) == (route != "http"))
      #expect(timings.remoteAddress == Self.address(base))
      #expect(timings.httpVersion == (route == "tls-http2" ? "HTTP/2" : "HTTP/1.1"))
    }
    #expect(fresh.connectionReused == false)
    #expect(reused.connectionReused == true)
    if route != "http" {
      // A fresh TLS connection's handshake takes time; a reused one has none.
      #expect((fresh.tlsHandshake ?? .zero) > (fresh.connect ?? .zero))
      #expect(reused.tlsHandshake == .zero)
    }
  }

  @Test("URLSessionTransport over HTTP: the head and the completion, in order")
  func urlSession() async throws {
    let transport = URLSessionTransport()
    defer { transport.shutdown() }
    for timings in try await Self.twice(transport, base: try #require(Nginx.plainURL)) {
      let firstByte = try #require(timings.firstByte)
      let complete = try #require(timings.bodyComplete)
      #expect(firstByte <= complete)
      #if canImport(FoundationNetworking)
        // What FoundationNetworking does not report (no task metrics).
        #expect(timings.connect == nil)
        #expect(timings.connectionReused == nil)
        #expect(timings.httpVersion == nil)
      #else
        #expect(timings.connect != nil)
        #expect(timings.httpVersion == "HTTP/1.1")
      #endif
    }
  }
}
