import CourierCore
import CourierTesting
import Foundation
import Testing

struct Profile: Codable, Sendable, Equatable {
  let name: String
  let age: Int
}

@Suite("Response pipeline: status, envelope, decoding", .timeLimit(.minutes(5)))
struct PipelineTests {
  func client(
    _ stub: StubTransport, _ pipeline: ResponsePipeline, locale: String = "en"
  )
    -> Client
  {
    stubClient(stub, pipeline: pipeline, locale: locale)
  }

  // MARK: Success paths

  @Test("codeZero: the data payload is decoded")
  func codeZeroSuccess() async throws {
    let stub = StubTransport([
      .json(#"{"code":0,"msg":"ok","data":{"name":"Li","age":30}}"#)
    ])
    let profile = try await client(stub, .envelope(.codeZero)).send(
      Endpoint<Profile>(.get, "me"))
    #expect(profile == Profile(name: "Li", age: 30))
  }

  @Test("statusOK: the whole body is decoded, ignoring the status member")
  func statusOKSuccess() async throws {
    let stub = StubTransport([.json(#"{"status":"ok","name":"Li","age":30}"#)])
    let profile = try await client(stub, .envelope(.statusOK)).send(
      Endpoint<Profile>(.get, "me"))
    #expect(profile == Profile(name: "Li", age: 30))
  }

  @Test("a custom dotted rule reads nested code, message and payload")
  func customDottedRule() async throws {
    let rule = EnvelopeRule(
      code: "meta.status", success: [200, 201], message: ["meta.message"], payload: "result.user"
    )
    let stub = StubTransport([
      .json(#"{"meta":{"status":201},"result":{"user":{"name":"Li","age":3}}}"#),
      .json(#"{"meta":{"status":403,"message":"Account locked"},"result":null}"#),
    ])
    let client = client(stub, .envelope(rule))
    #expect(try await client.send(Endpoint<Profile>(.get, "u")).age == 3)
    let error = await courierError { try await client.send(Endpoint<Profile>(.get, "u")) }
    #expect(error?.kind == .business)
    #expect(error?.code == "403")
    #expect(error?.reason == "Account locked")
  }

  @Test("a closure rule decides from the whole response")
  func closureRule() async throws {
    let rule = EnvelopeRule.custom { response in
      response.headers["X-Result"] == "fail"
        ? .failure(code: response.headers["X-Code"], message: "Rejected by gateway")
        : .success(payload: nil)
    }
    var failing = StubResponse.json(#"{"name":"Li","age":1}"#)
    try failing.headers.add("X-Result", "fail")
    try failing.headers.add("X-Code", "G7")
    let stub = StubTransport([.json(#"{"name":"Li","age":1}"#), failing])
    let client = client(stub, .envelope(rule))
    #expect(try await client.send(Endpoint<Profile>(.get, "u")).name == "Li")
    let error = await courierError { try await client.send(Endpoint<Profile>(.get, "u")) }
    #expect(error?.kind == .business)
    #expect(error?.code == "G7")
    #expect(error?.reason == "Rejected by gateway")
  }

  @Test("a custom stage runs in order and can reject a response")
  func customStage() async throws {
    struct SignatureStage: ResponseStage {
      var name: String { "signature" }
      func process(_ context: inout ResponseContext) throws {
        let expected = String(context.response.body.count)
        guard context.response.headers["X-Signature"] == expected else {
          throw CourierError(kind: .badResponse, debugMessage: "signature mismatch")
        }
      }
    }
    var signed = StubResponse.json(#"{"code":0,"data":{"name":"A","age":1}}"#)
    try signed.headers.add("X-Signature", String(signed.body.count))
    let unsigned = StubResponse.json(#"{"code":0,"data":{"name":"A","age":1}}"#)
    let pipeline = ResponsePipeline([StatusStage(), SignatureStage(), EnvelopeStage(.codeZero)])
    let client = client(StubTransport([signed, unsigned]), pipeline)
    #expect(try await client.send(Endpoint<Profile>(.get, "p")).name == "A")
    let error = await courierError { try await client.send(Endpoint<Profile>(.get, "p")) }
    #expect(error?.kind == .badResponse)
    #expect(error?.stage == "signature")
    #expect(error?.reason == "The server sent an invalid response.")
  }

  @Test("empty bodies: 204 and HEAD pass the envelope; Void, Optional, Data and String decode")
  func emptyBodies() async throws {
    let stub = StubTransport(fallback: .status(204))
    let client = client(stub, .envelope(.codeZero))
    try await client.send(Endpoint<Void>(.delete, "x"))
    #expect(try await client.send(Endpoint<Profile?>(.get, "x")) == nil)
    #expect(try await client.send(Endpoint<Data>(.get, "x")).isEmpty)
    #expect(try await client.send(Endpoint<String>(.get, "x")) == "")
    stub.enqueue(.status(200))
    try await client.send(Endpoint<Void>(.head, "x"))
  }

  @Test("optional payloads: null or a missing data key give nil")
  func optionalPayload() async throws {
    let stub = StubTransport([
      .json(#"{"code":0,"data":null}"#), .json(#"{"code":0}"#),
    ])
    let client = client(stub, .envelope(.codeZero))
    #expect(try await client.send(Endpoint<Profile?>(.get, "x")) == nil)
    #expect(try await client.send(Endpoint<Profile?>(.get, "x")) == nil)
  }

  @Test("String and Data endpoints get the envelope payload; a JSON string is unquoted")
  func rawPayloads() async throws {
    let stub = StubTransport([
      .json(#"{"code":0,"data":"tok\u00e9n"}"#), .json(#"{"code":0,"data":[1,2]}"#),
    ])
    let client = client(stub, .envelope(.codeZero))
    #expect(try await client.send(Endpoint<String>(.get, "t")) == "tokén")
    #expect(try await client.send(Endpoint<Data>(.get, "t")) == Data("[1,2]".utf8))
  }

  @Test("decoded(at:) reads a key path without an envelope rule")
  func keyPathWithoutEnvelope() async throws {
    let stub = StubTransport([.json(#"{"result":{"items":[{"name":"A","age":1}]}}"#)])
    let items = try await client(stub, .standard).send(
      Endpoint<[Profile]>(.get, "x").decoded(at: "result.items"))
    #expect(items.map(\.name) == ["A"])
  }

  @Test("per-endpoint overrides: accepted statuses and turning the envelope off")
  func overrides() async throws {
    let stub = StubTransport([
      .json(#"{"name":"A","age":1}"#, status: 404), .json(#"{"name":"B","age":2}"#),
    ])
    let client = client(stub, .envelope(.codeZero))
    let notFound = Endpoint<Profile>(.get, "x").accepting(AcceptedStatuses([200...299, 404...404]))
      .envelope(nil)
    #expect(try await client.send(notFound).name == "A")
    #expect(try await client.send(Endpoint<Profile>(.get, "x").envelope(nil)).name == "B")
  }

  @Test("an endpoint can add an envelope rule to a pipeline without one")
  func endpointEnvelopeOverride() async throws {
    let stub = StubTransport([.json(#"{"code":7,"msg":"Nope"}"#)])
    let error = await courierError {
      try await client(stub, .standard).send(Endpoint<Profile>(.get, "x").envelope(.codeZero))
    }
    #expect(error?.kind == .business)
    #expect(error?.code == "7")
  }

  // MARK: Failures

  @Test(
    "business failures carry the server's code and message",
    arguments: [
      (
        EnvelopeRule.codeZero, #"{"code":40101,"msg":"Token expired","data":null}"#, "40101",
        "Token expired"
      ),
      (
        EnvelopeRule.codeZero, #"{"code":"E1","message":"Bad \"thing\""}"#, "E1",
        "Bad \"thing\""
      ),
      (
        EnvelopeRule.statusOK, #"{"status":"error","error":"Post ID '61355' not found."}"#,
        "error", "Post ID '61355' not found."
      ),
    ])
  func businessFailure(
    rule: EnvelopeRule, body: String, code: String, message: String
  )
    async throws
  {
    var rule = rule
    rule.matchesAcrossTypes = true
    let stub = StubTransport([.json(body)])
    let error = await courierError {
      try await client(stub, .envelope(rule)).send(Endpoint<Profile>(.get, "x"))
    }
    let failure = try #require(error)
    #expect(failure.kind == .business)
    #expect(failure.code == code)
    #expect(failure.serverMessage == message)
    #expect(failure.reason == message)
    #expect(failure.status == 200)
    #expect(failure.response?.bodyText == body)
    #expect(failure.stage == "envelope")
  }

  @Test("a business failure without a message gets the catalog's text in each language")
  func businessWithoutMessage() async throws {
    for (locale, text) in [("en", "The request could not be completed."), ("zh-Hans", "请求未能完成")] {
      let stub = StubTransport([.json(#"{"code":500}"#)])
      let error = await courierError {
        try await client(stub, .envelope(.codeZero), locale: locale).send(
          Endpoint<Void>(.get, "x"))
      }
      #expect(error?.kind == .business)
      #expect(error?.reason == text)
    }
  }

  @Test("an error status with an envelope keeps kind httpStatus and shows the server's message")
  func errorStatusWithEnvelope() async throws {
    let stub = StubTransport([.json(#"{"code":1001,"msg":"Phone number invalid"}"#, status: 400)])
    let error = await courierError {
      try await client(stub, .envelope(.codeZero)).send(Endpoint<Profile>(.get, "x"))
    }
    #expect(error?.kind == .httpStatus)
    #expect(error?.status == 400)
    #expect(error?.code == "1001")
    #expect(error?.reason == "Phone number invalid")
  }

  @Test(
    "error statuses without an envelope use the status texts",
    arguments: [
      (401, "Your session has expired. Please sign in again.", "登录已过期，请重新登录"),
      (403, "You don't have permission to do this.", "您没有权限执行此操作"),
      (404, "The requested content could not be found.", "请求的内容不存在"),
      (408, "The server took too long to respond.", "服务器连接超时"),
      (413, "The data you sent is too large.", "发送的数据过大"),
      (429, "Too many requests. Please wait a moment and try again.", "请求过于频繁，请稍后再试"),
      (418, "The server could not complete the request.", "服务器无法完成请求"),
      (500, "The server is busy. Please try again later.", "服务器繁忙，请稍后再试"),
      (503, "The server is busy. Please try again later.", "服务器繁忙，请稍后再试"),
      (504, "The server took too long to respond.", "服务器连接超时"),
    ])
  func statusReasons(status: Int, english: String, chinese: String) async throws {
    for (locale, text) in [("en", english), ("zh-Hans", chinese)] {
      let html = "<html><body><h1>\(status)</h1></body></html>"
      let stub = StubTransport([.text(html, status: status)])
      let error = await courierError {
        try await client(stub, .envelope(.codeZero), locale: locale).send(
          Endpoint<Profile>(.get, "x"))
      }
      #expect(error?.kind == .httpStatus)
      #expect(error?.status == status)
      #expect(error?.reason == text)
      #expect(error?.response?.bodyText == html)
    }
  }

  @Test("429 with Retry-After tells how long to wait")
  func retryAfterReason() async throws {
    var response = StubResponse.status(429)
    try response.headers.add(.retryAfter, "30")
    for (locale, text) in [
      ("en", "Too many requests. Please try again in 30 seconds."),
      ("zh-Hans", "请求过于频繁，请在 30 秒后重试"),
    ] {
      let error = await courierError {
        try await client(StubTransport([response]), .standard, locale: locale).send(
          Endpoint<Void>(.get, "x"))
      }
      #expect(error?.retryAfter == .seconds(30))
      #expect(error?.reason == text)
    }
  }

  /// Bad bodies, each with the kind it must give and a phrase of the developer message.
  static let badInputs: [(String, Data, CourierError.Kind, String)] = [
    ("HTML error page", Data("<html>502 Bad Gateway</html>".utf8), .decoding, "not a JSON"),
    ("truncated JSON", Data(#"{"code":0,"data":{"name":"Li","ag"#.utf8), .decoding, "truncated"),
    ("empty 200", Data(), .decoding, "empty body"),
    ("non-UTF-8 bytes", Data([0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0x30, 0x7D]), .decoding, ""),
    ("JSON array root", Data("[1,2]".utf8), .decoding, "not a JSON object"),
    ("trailing garbage", Data(#"{"code":0} x"#.utf8), .decoding, "after the JSON value"),
    (
      "nested too deep", Data(("{\"a\":" + String(repeating: "[", count: 600)).utf8), .decoding,
      "too deeply"
    ),
  ]

  @Test("bad bodies give a clear CourierError for both presets", arguments: badInputs)
  func badBodies(
    name: String, body: Data, kind: CourierError.Kind, detail: String
  ) async throws {
    for rule in [EnvelopeRule.codeZero, .statusOK] {
      let stub = StubTransport([StubResponse(status: 200, body: body)])
      let error = await courierError {
        try await client(stub, .envelope(rule)).send(Endpoint<Profile>(.get, "x"))
      }
      let failure = try #require(error, "\(name)")
      #expect(failure.kind == kind, "\(name)")
      #expect(
        detail.isEmpty || failure.debugDescription.contains(detail),
        "\(name): \(failure.debugDescription)")
      #expect(failure.response?.body == body)
      #expect(failure.reason == "The server sent a response the app could not read.")
    }
  }

  @Test(
    "envelope shape errors are decoding errors with a developer message",
    arguments: [
      (EnvelopeRule.codeZero, #"{"msg":"no code"}"#, "has no \"code\""),
      (EnvelopeRule.statusOK, #"{"error":"Gateway down"}"#, "has no \"status\""),
      (EnvelopeRule.codeZero, #"{"code":0,"data":null}"#, "value missing"),
      (EnvelopeRule.codeZero, #"{"code":0}"#, "no value at"),
      (EnvelopeRule.codeZero, #"{"code":0,"data":{"name":"A","age":"old"}}"#, "age"),
      (EnvelopeRule.statusOK, #"{"status":"ok","name":"A"}"#, "\"age\" not found"),
    ])
  func envelopeShapeErrors(rule: EnvelopeRule, body: String, detail: String) async throws {
    let stub = StubTransport([.json(body)])
    let error = await courierError {
      try await client(stub, .envelope(rule)).send(Endpoint<Profile>(.get, "x"))
    }
    let failure = try #require(error)
    #expect(failure.kind == .decoding)
    #expect(failure.debugDescription.contains(detail), "\(failure.debugDescription)")
    #expect(!failure.reason.contains("Profile"))
    #expect(!failure.reason.contains("age"))
    #expect(failure.response?.bodyText == body)
  }

  @Test("non-UTF-8 bytes inside the payload are a decoding error")
  func nonUTF8Payload() async throws {
    var body = Data(#"{"code":0,"data":{"name":""#.utf8)
    body.append(contentsOf: [0xFF, 0xFE, 0xC3])
    body.append(Data(#"","age":1}}"#.utf8))
    // The envelope scan validates every string, as Foundation's parser does.
    let error = await courierError {
      try await client(StubTransport([.data(body)]), .envelope(.codeZero)).send(
        Endpoint<Profile>(.get, "x"))
    }
    #expect(error?.kind == .decoding)
    #expect(error?.stage == "envelope")
    #expect(error?.debugDescription.contains("invalid UTF-8") == true)
    let plain = await courierError {
      try await client(StubTransport([.data(body)]), .standard).send(
        Endpoint<Profile>(.get, "x"))
    }
    #expect(plain?.kind == .decoding)
    #expect(plain?.underlying is DecodingError)
    let text = await courierError {
      try await client(StubTransport([.data(Data([0xFF, 0xC3]))]), .standard).send(
        Endpoint<String>(.get, "x"))
    }
    #expect(text?.kind == .decoding)
    #expect(text?.debugDescription.contains("UTF-8") == true)
  }

  @Test("matchesAcrossTypes lets \"0\" match 0")
  func lenientCodeTypes() async throws {
    var rule = EnvelopeRule.codeZero
    rule.matchesAcrossTypes = true
    let stub = StubTransport([.json(#"{"code":"0","data":{"name":"A","age":1}}"#)])
    #expect(try await client(stub, .envelope(rule)).send(Endpoint<Profile>(.get, "x")).age == 1)
  }

  @Test("a body over the decoding limit is bodyTooLarge, without decoding it")
  func hugeBody() async throws {
    var big = Data(#"{"code":0,"data":""#.utf8)
    big.append(Data(repeating: UInt8(ascii: "a"), count: 50 * 1024 * 1024))
    big.append(Data(#""}"#.utf8))
    let stub = StubTransport([.data(big), .data(big)])
    let client = client(stub, .envelope(.codeZero))
    let error = await courierError { try await client.send(Endpoint<String>(.get, "x")) }
    #expect(error?.kind == .bodyTooLarge)
    #expect(error?.reason == "The data is too large to handle.")
    let plain = await courierError {
      try await stubClient(stub).send(Endpoint<Profile>(.get, "x"))
    }
    #expect(plain?.kind == .bodyTooLarge)
  }

  @Test("a decoding error's coding path is in debugDescription, never in the reason")
  func codingPathInDebugOnly() async throws {
    let stub = StubTransport([.json(#"{"items":[{"name":"A","age":1},{"name":"B"}]}"#)])
    struct Page: Decodable, Sendable { let items: [Profile] }
    let error = await courierError { try await stubClient(stub).send(Endpoint<Page>(.get, "x")) }
    let failure = try #require(error)
    #expect(failure.kind == .decoding)
    #expect(failure.stage == "decoding")
    #expect(failure.debugDescription.contains("items[1]"))
    #expect(failure.reason == "The server sent a response the app could not read.")
    #expect(failure.underlying is DecodingError)
  }

  @Test(
    "a body still under a Content-Encoding nothing decoded says so: JSON, key path, envelope")
  func undecodedEncoding() async throws {
    var headers = HTTPHeaders()
    try headers.set("Content-Type", "application/json")
    try headers.set("Content-Encoding", " br ")
    let brotli = Data([0x1B, 0x30, 0x01, 0xF8, 0x1C, 0x07, 0x9A])
    let stub = StubTransport(fallback: StubResponse(headers: headers, body: brotli))
    let cases: [(ResponsePipeline, Endpoint<Profile>)] = [
      (.standard, Endpoint<Profile>(.get, "a")),
      (.standard, Endpoint<Profile>(.get, "a").decoded(at: "data")),
      (.envelope(.codeZero), Endpoint<Profile>(.get, "a")),
    ]
    for (pipeline, endpoint) in cases {
      let failure = await courierError { try await client(stub, pipeline).send(endpoint) }
      #expect(failure?.kind == .decoding)
      #expect(
        failure?.debugMessage.contains("still encoded (Content-Encoding: br)") == true,
        "\(String(reflecting: failure))")
    }
    // Bad JSON without an encoding gets no such note.
    let bad = StubTransport([.json("{not json")])
    let failure = await courierError {
      try await client(bad, .standard).send(Endpoint<Profile>(.get, "a"))
    }
    #expect(failure?.debugMessage.contains("encoded") == false)
  }
}
