import CourierCore
import CourierTesting
import Foundation
import Testing

/// `StubTransport` refuses what the wire transports refuse before sending, so that a unit
/// test sees what production would.
@Suite("StubTransport: the wire transports' checks", .timeLimit(.minutes(1)))
struct StubTransportTests {
  @Test(
    "a caller's Content-Length that is not the body's, or a Transfer-Encoding, is invalidRequest and not recorded"
  )
  func framing() async throws {
    let stub = StubTransport(fallback: .json("{}"))
    let client = Client(baseURL: URL(string: "https://api.test/"), transport: stub)
    let long = Endpoint<Data>(.post, "x").body(Data("ab".utf8), contentType: "text/plain")
      .header("Content-Length", "99999")
    #expect(await courierError { try await client.send(long) }?.kind == .invalidRequest)
    let chunked = Endpoint<Data>(.post, "x").body(Data("ab".utf8), contentType: "text/plain")
      .header("Transfer-Encoding", "chunked")
    #expect(await courierError { try await client.send(chunked) }?.kind == .invalidRequest)
    #expect(stub.requests.isEmpty)
    _ = try await client.send(
      Endpoint<Data>(.post, "x").body(Data("ab".utf8), contentType: "text/plain")
        .header("Content-Length", "2"))
    #expect(stub.requests.count == 1)
  }

  @Test("a body file that is a directory is invalidRequest and not recorded")
  func directoryBody() async throws {
    let stub = StubTransport(fallback: .json("{}"))
    let client = Client(baseURL: URL(string: "https://api.test/"), transport: stub)
    let error = await courierError {
      try await client.send(
        Endpoint<Data>(.put, "x").fileBody(
          FileManager.default.temporaryDirectory, contentType: "text/plain"))
    }
    #expect(error?.kind == .invalidRequest)
    #expect(error?.debugDescription.contains("not a readable regular file") == true)
    #expect(stub.requests.isEmpty)
  }
}
