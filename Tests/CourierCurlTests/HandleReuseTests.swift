import Courier
import CourierTesting
import Foundation
import Testing

/// What a transfer sets on its easy handle must never reach the next transfer on the same
/// kept handle (the loop keeps spare handles last in, first out, so sequential requests of
/// one transport run on one handle), and the response head must arrive as the peer sent it.
@Suite(.timeLimit(.minutes(5)))
struct HandleReuseTests {
  @Test("a request's timeout does not reach the next request on the same handle, nor back")
  func timeoutStaysWithItsRequest() async throws {
    let fixture = try CurlFixture()
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(status: 204))
    var first = Request(url: fixture.server.url("quick"))
    first.timeout = .milliseconds(300)
    _ = try await fixture.transport.send(first)
    // No timeout of its own: answered after twice the first one's, and still answered.
    fixture.server.enqueue(MockResponse(body: Data("late".utf8), delay: .milliseconds(700)))
    let second = try await fixture.transport.send(Request(url: fixture.server.url("slow")))
    #expect(second.bodyText == "late")
    // And a timeout set again after a request without one still fires.
    fixture.server.enqueue(MockResponse(fault: .hang))
    var third = Request(url: fixture.server.url("hang"))
    third.timeout = .milliseconds(200)
    let error = await courierError { try await fixture.transport.send(third) }
    #expect(error?.kind == .timedOut)
  }

  @Test("HEAD, DELETE, POST, upload progress and a download leave nothing to the next GET")
  func optionsStayWithTheirRequest() async throws {
    let fixture = try CurlFixture()
    defer { fixture.shutdown() }
    fixture.server.setDispatcher { _ in .text("abc") }
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("hunt35-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }

    func plainGET() async throws {
      let response = try await fixture.client.send(Endpoint<Data>(.get, "plain"))
      let recorded = try await fixture.server.takeRequest()
      #expect(recorded.method == "GET")
      #expect(recorded.body.isEmpty)
      #expect(recorded.header("Content-Type") == nil)
      #expect(response == Data("abc".utf8))
    }

    _ = try await fixture.client.send(Endpoint<Void>(.head, "head"))
    _ = try await fixture.server.takeRequest()
    try await plainGET()
    _ = try await fixture.client.send(Endpoint<Data>(.delete, "delete"))
    _ = try await fixture.server.takeRequest()
    try await plainGET()
    _ = try await fixture.client.send(
      Endpoint<Data>(.put, "put").body(Data("body".utf8), contentType: "text/plain"))
    _ = try await fixture.server.takeRequest()
    try await plainGET()
    let progress = TransferProgress(minimumInterval: .zero)
    _ = try await fixture.client.send(
      Endpoint<Data>(.post, "post").body(Data(count: 300_000), contentType: "text/plain")
        .uploadProgress(progress))
    _ = try await fixture.server.takeRequest()
    try await plainGET()
    let result = try await fixture.client.download(
      Endpoint<Void>(.get, "download"), to: folder.appendingPathComponent("d.bin"))
    #expect(result.byteCount == 3)
    _ = try await fixture.server.takeRequest()
    try await plainGET()
    #expect(fixture.transport.openedConnections == 1)
  }

  @Test("a failed transfer's error detail does not reach the next failure on the same handle")
  func errorDetailStaysWithItsTransfer() async throws {
    let refusing = try RefusingPort()
    let fixture = try CurlFixture()
    defer { fixture.shutdown() }
    let refusedURL = try #require(URL(string: "http://127.0.0.1:\(refusing.port)/x"))
    let refused = await courierError { try await fixture.transport.send(Request(url: refusedURL)) }
    #expect(refused?.kind == .cannotConnect)
    fixture.server.enqueue(MockResponse(fault: .malformedStatusLine))
    let malformed = await courierError {
      try await fixture.transport.send(Request(url: fixture.server.url("bad")))
    }
    #expect(malformed?.kind == .badResponse)
    let message = malformed?.debugMessage ?? ""
    #expect(!message.contains(String(refusing.port)), "\(message)")
    #expect(!message.lowercased().contains("connect"), "\(message)")
  }

  @Test("received heads: obs-fold, repeats, trimming, non-ASCII and control characters")
  func receivedHeadAsSent() async throws {
    let head =
      "HTTP/1.1 200 OK\r\n" + "X-Fold: a\r\n" + "  b\r\n" + "X-Dup: 1\r\n" + "x-dup: 2\r\n"
      + "X-Trim: \t spaced out \t\r\n" + "X-Utf8: caf\u{E9}\r\n" + "X-Ctl: a\u{1}b\r\n"
      + "X-Ctl: second\r\n" + "Bad Name: v\r\n" + "X-Empty:\r\n"
      + "Content-Length: 2\r\nConnection: close\r\n\r\nok"
    let server = try RawServer(reply: Data(head.utf8))
    let transport = CurlTransport()
    defer { transport.shutdown() }
    let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/h"))
    let response = try await transport.send(Request(url: url))
    server.finish()
    let headers = response.headers
    #expect(headers["X-Fold"] == "a b")
    #expect(headers.values(for: try HTTPHeaders.Name("X-Dup")) == ["1", "2"])
    #expect(headers["x-trim"] == "spaced out")
    #expect(headers["X-Utf8"] == "caf\u{E9}")
    #expect(headers["X-Ctl"] == "second")
    #expect(headers["Bad Name"] == nil)
    #expect(headers["X-Empty"] == "")
    #expect(headers.contains(try HTTPHeaders.Name("X-Empty")))
    // A one-field read answers what the list holds.
    for field in headers {
      #expect(headers[field.name.rawName] == headers.first { $0.name == field.name }?.value)
    }
  }
}
