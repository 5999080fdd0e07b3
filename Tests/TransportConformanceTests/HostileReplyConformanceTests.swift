import Courier
import CourierTesting
import Foundation
import Testing

/// Replies found by a hostile test server (a raw socket server answering each path with one
/// broken reply) from a separate package, as a new user would meet them: each one either
/// hung a request until its timeout, crashed the process, or came back with the wrong kind.
@Suite("Transport conformance: hostile replies", .timeLimit(.minutes(5)))
struct HostileReplyConformanceTests {
  @Test(
    "101 Switching Protocols is badResponse at once, not a body read until the close",
    arguments: TransportKind.wire)
  func switchingProtocols(kind: TransportKind) async throws {
    // Both transports read what follows a 101 as a body until the connection closes; a
    // WebSocket server keeps it open, so the request waited for its timeout and failed as
    // timedOut. (Not timed here: a full parallel run starves the pool for tens of seconds.)
    let fixture = try Fixture(
      kind, middleware: [TimeoutMiddleware(attempt: .seconds(20), overall: nil)])
    defer { fixture.shutdown() }
    fixture.server.enqueue(
      MockResponse(
        status: 101,
        headers: [
          MockHeader(name: "Upgrade", value: "websocket"),
          MockHeader(name: "Connection", value: "Upgrade"),
        ]))
    let error = await courierError { try await fixture.client.send(Endpoint<Data>(.get, "ws")) }
    #expect(error?.kind == .badResponse)
    #expect(error?.debugDescription.contains("101 Switching Protocols") == true)
  }

  @Test("CurlTransport: a head cut off before its blank line is connectionLost, not a 200")
  func headCutOffCurl() async throws {
    // libcurl 7.88 reports a reply that ends after the status line (or any header line) as a
    // success; the response had no head.
    let fixture = try Fixture(.curl)
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(body: Data("{}".utf8), fault: .closeBeforeHeadEnds))
    fixture.server.enqueue(
      MockResponse(
        headers: [MockHeader(name: "X-One", value: "1")], body: Data("{}".utf8),
        fault: .closeBeforeHeadEnds))
    for path in ["status-line", "header-line"] {
      let error = await courierError { try await fixture.client.send(Endpoint<Data>(.get, path)) }
      #expect(error?.kind == .connectionLost, "\(path)")
      #expect(error?.debugDescription.contains("before the response head ended") == true)
    }
  }

  #if canImport(FoundationNetworking)
    @Test(
      "URLSessionTransport: a head cut off before its blank line still stops the process (FoundationNetworking)"
    )
    func headCutOffURLSession() async {
      // A limit of URLSession on Linux that no delegate can catch: libcurl reports the reply
      // as a success, and FoundationNetworking then finds no response and calls fatalError
      // ("Transfer completed, but there's no response."). The Transports article says to use
      // CurlTransport against servers you do not control. When this expectation fails,
      // Foundation has fixed it: update the Transports article.
      _ = await withTaskExecutorPreference(OwnThreadExecutor.shared) {
        await #expect(processExitsWith: .failure) {
          guard let server = try? MockServer() else { exit(EXIT_SUCCESS) }
          server.enqueue(MockResponse(body: Data("{}".utf8), fault: .closeBeforeHeadEnds))
          let client = Client(baseURL: server.baseURL, transport: URLSessionTransport())
          _ = try? await client.send(Endpoint<Data>(.get, "status-line"))
          exit(EXIT_SUCCESS)
        }
      }
    }
  #endif

  @Test(
    "a status line that is not HTTP after a kept-alive connection was reset is badResponse, not invalidRequest",
    arguments: TransportKind.wire)
  func malformedStatusLineAfterReset(kind: TransportKind) async throws {
    // libcurl sends the second request again on a new connection after the reset, and keeps
    // the first message of the transfer ("Recv failure: Connection reset by peer"), so the
    // bad status line's "unsupported protocol" came without the words that tell it apart
    // from a bad URL.
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    fixture.server.enqueue(.json(#"{"ok":true}"#))
    fixture.server.enqueue(MockResponse(fault: .resetWithoutResponse))
    fixture.server.enqueue(MockResponse(body: Data("{}".utf8), fault: .malformedStatusLine))
    _ = try await fixture.client.send(Endpoint<Data>(.get, "first"))
    let error = await courierError { try await fixture.client.send(Endpoint<Data>(.get, "next")) }
    #expect(error?.kind == .badResponse)
    #expect(fixture.server.requestCount == 3, "the reset request was sent again")
  }

  @Test(
    "a server's 5 MB message is clipped in debugDescription, and its reason stays short",
    arguments: TransportKind.wire)
  func hugeServerMessage(kind: TransportKind) async throws {
    let fixture = try Fixture(kind, pipeline: .envelope(.codeZero))
    defer { fixture.shutdown() }
    let message = String(repeating: "x", count: 5 * 1024 * 1024)
    fixture.server.enqueue(.json(#"{"code":1001,"msg":"\#(message)"}"#))
    let error = await courierError { try await fixture.client.send(Endpoint<Data>(.get, "x")) }
    #expect(error?.kind == .business)
    #expect(error?.serverMessage?.count == message.count, "the message itself is kept")
    #expect((error?.reason.count ?? .max) <= 120)
    let debug = error?.debugDescription ?? ""
    #expect(debug.count < 2_000, "\(debug.count) characters")
    #expect(debug.contains("(5242880 bytes in all)"))
  }
}
