import CourierCore
import CourierTesting
import Foundation
import Testing

/// A client puts the request's total time on every error it throws from sending, beside the
/// phases the transport measured.
@Suite("Client: timings on errors", .timeLimit(.minutes(5)))
struct ErrorTimingsTests {
  @Test("a failure without a response, and a rejected status, both carry the total")
  func totalOnErrors() async throws {
    let stub = StubTransport()
    stub.on(nil, "refused", .failure(CourierError(kind: .cannotConnect, debugMessage: "scripted")))
    stub.on(nil, "missing", .status(404))
    let client = Client(transport: stub, locale: "en")
    let refused = try #require(
      await courierError { try await client.send(Endpoint<Data>(.get, "http://a.test/refused")) })
    #expect(refused.kind == .cannotConnect)
    #expect(refused.timings?.total != nil)
    #expect(refused.timings?.firstByte == nil, "the stub measured no phase")
    let missing = try #require(
      await courierError { try await client.send(Endpoint<Data>(.get, "http://a.test/missing")) })
    #expect(missing.kind == .httpStatus)
    #expect(missing.timings?.total != nil)
  }
}
