import CourierCore
import CourierTesting
import Foundation
import Testing

@Suite("Reasons for people, in English and Simplified Chinese", .timeLimit(.minutes(5)))
struct ReasonTests {
  /// One way to make each kind happen through a client, with its reasons.
  static let kinds: [(CourierError.Kind, StubResponse, String, String)] = [
    (
      .notReachable, .failure(.notReachable),
      "You seem to be offline. Check your network connection.", "您连接的网络不正常，请检查您的网络连接"
    ),
    (.timedOut, .failure(.timedOut), "The server took too long to respond.", "服务器连接超时"),
    (
      .cannotConnect, .failure(.cannotConnect),
      "Could not connect to the server. Please try again later.", "无法连接到服务器，请稍后重试"
    ),
    (
      .cannotFindHost, .failure(.cannotFindHost),
      "The server could not be found. Check your network connection.", "找不到服务器，请检查您的网络连接"
    ),
    (
      .connectionLost, .failure(.connectionLost),
      "The network connection was lost. Please try again.", "网络连接已断开，请重试"
    ),
    (
      .secureConnectionFailed, .failure(.secureConnectionFailed),
      "A secure connection to the server could not be made.", "无法与服务器建立安全连接"
    ),
    (
      .badResponse, .failure(.badResponse),
      "The server sent an invalid response.", "服务器返回了无效的响应"
    ),
    (
      .corruptBody, .failure(.corruptBody),
      "The data arrived damaged. Please try again.", "数据已损坏，请重试"
    ),
    (
      .bodyTooLarge, .failure(.bodyTooLarge),
      "The data is too large to handle.", "数据过大，无法处理"
    ),
    (.cancelled, .failure(.cancelled), "The request was cancelled.", "请求已取消"),
    (
      .transport, .failure(.transport),
      "A network error occurred. Please try again.", "网络错误，请重试"
    ),
    (
      .invalidRequest, .failure(.invalidRequest),
      "The app could not make this request. Please update the app or contact support.",
      "无法发起该请求，请更新应用或联系客服"
    ),
    (.httpStatus, .status(502), "The server is busy. Please try again later.", "服务器繁忙，请稍后再试"),
    (.business, .json(#"{"code":3}"#), "The request could not be completed.", "请求未能完成"),
    (
      .decoding, .json(#"{"code":0,"data":[]}"#),
      "The server sent a response the app could not read.", "服务器返回的数据无法解析"
    ),
  ]

  @Test("every kind leaves the client with its reason in en and zh-Hans", arguments: kinds)
  func everyKind(
    kind: CourierError.Kind, stub: StubResponse, english: String, chinese: String
  )
    async throws
  {
    for (locale, text) in [("en", english), ("zh-Hans", chinese)] {
      let client = stubClient(StubTransport([stub]), pipeline: .envelope(.codeZero), locale: locale)
      let error = await courierError { try await client.send(Endpoint<Profile>(.get, "x")) }
      let failure = try #require(error)
      #expect(failure.kind == kind)
      #expect(failure.reason == text)
      #expect(failure.errorDescription == text)
      #expect(failure.localizedDescription == text)
      #expect(!failure.reason.contains("http"))
      #expect(!failure.reason.contains("Profile"))
      #expect(failure.debugDescription.contains("CourierError.\(kind.name)"))
    }
  }

  @Test("debugDescription names the kind and stage and hides the query, which may hold secrets")
  func debugDescriptionRedactsQuery() async throws {
    let client = stubClient(StubTransport([.status(500)]))
    let error = await courierError {
      try await client.send(Endpoint<Void>(.get, "x").query("token", "s3cr3t"))
    }
    let text = try #require(error).debugDescription
    #expect(text.contains("stage: status"))
    #expect(text.contains("status: 500"))
    #expect(!text.contains("s3cr3t"))
    #expect(text.contains("token=***"))
  }

  @Test("a request's description hides query values and user info")
  func requestDescriptionRedacts() throws {
    let url = try #require(URL(string: "https://user:pw@api.test/v1/x?token=s3cr3t&page=2&flag"))
    let text = Request(method: .post, url: url).description
    #expect(text == "POST https://***:***@api.test/v1/x?token=***&page=***&flag")
  }

  @Test("one reason can be overridden; other keys and locales are untouched")
  func overrideOne() async throws {
    var reasons = ReasonCatalog.standard
    reasons.set("Please log in again.", for: "http.401", locale: "en")
    let client = Client(
      baseURL: testBase, transport: StubTransport([.status(401), .status(403)]), reasons: reasons,
      locale: "en")
    let first = await courierError { try await client.send(Endpoint<Void>(.get, "x")) }
    let second = await courierError { try await client.send(Endpoint<Void>(.get, "x")) }
    #expect(first?.reason == "Please log in again.")
    #expect(second?.reason == "You don't have permission to do this.")
    #expect(reasons.text(for: "http.401", locale: "zh-Hans") == "登录已过期，请重新登录")
  }

  @Test("a locale added from code falls back to English for missing keys")
  func addLocaleFromCode() async throws {
    var reasons = ReasonCatalog.standard
    reasons.add(["timedOut": "サーバーの応答がありません。"], locale: "ja")
    let client = Client(
      baseURL: testBase,
      transport: StubTransport([.failure(.timedOut), .status(404)]),
      reasons: reasons, locale: "ja")
    let timedOut = await courierError { try await client.send(Endpoint<Void>(.get, "x")) }
    let notFound = await courierError { try await client.send(Endpoint<Void>(.get, "x")) }
    #expect(timedOut?.reason == "サーバーの応答がありません。")
    #expect(notFound?.reason == "The requested content could not be found.")
  }

  @Test("locales load from JSON and .strings files; bad files are clear errors")
  func loadFromFiles() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-reasons-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let json = directory.appendingPathComponent("fr.json")
    try Data(#"{"timedOut":"Le serveur met trop de temps.","http.404":"Introuvable."}"#.utf8)
      .write(to: json)
    let strings = directory.appendingPathComponent("de.strings")
    try Data(
      """
      /* German */
      "timedOut" = "Zeitüberschreitung.";
      // a comment
      "http.5xx" = "Server \\"busy\\".";
      """.utf8
    ).write(to: strings)
    var reasons = ReasonCatalog.standard
    try reasons.load(contentsOf: json, locale: "fr")
    try reasons.load(contentsOf: strings, locale: "de")
    #expect(reasons.text(for: "http.404", locale: "fr") == "Introuvable.")
    #expect(reasons.text(for: "timedOut", locale: "de") == "Zeitüberschreitung.")
    #expect(reasons.text(for: "http.5xx", locale: "de") == "Server \"busy\".")
    #expect(reasons.locales == ["de", "en", "fr", "zh-Hans", "zh-Hant"])

    let broken = directory.appendingPathComponent("x.strings")
    try Data(#""key" = "unterminated"#.utf8).write(to: broken)
    let error = #expect(throws: CourierError.self) {
      try reasons.load(contentsOf: broken, locale: "x")
    }
    #expect(error?.kind == .invalidRequest)
    #expect(throws: CourierError.self) {
      try reasons.load(contentsOf: directory.appendingPathComponent("missing.json"), locale: "x")
    }
  }

  @Test(
    "the preferred language picks the locale",
    arguments: [
      (["zh-Hans-CN"], "zh-Hans"), (["zh_CN.UTF-8"], "zh-Hans"), (["zh"], "zh-Hans"),
      (["en_US.UTF-8"], "en"), (["fr-FR", "zh-CN"], "zh-Hans"), (["de"], "en"), ([], "en"),
    ])
  func bestLocale(preferred: [String], expected: String) {
    #expect(ReasonCatalog.standard.bestLocale(for: preferred) == expected)
  }

  @Test("a catalog without texts still gives a readable sentence")
  func emptyCatalog() async {
    let client = Client(
      baseURL: testBase, transport: StubTransport([.status(500)]), reasons: .empty, locale: "en")
    let error = await courierError { try await client.send(Endpoint<Void>(.get, "x")) }
    #expect(error?.reason == "Something went wrong. Please try again.")
  }
}
