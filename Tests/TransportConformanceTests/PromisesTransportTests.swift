import Courier
import CourierTesting
import Foundation
import Testing

/// Promises of the Transfers and Transports articles (Sources/Courier/Courier.docc) that no
/// other test held, on both wire transports (see `Docs/Promises.md`).
@Suite("Promises: what both wire transports do", .timeLimit(.minutes(5)))
struct PromisesTransportTests {
  /// The Transfers article promises this of `URLSessionTransport` ("Response body limits");
  /// `CurlTransport` promises only to stop once the body passes the limit, and does: it reads
  /// the announced body until then.
  @Test("URLSessionTransport: an announced Content-Length over the body limit fails at once")
  func announcedLengthOverLimit() async throws {
    let fixture = try Fixture(.urlSession)
    defer { fixture.shutdown() }
    // The head announces 2 MiB, then the server closes without sending a byte of it: a limit
    // that waited for the body would see the connection lost instead (as CurlTransport does).
    fixture.server.enqueue(
      MockResponse(body: Data(count: 2 * 1024 * 1024), fault: .closeAfterBodyBytes(0)))
    let error = await courierError {
      try await fixture.client.send(
        Endpoint<Data>(.get, "big").maximumResponseBodySize(1024 * 1024))
    }
    #expect(error?.kind == .bodyTooLarge, "\(String(reflecting: error))")
  }

  @Test(
    "a 3xx without Location: badResponse over URLSession, the 3xx itself over CurlTransport",
    arguments: TransportKind.wire)
  func redirectWithoutLocation(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(status: 302, body: Data("moved?".utf8)))
    let error = await courierError { try await fixture.client.send(Endpoint<Data>(.get, "a")) }
    switch kind {
    case .urlSession:
      #expect(error?.kind == .badResponse)
    case .curl:
      #expect(error?.kind == .httpStatus)
      #expect(error?.status == 302)
      #expect(error?.response?.bodyText == "moved?")
    }
  }

  @Test(
    "a chunked download that passes maximumSize fails as bodyTooLarge and leaves no file",
    arguments: TransportKind.wire)
  func downloadPastMaximumSize(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(body: Data(count: 3 * 1024 * 1024), chunked: true))
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let error = await courierError {
      try await fixture.client.download(
        Endpoint<Void>(.get, "endless"), to: folder.appendingPathComponent("endless.bin"),
        maximumSize: 1024 * 1024)
    }
    #expect(error?.kind == .bodyTooLarge)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    // Announced: refused before anything is written.
    fixture.server.enqueue(MockResponse(body: Data(count: 3 * 1024 * 1024)))
    let announced = await courierError {
      try await fixture.client.download(
        Endpoint<Void>(.get, "big"), to: folder.appendingPathComponent("big.bin"),
        maximumSize: 1024 * 1024)
    }
    #expect(announced?.kind == .bodyTooLarge)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
  }
}
