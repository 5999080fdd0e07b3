import Courier
import CourierTesting
import Foundation
import Testing

/// The envelope and error cases of the stub tests, once over real sockets, so stubs and the
/// wire agree.
@Suite("Response pipeline over the wire", .timeLimit(.minutes(5)))
struct WireEnvelopeTests {
  static let cases: [(String, MockResponse, CourierError.Kind?, String?, String)] = [
    (
      "codeZero success", .json(#"{"code":0,"msg":"ok","data":{"name":"Li","age":3}}"#), nil, nil,
      ""
    ),
    (
      "business failure", .json(#"{"code":40101,"msg":"Token expired","data":null}"#), .business,
      "40101", "Token expired"
    ),
    (
      "business failure without message", .json(#"{"code":7}"#), .business, "7",
      "The request could not be completed."
    ),
    (
      "400 with envelope", .json(#"{"code":1001,"msg":"Phone number invalid"}"#, status: 400),
      .httpStatus, "1001", "Phone number invalid"
    ),
    (
      "502 HTML from a proxy", .text("<html>Bad Gateway</html>", status: 502), .httpStatus, nil,
      "The server is busy. Please try again later."
    ),
    (
      "200 HTML", .text("<html>login</html>"), .decoding, nil,
      "The server sent a response the app could not read."
    ),
    (
      "code of another type", .json(#"{"code":"0","data":{"name":"Li","age":3}}"#), .business,
      "0", "The request could not be completed."
    ),
    (
      "data null", .json(#"{"code":0,"data":null}"#), .decoding, nil,
      "The server sent a response the app could not read."
    ),
    (
      "payload does not decode", .json(#"{"code":0,"data":{"name":5}}"#), .decoding, nil,
      "The server sent a response the app could not read."
    ),
    (
      "empty 200", MockResponse(status: 200), .decoding, nil,
      "The server sent a response the app could not read."
    ),
    (
      "429 with Retry-After", MockResponse(status: 429).addingHeader("Retry-After", "12"),
      .httpStatus, nil, "Too many requests. Please try again in 12 seconds."
    ),
  ]

  @Test("envelope and error cases agree with the stub tests", arguments: cases)
  func wireCase(
    name: String, response: MockResponse, kind: CourierError.Kind?, code: String?,
    reason: String
  ) async throws {
    let fixture = try ChainFixture(pipeline: .envelope(.codeZero))
    defer { fixture.shutdown() }
    fixture.server.enqueue(response)
    let result: Result<Profile, CourierError>
    do {
      result = .success(try await fixture.client.send(Endpoint<Profile>(.get, "p")))
    } catch {
      result = .failure(error)
    }
    switch (result, kind) {
    case (.success(let profile), nil):
      #expect(profile == Profile(name: "Li", age: 3), "\(name)")
    case (.failure(let error), let kind?):
      #expect(error.kind == kind, "\(name): \(error.debugDescription)")
      #expect(error.code == code, "\(name)")
      #expect(error.reason == reason, "\(name)")
      #expect(error.response?.body == response.body, "\(name)")
    case (.success, _?):
      Issue.record("\(name): expected \(String(describing: kind))")
    case (.failure(let error), nil):
      Issue.record("\(name): unexpected \(error.debugDescription)")
    }
  }

  @Test("Chinese reasons over the wire")
  func chineseReasons() async throws {
    let fixture = try ChainFixture(pipeline: .envelope(.codeZero), locale: "zh-Hans")
    defer { fixture.shutdown() }
    fixture.server.enqueue(.text("oops", status: 503))
    let error = await courierError {
      try await fixture.client.send(Endpoint<Profile>(.get, "p"))
    }
    #expect(error?.reason == "服务器繁忙，请稍后再试")
  }
}
