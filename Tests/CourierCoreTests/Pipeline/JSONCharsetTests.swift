import CourierTesting
import Foundation
import Testing

@testable import CourierCore

/// JSON bodies labelled with a legacy charset (`application/json; charset=GBK`), which older
/// back ends send and `JSONDecoder` cannot read: re-encoded as UTF-8 before the pipeline.
@Suite("JSON in the charset of Content-Type", .timeLimit(.minutes(5)))
struct JSONCharsetTests {
  struct Person: Decodable, Sendable, Equatable {
    let name: String
  }

  /// GBK bytes (`python3 -c "print('李雷'.encode('gbk').hex())"` on this machine).
  static let liLeiGBK: [UInt8] = [0xC0, 0xEE, 0xC0, 0xD7]
  static let successGBK: [UInt8] = [0xB3, 0xC9, 0xB9, 0xA6]  // 成功
  static let lowBalanceGBK: [UInt8] = [0xD3, 0xE0, 0xB6, 0xEE, 0xB2, 0xBB, 0xD7, 0xE3]  // 余额不足

  static func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }

  /// A client over a stub answering `body` with these headers.
  func client(
    _ body: [UInt8], contentType: String, contentLength: Bool = false,
    pipeline: ResponsePipeline = .standard
  ) throws -> Client {
    var headers = HTTPHeaders()
    try headers.add(.contentType, contentType)
    if contentLength { try headers.add(.contentLength, String(body.count)) }
    let stub = StubTransport([StubResponse(status: 200, headers: headers, body: Data(body))])
    return stubClient(stub, pipeline: pipeline)
  }

  @Test("a GBK envelope decodes, and the response says UTF-8 with its new length")
  func gbkEnvelope() async throws {
    let body =
      Self.ascii(#"{"code":0,"msg":""#) + Self.successGBK
      + Self.ascii(#"","data":{"name":""#) + Self.liLeiGBK + Self.ascii(#""}}"#)
    let client = try client(
      body, contentType: "application/json; charset=GBK", contentLength: true,
      pipeline: .envelope(.codeZero))
    let decoded = try await client.response(for: Endpoint<Person>(.get, "p"))
    #expect(decoded.value == Person(name: "李雷"))
    let utf8 = #"{"code":0,"msg":"成功","data":{"name":"李雷"}}"#
    #expect(decoded.response.bodyText == utf8)
    #expect(decoded.response.headers[.contentType] == "application/json; charset=utf-8")
    #expect(decoded.response.headers[.contentLength] == String(utf8.utf8.count))
  }

  @Test("a business failure's message in GBK reaches the error")
  func gbkBusinessMessage() async throws {
    let body = Self.ascii(#"{"code":1001,"msg":""#) + Self.lowBalanceGBK + Self.ascii(#""}"#)
    let client = try client(
      body, contentType: "application/json;charset=gbk", pipeline: .envelope(.codeZero))
    let error = await courierError { try await client.send(Endpoint<Person>(.get, "p")) }
    #expect(error?.kind == .business)
    #expect(error?.code == "1001")
    #expect(error?.serverMessage == "余额不足")
  }

  @Test(
    "ISO-8859-1, Big5 and +json media types are re-encoded too",
    arguments: [
      ("application/json; charset=ISO-8859-1", [0x63, 0x61, 0x66, 0xE9], "café"),
      ("application/problem+json; charset=big5", [0xA7, 0x41, 0xA6, 0x6E], "你好"),
      (#"text/json; charset="Shift_JIS""#, [0x93, 0xFA, 0x96, 0x7B], "日本"),
    ] as [(String, [UInt8], String)])
  func otherCharsets(contentType: String, name: [UInt8], expected: String) async throws {
    let body = Self.ascii(#"{"name":""#) + name + Self.ascii(#""}"#)
    let client = try client(body, contentType: contentType)
    #expect(try await client.send(Endpoint<Person>(.get, "p")).name == expected)
  }

  @Test("UTF-8 bytes under a GBK label are left as they are")
  func mislabelledUTF8() async throws {
    let body = Self.ascii(#"{"name":"李雷"}"#)
    let client = try client(body, contentType: "application/json; charset=GBK")
    let decoded = try await client.response(for: Endpoint<Person>(.get, "p"))
    #expect(decoded.value == Person(name: "李雷"))
    #expect(decoded.response.body == Data(body))
    #expect(decoded.response.headers[.contentType] == "application/json; charset=GBK")
  }

  @Test("bytes that are not valid in the named charset fail as decoding")
  func invalidBytes() async throws {
    // 0xFF never starts a GBK character.
    let body = Self.ascii(#"{"name":""#) + [0xFF, 0xFF] + Self.ascii(#""}"#)
    let client = try client(body, contentType: "application/json; charset=GBK")
    let error = await courierError { try await client.send(Endpoint<Person>(.get, "p")) }
    #expect(error?.kind == .decoding)
  }

  @Test("other media types, and raw sends, keep their bytes")
  func notJSON() async throws {
    let text = try client(Self.liLeiGBK, contentType: "text/plain; charset=GBK")
    let decoded = try await text.response(for: Endpoint<String>(.get, "t"))
    #expect(decoded.value == "李雷")
    #expect(decoded.response.body == Data(Self.liLeiGBK))
    let body = Self.ascii(#"{"name":""#) + Self.liLeiGBK + Self.ascii(#""}"#)
    let raw = try client(body, contentType: "application/json; charset=GBK")
    let response = try await raw.send(Request(url: try #require(URL(string: "https://x.test/p"))))
    #expect(response.body == Data(body))
  }

  @Test("the quick test for a UTF-8 label")
  func mentionsUTF8() {
    for value in ["application/json; charset=utf-8", "a/b;charset=UTF8", "x; charset=\"Utf-8\""] {
      #expect(JSONCharset.mentionsUTF8(value), "\(value)")
    }
    for value in ["application/json; charset=gbk", "a/b; charset=utf-16", "ut-8", "utf+8", "uutf"] {
      #expect(!JSONCharset.mentionsUTF8(value), "\(value)")
    }
    #expect(JSONCharset.mentionsUTF8("uutf-8"))
  }

  @Test("Client.decode on a response you already have re-encodes it the same way")
  func decodeExistingResponse() throws {
    let body = Self.ascii(#"{"name":""#) + Self.liLeiGBK + Self.ascii(#""}"#)
    var headers = HTTPHeaders()
    try headers.add(.contentType, "application/json; charset=GBK")
    let response = Response(
      status: 200, headers: headers, body: Data(body),
      request: Request(url: try #require(URL(string: "https://x.test/p"))))
    let client = Client(transport: StubTransport())
    #expect(try client.decode(response, for: Endpoint<Person>(.get, "p")).name == "李雷")
  }
}
