import CourierCore
import CourierTesting
import CourierURLSession
import Foundation
import Testing

@Suite("Endpoint<String>: text in the charset of Content-Type", .timeLimit(.minutes(5)))
struct TextDecodingTests {
  /// "你好，世界" in GBK, from `printf '你好，世界' | iconv -f utf-8 -t gbk` on this machine.
  static let helloGBK: [UInt8] = [0xC4, 0xE3, 0xBA, 0xC3, 0xA3, 0xAC, 0xCA, 0xC0, 0xBD, 0xE7]
  /// "你好，世界𠀀€" in GB18030 (`iconv -t gb18030`): the first five characters are the GBK
  /// bytes; U+20000 needs GB18030's four-byte form and € is A2 E3 there.
  static let helloGB18030: [UInt8] = helloGBK + [0x95, 0x32, 0x82, 0x36, 0xA2, 0xE3]
  /// "你好，世界" in Big5 (`iconv -t big5`).
  static let helloBig5: [UInt8] = [0xA7, 0x41, 0xA6, 0x6E, 0xA1, 0x41, 0xA5, 0x40, 0xAC, 0xC9]
  /// "Grüße, café" in ISO-8859-1 (`iconv -t latin1`).
  static let latin1: [UInt8] = [0x47, 0x72, 0xFC, 0xDF, 0x65, 0x2C, 0x20, 0x63, 0x61, 0x66, 0xE9]
  /// "日本" in Shift_JIS (`iconv -t shift_jis`).
  static let japanShiftJIS: [UInt8] = [0x93, 0xFA, 0x96, 0x7B]

  /// Decodes `bytes` as an `Endpoint<String>` response with `contentType` (none when `nil`).
  func text(
    _ bytes: [UInt8], contentType: String?, pipeline: ResponsePipeline = .standard
  )
    async throws -> String
  {
    var headers = HTTPHeaders()
    if let contentType { try headers.add(.contentType, contentType) }
    let stub = StubTransport([StubResponse(status: 200, headers: headers, body: Data(bytes))])
    return try await stubClient(stub, pipeline: pipeline).send(Endpoint<String>(.get, "t"))
  }

  @Test(
    "decodes the charset named by Content-Type, ignoring case and quotes",
    arguments: [
      ("text/plain; charset=GBK", helloGBK, "你好，世界"),
      (#"text/plain;charset="gbk""#, helloGBK, "你好，世界"),
      ("text/plain; charset=gb2312", helloGBK, "你好，世界"),
      ("text/plain; format=flowed; CHARSET=GB18030", helloGB18030, "你好，世界𠀀€"),
      ("text/html; charset=Big5", helloBig5, "你好，世界"),
      ("text/plain; charset=ISO-8859-1", latin1, "Grüße, café"),
      ("text/plain; charset=latin1", latin1, "Grüße, café"),
      ("text/plain; charset=windows-1252", [0x80, 0x31], "€1"),
      ("text/plain; charset=Shift_JIS", japanShiftJIS, "日本"),
      ("text/plain; charset=us-ascii", Array("plain".utf8), "plain"),
      ("text/plain; charset=utf-16le", [0xE9, 0x00, 0xE5, 0x65, 0x2C, 0x67], "é日本"),
      ("text/plain; charset=utf-16be", [0x00, 0xE9, 0x65, 0xE5, 0x67, 0x2C], "é日本"),
      ("text/plain; charset=utf-16", [0xE9, 0x00, 0xE5, 0x65], "é日"),
      ("text/plain; charset=utf-16", [0xFE, 0xFF, 0x00, 0xE9, 0x65, 0xE5], "é日"),
      ("text/plain; charset=utf-8", Array("你好".utf8), "你好"),
      ("application/json", Array(#"{"a":"é"}"#.utf8), #"{"a":"é"}"#),
    ] as [(String, [UInt8], String)])
  func decodesCharsets(contentType: String, bytes: [UInt8], expected: String) async throws {
    #expect(try await text(bytes, contentType: contentType) == expected)
  }

  @Test("without a charset: UTF-8, and a UTF-8 byte order mark is dropped")
  func defaultUTF8() async throws {
    #expect(try await text([0xEF, 0xBB, 0xBF] + Array("你好".utf8), contentType: nil) == "你好")
    #expect(try await text(Array("é".utf8), contentType: "text/plain") == "é")
    #expect(try await text([0xFF, 0xFE, 0xE9, 0x00], contentType: nil) == "é")
  }

  @Test(
    "an unknown charset or bytes invalid in the charset are decoding errors naming it",
    arguments: [
      ("text/plain; charset=x-klingon", helloGBK, #"unsupported charset "x-klingon""#),
      ("text/plain; charset=gbk//IGNORE", helloGBK, #"unsupported charset "gbk//IGNORE""#),
      ("text/plain; charset=gbk", [0xC4, 0xE3, 0xFF, 0xFF], "body is not valid GBK"),
      ("text/plain; charset=gbk", [0xC4, 0xE3, 0xBA], "body is not valid GBK"),
      ("text/plain; charset=gbk", [0x95, 0x32, 0x82, 0x36], "body is not valid GBK"),
      ("text/plain; charset=gb18030", [0x95, 0x32, 0x82, 0xFF], "body is not valid GB18030"),
      ("text/plain; charset=big5", [0xA7, 0x41, 0xA6], "body is not valid Big5"),
      ("text/plain; charset=us-ascii", [0x63, 0x61, 0x66, 0xE9], "body is not valid US-ASCII"),
      ("text/plain; charset=utf-16le", [0x00, 0xD8, 0x41, 0x00], "body is not valid UTF-16LE"),
      ("text/plain; charset=utf-16be", [0x00, 0x41, 0x00], "body is not valid UTF-16BE"),
      ("text/plain; charset=utf-8", [0x63, 0xC3], "body is not valid UTF-8"),
      ("text/plain", [0xFF, 0xC3], "body is not valid UTF-8"),
    ] as [(String, [UInt8], String)])
  func failures(contentType: String, bytes: [UInt8], message: String) async throws {
    let error = await courierError { try await text(bytes, contentType: contentType) }
    let failure = try #require(error)
    #expect(failure.kind == .decoding)
    #expect(failure.debugDescription.contains(message), "\(failure.debugDescription)")
    #expect(failure.response?.body == Data(bytes))
  }

  @Test("a GBK body larger than iconv's output chunk decodes whole")
  func largeGBK() async throws {
    let count = 5_000  // 50 KB of GBK, 75 KB of UTF-8: several 16 KiB output chunks
    let bytes = Array([[UInt8]](repeating: Self.helloGBK, count: count).joined())
    let decoded = try await text(bytes, contentType: "text/plain; charset=GBK")
    #expect(decoded == String(repeating: "你好，世界", count: count))
  }

  @Test("an empty body is empty text, whatever the charset says")
  func emptyBody() async throws {
    #expect(try await text([], contentType: "text/plain; charset=x-klingon") == "")
  }

  @Test("a payload cut from a JSON envelope stays UTF-8 JSON text; a JSON string is unquoted")
  func envelopePayload() async throws {
    let pipeline = ResponsePipeline.envelope(.codeZero)
    let string = Array(#"{"code":0,"data":"tok\u00e9n 你好"}"#.utf8)
    #expect(
      try await text(string, contentType: "application/json; charset=utf-8", pipeline: pipeline)
        == "tokén 你好")
    let object = Array(#"{"code":0,"data":{"a":"é"}}"#.utf8)
    #expect(
      try await text(object, contentType: "application/json; charset=gbk", pipeline: pipeline)
        == #"{"a":"é"}"#)
  }

  @Test(
    "GBK over a real socket: URLSession hands over the bytes and the header untouched",
    .timeLimit(.minutes(5)))
  func gbkOverLoopback() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(
      MockResponse(body: Data(Self.helloGBK)).addingHeader(
        "Content-Type", "text/plain; charset=GBK"))
    let client = Client(baseURL: server.baseURL, transport: URLSessionTransport())
    #expect(try await client.send(Endpoint<String>(.get, "hello")) == "你好，世界")
  }
}
