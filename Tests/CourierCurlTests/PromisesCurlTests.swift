import Courier
import CourierTesting
import Foundation
import Testing

/// Promises of the Transports article (Sources/Courier/Courier.docc) about `CurlTransport` that no other test held (see `Docs/Promises.md`).
@Suite("Promises: CurlTransport", .timeLimit(.minutes(5)))
struct PromisesCurlTests {
  /// Sends a GET to a ``RawServer`` that answers `reply`, and returns the response.
  static func response(to reply: String) async throws -> Response {
    let server = try RawServer(reply: Data(reply.utf8))
    let transport = CurlTransport()
    defer { transport.shutdown() }
    let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/raw"))
    let response = try await Client(transport: transport).send(Request(url: url))
    server.finish()
    return response
  }

  @Test("a status line without a reason phrase is read (RFC 9112 allows it)")
  func statusLineWithoutReason() async throws {
    let response = try await Self.response(
      to: "HTTP/1.1 200\r\nContent-Length: 2\r\nX-Seen: yes\r\nConnection: close\r\n\r\nok")
    #expect(response.status == 200)
    #expect(response.bodyText == "ok")
    #expect(response.headers["X-Seen"] == "yes")
  }

  @Test("a head whose lines end in a bare LF is read (RFC 9112 §2.2 lets a recipient)")
  func bareLineFeeds() async throws {
    let response = try await Self.response(
      to: "HTTP/1.1 201 Created\nContent-Length: 2\nX-Seen: yes\nConnection: close\n\nok")
    #expect(response.status == 201)
    #expect(response.bodyText == "ok")
    #expect(response.headers["X-Seen"] == "yes")
  }

  @Test("CurlTransport.Configuration.standard: every default the documentation names")
  func configurationDefaults() {
    let standard = CurlTransport.Configuration.standard
    #expect(standard == CurlTransport.Configuration())
    #expect(standard.maximumConnectionsPerHost == 16)
    #expect(standard.eventLoops == CurlTransport.Configuration.defaultEventLoops)
    #expect(standard.contentDecoding == .none)
    #expect(standard.httpVersion == .http1)
    #expect(standard.tls == .system)
    #expect(standard.tls.caBundlePath == nil && standard.tls.pinnedPublicKey == nil)
    #expect(standard.startsTransfersOnCallingThread)
  }
}
