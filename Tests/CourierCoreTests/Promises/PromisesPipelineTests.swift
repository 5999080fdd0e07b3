import CourierCore
import CourierTesting
import Foundation
import Testing

/// Promises of the Errors and reasons and the Response pipeline articles
/// (Sources/Courier/Courier.docc) that no other test held (see `Docs/Promises.md`).
@Suite("Promises: reasons, envelopes and text", .timeLimit(.minutes(5)))
struct PromisesPipelineTests {
  // MARK: Reasons

  @Test(
    "the table of reasons, in English, Simplified and Traditional Chinese",
    arguments: [
      (
        "timedOut", "The server took too long to respond.", "服务器连接超时", "伺服器回應逾時"
      ),
      (
        "notReachable", "You seem to be offline. Check your network connection.",
        "您连接的网络不正常，请检查您的网络连接", "網路連線異常，請檢查您的網路連線"
      ),
      (
        "http.401", "Your session has expired. Please sign in again.", "登录已过期，请重新登录",
        "登入已過期，請重新登入"
      ),
      (
        "http.5xx", "The server is busy. Please try again later.", "服务器繁忙，请稍后再试",
        "伺服器忙碌中，請稍後再試"
      ),
    ])
  func reasonTable(key: String, english: String, simplified: String, traditional: String) {
    let catalog = ReasonCatalog.standard
    #expect(catalog.text(for: key, locale: "en") == english)
    #expect(catalog.text(for: key, locale: "zh-Hans") == simplified)
    #expect(catalog.text(for: key, locale: "zh-Hant") == traditional)
  }

  @Test("a failed refresh reads: Your session has expired. Please sign in again.")
  func authenticationFailedReason() {
    let error = CourierError(kind: .authenticationFailed)
    #expect(error.reason == "Your session has expired. Please sign in again.")
    #expect(
      ReasonCatalog.standard.reason(for: error, locale: "zh-Hans") == "登录已过期，请重新登录")
  }

  @Test("Courier's own texts hold no URL, token, type name, stack trace or stray placeholder")
  func ownTextsAreForPeople() {
    let catalog = ReasonCatalog.standard
    #expect(Set(catalog.locales) == ["en", "zh-Hans", "zh-Hant"])
    for locale in catalog.locales {
      for (key, text) in catalog.texts(locale: locale) {
        let lowered = text.lowercased()
        for word in ["://", "token", "exception", "traceback", "courier", "nil", "http"] {
          #expect(!lowered.contains(word), "\(locale) \(key): \(text)")
        }
        let withoutPlaceholder = text.replacingOccurrences(of: "{seconds}", with: "")
        #expect(!withoutPlaceholder.contains("{") && !withoutPlaceholder.contains("}"))
        #expect(text.contains("{seconds}") == (key == "http.429.retryAfter"), "\(locale) \(key)")
      }
    }
  }

  @Test("English is the fallback language: unknown languages, and en-GB by its primary language")
  func englishFallback() {
    let catalog = ReasonCatalog.standard
    #expect(catalog.bestLocale(for: ["en-GB"]) == "en")
    #expect(catalog.bestLocale(for: ["ja-JP", "ko"]) == "en")
    #expect(catalog.bestLocale(for: ["zh-SG"]) == "zh-Hans")
  }

  @Test("a maximum length below 2 shows no message that is too long, and a short one as it is")
  func tinyMaximumLength() {
    var policy = ServerMessagePolicy.standard
    #expect(policy.maximumLength == 120)
    #expect(ServerMessagePolicy.defaultMaximumLength == 120)
    #expect(policy.refusesInternalDetails)
    policy.maximumLength = 1
    #expect(policy.displayText(for: "ab") == nil)
    #expect(policy.displayText(for: "a") == "a")
  }

  // MARK: Envelopes

  @Test("matchesAcrossTypes never matches hex, spaces or infinities")
  func acrossTypesRefusals() async throws {
    var rule = EnvelopeRule.codeZero
    rule.matchesAcrossTypes = true
    for code in [#""0x0""#, #"" 0""#, #""0 ""#, #""inf""#, #""-inf""#, #""Infinity""#, #""NaN""#] {
      let stub = StubTransport([.json(#"{"code":\#(code),"msg":"m","data":{}}"#)])
      let error = await courierError {
        try await stubClient(stub, pipeline: .envelope(rule)).send(Endpoint<Data>(.get, "x"))
      }
      #expect(error?.kind == .business, "\(code)")
    }
  }

  // MARK: Text

  @Test(
    "a byte order mark wins over the charset the label names, and is dropped",
    arguments: [
      ("text/plain; charset=utf-16be", [0xFF, 0xFE, 0xE9, 0x00] as [UInt8], "é"),
      ("text/plain; charset=utf-16le", [0xFE, 0xFF, 0x00, 0xE9], "é"),
      ("text/plain; charset=iso-8859-1", [0xEF, 0xBB, 0xBF, 0xC3, 0xA9], "é"),
      ("text/plain; charset=gbk", [0xFF, 0xFE, 0xE5, 0x65], "日"),
    ])
  func byteOrderMarkWins(contentType: String, bytes: [UInt8], expected: String) async throws {
    var headers = HTTPHeaders()
    try headers.add(.contentType, contentType)
    let stub = StubTransport([StubResponse(status: 200, headers: headers, body: Data(bytes))])
    #expect(try await stubClient(stub).send(Endpoint<String>(.get, "t")) == expected)
  }

  @Test(
    "GB2312 is read as GBK; Big5-HKSCS, EUC-JP and EUC-KR through iconv",
    arguments: [
      // 臺 is GBK's C5 5F, which GB2312 does not have.
      ("text/plain; charset=GB2312", [0xC5, 0x5F] as [UInt8], "臺"),
      // 嘅 is only in Big5-HKSCS (9D EF).
      ("text/plain; charset=Big5-HKSCS", [0x9D, 0xEF], "嘅"),
      ("text/plain; charset=EUC-JP", [0xC6, 0xFC, 0xCB, 0xDC], "日本"),
      ("text/plain; charset=EUC-KR", [0xC7, 0xD1, 0xB1, 0xB9], "한국"),
    ])
  func iconvCharsets(contentType: String, bytes: [UInt8], expected: String) async throws {
    var headers = HTTPHeaders()
    try headers.add(.contentType, contentType)
    let stub = StubTransport([StubResponse(status: 200, headers: headers, body: Data(bytes))])
    #expect(try await stubClient(stub).send(Endpoint<String>(.get, "t")) == expected)
  }
}
