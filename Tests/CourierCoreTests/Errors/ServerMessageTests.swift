import CourierCore
import CourierTesting
import Foundation
import Testing

@Suite("Server messages as reasons: policy, cleaning, cap and guard", .timeLimit(.minutes(5)))
struct ServerMessageTests {
  /// The client with the code-zero envelope, in `locale`, with `policy`.
  static func client(
    _ responses: [StubResponse], locale: String, policy: ServerMessagePolicy = .standard
  ) -> Client {
    var reasons = ReasonCatalog.standard
    reasons.serverMessages = policy
    return Client(
      baseURL: testBase, transport: StubTransport(responses), pipeline: .envelope(.codeZero),
      reasons: reasons, locale: locale)
  }

  /// The error for one response.
  static func failure(
    _ response: StubResponse, locale: String, policy: ServerMessagePolicy = .standard
  ) async -> CourierError? {
    let client = client([response], locale: locale, policy: policy)
    return await courierError { try await client.send(Endpoint<Profile>(.get, "x")) }
  }

  /// `{"code":code,"msg":message}` with `message` JSON-escaped.
  static func envelope(code: Int, message: String, status: Int = 200) throws -> StubResponse {
    let object: [String: Any] = ["code": code, "msg": message]
    let data = try JSONSerialization.data(withJSONObject: object)
    return .json(String(decoding: data, as: UTF8.self), status: status)
  }

  @Test("a 4xx message with a path, a line and a token falls back to the catalog (issue #6)")
  func internalsIn4xx() async throws {
    let raw = "SQL error at /srv/app/db.py:42 token=abc"
    for (locale, text) in [
      ("en", "The server did not accept the request."), ("zh-Hans", "服务器未接受该请求"),
      ("zh-Hant", "伺服器不接受此請求"),
    ] {
      let error = await Self.failure(
        try Self.envelope(code: 1, message: raw, status: 400), locale: locale)
      #expect(error?.kind == .httpStatus)
      #expect(error?.reason == text)
      #expect(error?.serverMessage == raw)
      #expect(error?.code == "1")
    }
  }

  @Test("control characters and line breaks go, whitespace collapses, ends are trimmed")
  func cleaning() async throws {
    let cases = [
      ("  手机号\n格式\t\t不正确\u{0} ", "手机号 格式 不正确"),
      ("Phone\r\nnumber\u{1B}[31m \u{202E}invalid\u{2028}", "Phone number[31m invalid"),
      ("余\u{FEFF}额　不足", "余额 不足"),
    ]
    for (raw, shown) in cases {
      for locale in ["en", "zh-Hans"] {
        let error = await Self.failure(try Self.envelope(code: 3, message: raw), locale: locale)
        #expect(error?.kind == .business)
        #expect(error?.reason == shown)
        #expect(error?.serverMessage == raw)
      }
    }
  }

  @Test("a message with nothing left after cleaning gives the catalog text")
  func nothingLeft() async throws {
    for (locale, text) in [("en", "The request could not be completed."), ("zh-Hans", "请求未能完成")] {
      for raw in ["\u{0}\u{7}", " \n\t ", "\u{202E}\u{1B}", ""] {
        let error = await Self.failure(try Self.envelope(code: 3, message: raw), locale: locale)
        #expect(error?.reason == text, "\(raw.debugDescription)")
      }
    }
  }

  @Test("long messages are cut to 120 Characters, ellipsis included")
  func lengthCap() async throws {
    let english = String(repeating: "Your order cannot be changed now. ", count: 10)
    let chinese = String(repeating: "您的订单当前无法修改", count: 20)
    let emoji = String(repeating: "👨‍👩‍👧", count: 200)
    for raw in [english, chinese, emoji] {
      for locale in ["en", "zh-Hans"] {
        let error = await Self.failure(try Self.envelope(code: 3, message: raw), locale: locale)
        let reason = try #require(error?.reason)
        #expect(reason.count == ServerMessagePolicy.defaultMaximumLength)
        #expect(reason.hasSuffix("…"))
        #expect(raw.hasPrefix(reason.dropLast()))
        #expect(error?.serverMessage == raw)
      }
    }
    let exact = String(repeating: "好", count: 120)
    let error = await Self.failure(try Self.envelope(code: 3, message: exact), locale: "zh-Hans")
    #expect(error?.reason == exact)
  }

  @Test("a cut ends on a word, not on a space before the ellipsis")
  func cutTrimsSpace() {
    let policy = ServerMessagePolicy(
      showsBusinessMessages: true, showsClientErrorMessages: true, maximumLength: 6)
    #expect(policy.displayText(for: "abcd efgh") == "abcd…")
    #expect(policy.displayText(for: "abcdef") == "abcdef")
    var tiny = policy
    tiny.maximumLength = 1
    #expect(tiny.displayText(for: "ab") == nil)
    #expect(tiny.displayText(for: "a") == "a")
  }

  @Test("a huge message is read only as far as it can be shown; the guard sees past the cut")
  func hugeMessage() {
    let policy = ServerMessagePolicy.standard
    let filler = String(repeating: "订单处理中请稍候", count: 1_000_000 / 8)
    let shown = policy.displayText(for: filler + " token=abc")
    #expect(shown?.count == 120)
    #expect(shown?.hasSuffix("…") == true)
    // A URL that starts just before the cut would leave "https:/…" on screen.
    let straddling = String(repeating: "a", count: 115) + " https://internal.test/x"
    #expect(policy.displayText(for: straddling) == nil)
    let unlimited = ServerMessagePolicy(
      showsBusinessMessages: true, showsClientErrorMessages: true, maximumLength: .max)
    #expect(unlimited.displayText(for: "短句") == "短句")
  }

  /// Messages that look like internals, one per rule.
  static let internals = [
    "See https://status.example.test for details",
    "invalid token=abc123",
    "Password = hunter2",
    "access_token=xyz expired",
    #"bad request {"apiKey": "k-123"}"#,
    "secret=s3cr3t",
    "error in db.py:42",
    "at com.example.OrderService.place(OrderService.java:88)",
    "Fatal error in Handler.swift: index out of range",
    "Traceback (most recent call last): File x",
    "java.lang.NullPointerException",
    "Syntax error at line 3",
    "Parse error on line 12",
    #"File "handler", line 7, in run"#,
    "Stack trace: frame 0",
    "goroutine 1 [running]:",
    "connect to db.internal:5432 failed",
  ]

  @Test("messages that look like internals give the catalog text", arguments: internals)
  func refused(raw: String) async throws {
    for (locale, text) in [("en", "The request could not be completed."), ("zh-Hans", "请求未能完成")] {
      let error = await Self.failure(try Self.envelope(code: 3, message: raw), locale: locale)
      #expect(error?.kind == .business)
      #expect(error?.reason == text)
      #expect(error?.serverMessage == raw)
    }
    let trusting = ServerMessagePolicy(
      showsBusinessMessages: true, showsClientErrorMessages: true, refusesInternalDetails: false)
    #expect(trusting.displayText(for: raw) == raw)
  }

  @Test(
    "ordinary messages pass the guard",
    arguments: [
      "手机号格式不正确", "Phone number invalid", "Password must be at least 8 characters.",
      "Your key has expired: request a new one.", "Version 2.0: please update the app.",
      "Exceptional offer ended", "Limit 3/day. Try again at 10:30.", "登录密码错误，还可尝试 2 次",
      "Token expired",
    ])
  func passes(raw: String) async throws {
    let error = await Self.failure(try Self.envelope(code: 3, message: raw), locale: "zh-Hans")
    #expect(error?.reason == raw)
  }

  @Test("presets: which errors show the server's message")
  func presets() async throws {
    let business = try Self.envelope(code: 40101, message: "登录已失效")
    let clientError = try Self.envelope(code: 1001, message: "手机号格式不正确", status: 400)
    let serverError = try Self.envelope(code: 5000, message: "数据库繁忙", status: 503)
    let cases: [(ServerMessagePolicy, String, String, String)] = [
      (.standard, "登录已失效", "手机号格式不正确", "服务器繁忙，请稍后再试"),
      (.businessAndClientErrors, "登录已失效", "手机号格式不正确", "服务器繁忙，请稍后再试"),
      (.businessOnly, "登录已失效", "服务器未接受该请求", "服务器繁忙，请稍后再试"),
      (.never, "请求未能完成", "服务器未接受该请求", "服务器繁忙，请稍后再试"),
    ]
    for (policy, first, second, third) in cases {
      for (response, text) in [(business, first), (clientError, second), (serverError, third)] {
        let error = await Self.failure(response, locale: "zh-Hans", policy: policy)
        #expect(error?.reason == text)
        #expect(error?.serverMessage != nil)
      }
    }
    #expect(ReasonCatalog.standard.serverMessages == .businessAndClientErrors)
    #expect(ReasonCatalog.empty.serverMessages == .standard)
  }

  @Test("the policy travels with the catalog: two clients, two policies")
  func perClient() async throws {
    let response = try Self.envelope(code: 3, message: "Coupon already used")
    let showing = await Self.failure(response, locale: "en")
    let hiding = await Self.failure(response, locale: "en", policy: .never)
    #expect(showing?.reason == "Coupon already used")
    #expect(hiding?.reason == "The request could not be completed.")
  }
}
