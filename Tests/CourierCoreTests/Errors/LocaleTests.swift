import CourierCore
import CourierTesting
import Foundation
import Testing

@Suite(
  "Locale: environment precedence, Traditional Chinese, complete tables", .timeLimit(.minutes(5)))
struct LocaleTests {
  /// An environment, the system list, the languages it gives and the locale chosen.
  static let environments: [([String: String], [String], [String], String)] = [
    (["LC_ALL": "C", "LANG": "zh_CN.UTF-8"], ["zh-Hans-CN"], ["en"], "en"),
    (["LC_ALL": "POSIX", "LANGUAGE": "zh_CN", "LANG": "zh_CN.UTF-8"], [], ["en"], "en"),
    (["LANG": "C.UTF-8", "LANGUAGE": "zh_TW"], ["zh-Hant"], ["en"], "en"),
    (
      ["LC_MESSAGES": "zh_TW.UTF-8", "LANG": "en_US.UTF-8"], ["en-US"], ["zh_TW.UTF-8"],
      "zh-Hant"
    ),
    (
      ["LC_ALL": "zh_CN.UTF-8", "LC_MESSAGES": "en_US.UTF-8", "LANG": "en_US.UTF-8"], [],
      ["zh_CN.UTF-8"], "zh-Hans"
    ),
    (
      ["LANGUAGE": "zh_TW:en", "LANG": "de_DE.UTF-8"], [], ["zh_TW", "en", "de_DE.UTF-8"],
      "zh-Hant"
    ),
    (
      ["LANGUAGE": "fr::C:zh_HK", "LANG": "en_US.UTF-8"], [], ["fr", "zh_HK", "en_US.UTF-8"],
      "zh-Hant"
    ),
    (["LANGUAGE": "zh_CN"], ["zh-Hant-TW"], ["zh-Hant-TW"], "zh-Hant"),
    ([:], ["zh-Hans-CN", "en"], ["zh-Hans-CN", "en"], "zh-Hans"),
    ([:], [], [], "en"),
    (["LC_ALL": "", "LC_MESSAGES": "", "LANG": "zh_TW.Big5"], [], ["zh_TW.Big5"], "zh-Hant"),
  ]

  @Test(
    "a client's locale is matched as bestLocale matches it: regions and bare languages",
    arguments: [
      ("zh-TW", "zh-Hant"), ("zh-HK", "zh-Hant"), ("zh_TW.UTF-8", "zh-Hant"),
      ("zh-CN", "zh-Hans"), ("zh", "zh-Hans"), ("zh-SG", "zh-Hans"), ("en-GB", "en"),
      ("de", "en"), ("zh-Hant", "zh-Hant"),
    ])
  func clientLocaleMatched(locale: String, table: String) async {
    let stub = StubTransport([.failure(.cannotConnect)])
    let client = Client(baseURL: URL(string: "https://api.test/"), transport: stub, locale: locale)
    let error = await courierError { try await client.send(Endpoint<Data>(.get, "x")) }
    #expect(error?.reason == ReasonCatalog.standard.text(for: "cannotConnect", locale: table))
  }

  @Test("LC_ALL, LC_MESSAGES, LANG decide; C means English; LANGUAGE leads otherwise")
  func environmentPrecedence() {
    for (environment, system, languages, locale) in Self.environments {
      let found = ReasonCatalog.preferredLanguages(environment: environment, system: system)
      #expect(found == languages, "\(environment)")
      #expect(ReasonCatalog.standard.bestLocale(for: found) == locale, "\(environment)")
    }
  }

  @Test(
    "Chinese tags resolve by script, then region",
    arguments: [
      ("zh-TW", "zh-Hant"), ("zh-HK", "zh-Hant"), ("zh-MO", "zh-Hant"), ("zh-Hant", "zh-Hant"),
      ("zh-Hant-HK", "zh-Hant"), ("zh_TW.UTF-8", "zh-Hant"), ("zh-hant-cn", "zh-Hant"),
      ("yue-Hant-HK", "zh-Hant"), ("zh_HK.Big5HKSCS", "zh-Hant"), ("zh", "zh-Hans"),
      ("zh-CN", "zh-Hans"), ("zh-SG", "zh-Hans"), ("zh-Hans", "zh-Hans"),
      ("zh-Hans-HK", "zh-Hans"), ("zh_CN.UTF-8", "zh-Hans"), ("zh-MY", "zh-Hans"),
      ("yue-Hans", "zh-Hans"), ("en_US.UTF-8", "en"), ("EN-gb", "en"), ("sr_RS@latin", "en"),
      ("", "en"),
    ])
  func chinese(tag: String, expected: String) {
    #expect(ReasonCatalog.standard.bestLocale(for: [tag]) == expected)
  }

  @Test("without a zh-Hant table, Traditional Chinese falls back to zh-Hans, not English")
  func traditionalFallsBackToSimplified() {
    var reasons = ReasonCatalog.empty
    reasons.add(["timedOut": "Timed out."], locale: "en")
    reasons.add(["timedOut": "超时"], locale: "zh-Hans")
    #expect(reasons.bestLocale(for: ["zh-TW"]) == "zh-Hans")
    reasons.add(["timedOut": "Zeitüberschreitung"], locale: "de-DE")
    #expect(reasons.bestLocale(for: ["de_DE.UTF-8"]) == "de-DE")
    #expect(reasons.bestLocale(for: ["de-AT"]) == "de-DE")
  }

  @Test("a zh-Hant client speaks Traditional Chinese")
  func traditionalThroughClient() async throws {
    let locale = ReasonCatalog.standard.bestLocale(for: ["zh-Hant-HK"])
    let client = Client(
      baseURL: testBase,
      transport: StubTransport([
        .status(401), .status(503), .failure(CourierError(kind: .timedOut)),
      ]),
      locale: locale)
    var reasons: [String?] = []
    for _ in 0..<3 {
      reasons.append(
        await courierError { try await client.send(Endpoint<Void>(.get, "x")) }?.reason)
    }
    #expect(reasons == ["登入已過期，請重新登入", "伺服器忙碌中，請稍後再試", "伺服器回應逾時"])
  }

  /// The `{name}` placeholders of a text, in order.
  static func placeholders(_ text: String) -> [Substring] {
    var found: [Substring] = []
    var rest = text[...]
    while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
      found.append(rest[open...close])
      rest = rest[rest.index(after: close)...]
    }
    return found
  }

  @Test("every built-in locale has exactly the English keys, with the same placeholders")
  func builtInTablesComplete() {
    let catalog = ReasonCatalog.standard
    #expect(catalog.locales == ["en", "zh-Hans", "zh-Hant"])
    let english = catalog.texts(locale: "en")
    #expect(english["middleware"] == "The app could not complete the request.")
    #expect(catalog.text(for: "middleware", locale: "zh-Hans") == "应用无法完成该请求")
    #expect(catalog.text(for: "middleware", locale: "zh-Hant") == "應用程式無法完成此請求")
    for locale in catalog.locales {
      let texts = catalog.texts(locale: locale)
      #expect(Set(texts.keys) == Set(english.keys), "\(locale)")
      for (key, text) in texts {
        #expect(!text.isEmpty, "\(locale) \(key)")
        #expect(
          Self.placeholders(text) == Self.placeholders(english[key] ?? ""), "\(locale) \(key)")
      }
    }
    #expect(Self.placeholders(english["http.429.retryAfter"] ?? "") == ["{seconds}"])
  }

  @Test("a middleware error reads as the app's failure, in each built-in language")
  func middlewareKey() async throws {
    for (locale, text) in [
      ("en", "The app could not complete the request."), ("zh-Hans", "应用无法完成该请求"),
      ("zh-Hant", "應用程式無法完成此請求"),
    ] {
      let error = CourierError(kind: CourierError.Kind("middleware"))
      #expect(ReasonCatalog.standard.reason(for: error, locale: locale) == text)
    }
  }
}
