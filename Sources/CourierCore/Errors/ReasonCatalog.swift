import Foundation

/// The user-readable texts behind ``CourierError/reason``, per error kind and HTTP status, in
/// several languages, and the policy for showing the server's own messages.
///
/// Built in: English (`en`), Simplified Chinese (`zh-Hans`) and Traditional Chinese
/// (`zh-Hant`). A ``Client`` picks one language (by default the process's preferred language,
/// see ``processPreferredLanguages``, falling back to English) and every error that leaves it
/// gets its reason from here.
///
/// ## Keys
/// - An error kind's name: `"timedOut"`, `"notReachable"`, `"business"`, `"middleware"`, …
///   (see ``CourierError/Kind``).
/// - An exact HTTP status: `"http.401"`, `"http.404"`, `"http.429"`.
/// - An HTTP status class: `"http.4xx"`, `"http.5xx"`.
/// - `"http.429.retryAfter"`: used for 429 when the server asked for a wait of more than
///   zero (`Retry-After`); `{seconds}` is replaced with the wait in whole seconds, rounded
///   up, at most ``RetryAfter/maximumWait`` (86,400).
///
/// ## The server's messages
/// ``serverMessages`` decides when the message of a business envelope is the reason instead
/// of the catalog's text. By default (``ServerMessagePolicy/standard``) it is for
/// ``CourierError/Kind/business`` errors and for error statuses (4xx) whose body carried an
/// envelope with a message, after the message is cleaned to one line, capped at 120
/// Characters and checked for things that look like internals (URLs, credentials, source
/// locations, stack traces). A message that does not pass gives the catalog's text; the raw
/// message stays in ``CourierError/serverMessage``.
///
/// ## Customising
/// ```swift
/// var reasons = ReasonCatalog.standard
/// reasons.set("Please log in again.", for: "http.401", locale: "en")
/// try reasons.load(contentsOf: URL(fileURLWithPath: "ja.json"), locale: "ja")
/// reasons.serverMessages = .businessOnly
/// let client = Client(baseURL: url, transport: transport, reasons: reasons, locale: "ja")
/// ```
/// A JSON file is an object of key → text; a `.strings` file is `"key" = "text";` lines.
/// Keys missing from a locale fall back to English, then to a generic sentence.
public struct ReasonCatalog: Sendable {
  private var tables: [String: [String: String]]

  /// When the server's own message is the reason, and how it is cleaned; default
  /// ``ServerMessagePolicy/standard``.
  public var serverMessages: ServerMessagePolicy = .standard

  /// The catalog with the built-in English, Simplified Chinese and Traditional Chinese texts.
  public static let standard = ReasonCatalog(tables: [
    "en": BuiltInReasons.english, "zh-Hans": BuiltInReasons.simplifiedChinese,
    "zh-Hant": BuiltInReasons.traditionalChinese,
  ])

  /// A catalog with no texts at all: every reason is the generic fallback until you add some.
  public static let empty = ReasonCatalog(tables: [:])

  private init(tables: [String: [String: String]]) {
    self.tables = tables
  }

  /// The locales that have at least one text.
  public var locales: [String] { tables.keys.sorted() }

  /// The text for `key` in `locale` itself, without fallback.
  public func text(for key: String, locale: String) -> String? {
    tables[locale]?[key]
  }

  /// Every text of `locale` itself, by key, without fallback (empty for an unknown locale).
  public func texts(locale: String) -> [String: String] {
    tables[locale] ?? [:]
  }

  /// Sets or replaces one text.
  public mutating func set(_ text: String, for key: String, locale: String) {
    tables[locale, default: [:]][key] = text
  }

  /// Adds many texts to a locale (a new locale is created), replacing existing keys.
  public mutating func add(_ texts: [String: String], locale: String) {
    tables[locale, default: [:]].merge(texts) { _, new in new }
  }

  /// Loads texts for `locale` from a file: `.json` (an object of key → text) or `.strings`
  /// (`"key" = "text";`).
  ///
  /// - Throws: ``CourierError`` of kind ``CourierError/Kind/invalidRequest`` when the file
  ///   cannot be read or parsed.
  public mutating func load(contentsOf url: URL, locale: String) throws {
    let data: Data
    do {
      data = try Data(contentsOf: url)
    } catch {
      throw CourierError(
        kind: .invalidRequest, debugMessage: "cannot read reason file \(url.path)",
        underlying: error, stage: "reasons")
    }
    if url.pathExtension.lowercased() == "strings" {
      add(try StringsFileParser.parse(data), locale: locale)
    } else {
      do {
        add(try JSONDecoder().decode([String: String].self, from: data), locale: locale)
      } catch {
        throw CourierError(
          kind: .invalidRequest,
          debugMessage: "reason file \(url.lastPathComponent) is not a JSON object of strings",
          underlying: error, stage: "reasons")
      }
    }
  }

  /// The reason for `error` in `locale`, following the rules in the type's documentation.
  public func reason(for error: CourierError, locale: String) -> String {
    if serverMessages.showsMessage(of: error), let message = error.serverMessage,
      let text = serverMessages.displayText(for: message)
    {
      return text
    }
    for key in Self.keys(for: error) {
      if let text = lookup(key, locale: locale) {
        return Self.fill(text, error: error)
      }
    }
    return lookup("transport", locale: locale) ?? BuiltInReasons.lastResort
  }

  /// The locale among ours that best matches a list of preferred languages (BCP 47 or POSIX
  /// style, most preferred first), or `"en"`.
  ///
  /// For each language in turn: a locale of ours equal to it (ignoring case, after `_` → `-`
  /// and without a POSIX `.codeset` or `@modifier`), else the first of ours (sorted) with the
  /// same primary language. Chinese is matched by script: `zh-Hant*`, `zh-TW`, `zh-HK`,
  /// `zh-MO` (and `yue`, Cantonese, unless `yue-Hans`) mean `zh-Hant`; `zh`, `zh-CN`,
  /// `zh-SG`, `zh-Hans*` and every other `zh-*` mean `zh-Hans`. A script written in the tag
  /// wins over its region (`zh-Hans-HK` is `zh-Hans`).
  public func bestLocale(for preferred: [String]) -> String {
    let ours = tables.keys.sorted()
    for language in preferred {
      let tag = Self.normalize(language)
      guard !tag.isEmpty else { continue }
      if let exact = ours.first(where: { $0.caseInsensitiveCompare(tag) == .orderedSame }) {
        return exact
      }
      let primary = Self.primaryLanguage(tag)
      if let match = ours.first(where: { Self.primaryLanguage(Self.normalize($0)) == primary }) {
        return match
      }
    }
    return "en"
  }

  /// The languages the process prefers, most preferred first:
  /// `preferredLanguages(environment: ProcessInfo.processInfo.environment,
  /// system: Locale.preferredLanguages)`.
  public static var processPreferredLanguages: [String] {
    preferredLanguages(
      environment: ProcessInfo.processInfo.environment, system: Locale.preferredLanguages)
  }

  /// The preferred languages for an environment, in the order gettext uses for messages
  /// (POSIX precedence for the locale, then GNU `LANGUAGE`):
  ///
  /// 1. The locale is the first of `LC_ALL`, `LC_MESSAGES`, `LANG` that is set and not empty.
  /// 2. If none is set, `system` is returned (`Locale.preferredLanguages`: what Apple
  ///    platforms use; `LANGUAGE` alone is ignored, as gettext ignores it in the unset, C,
  ///    locale).
  /// 3. If the locale is `C` or `POSIX` (also `C.UTF-8` and the like), `["en"]`: the default
  ///    language, and `LANGUAGE` is ignored, as gettext does.
  /// 4. Otherwise the entries of `LANGUAGE` (a colon-separated list, empty entries and `C`
  ///    skipped), then the locale.
  ///
  /// `LC_ALL=C LANG=zh_CN.UTF-8` gives `["en"]`; `LANGUAGE=zh_TW:en LANG=de_DE.UTF-8` gives
  /// `["zh_TW", "en", "de_DE.UTF-8"]`. Feed the result to ``bestLocale(for:)``.
  public static func preferredLanguages(
    environment: [String: String], system: [String]
  ) -> [String] {
    func variable(_ name: String) -> String? {
      guard let value = environment[name], !value.isEmpty else { return nil }
      return value
    }
    guard let locale = variable("LC_ALL") ?? variable("LC_MESSAGES") ?? variable("LANG") else {
      return system
    }
    if isPOSIXLocale(locale) { return ["en"] }
    let list = (variable("LANGUAGE") ?? "").split(separator: ":").map(String.init)
    return list.filter { !isPOSIXLocale($0) } + [locale]
  }

  /// `C`, `POSIX`, `C.UTF-8`, `C@modifier`, `POSIX.x`: the locale that means "no language".
  private static func isPOSIXLocale(_ value: String) -> Bool {
    let name = value.prefix { $0 != "." && $0 != "@" }
    return name == "C" || name == "POSIX"
  }

  /// The text for `key` in `locale`; a locale of no table of ours is matched as
  /// ``bestLocale(for:)`` matches it (`zh-TW` reads `zh-Hant`, `zh-CN` and `zh` read `zh-Hans`);
  /// English when the key is not in that table.
  private func lookup(_ key: String, locale: String) -> String? {
    let table = tables[locale] ?? tables[bestLocale(for: [locale])]
    return table?[key] ?? tables["en"]?[key]
  }

  /// Keys from the most specific to the most general.
  private static func keys(for error: CourierError) -> [String] {
    guard error.kind == .httpStatus, let status = error.status else { return [error.kind.name] }
    var keys: [String] = []
    if status == 429, let wait = error.retryAfter, wait > .zero {
      keys.append("http.429.retryAfter")
    }
    keys.append("http.\(status)")
    keys.append("http.\(status / 100)xx")
    keys.append(error.kind.name)
    return keys
  }

  private static func fill(_ text: String, error: CourierError) -> String {
    guard text.contains("{seconds}"), let wait = error.retryAfter else { return text }
    return text.replacingOccurrences(of: "{seconds}", with: String(wholeSeconds(wait)))
  }

  /// A wait in whole seconds for people: rounded up, at least 1, at most
  /// ``RetryAfter/maximumWait``. Integer arithmetic only, so no duration traps — not even one
  /// set by hand on ``CourierError/retryAfter``.
  static func wholeSeconds(_ wait: Duration) -> Int64 {
    // From the 128-bit count: `components` traps past `Int64.max` seconds.
    let seconds = wait.clampedSeconds
    let cap = RetryAfter.maximumWaitSeconds
    if seconds >= cap { return cap }
    // seconds < cap here, so adding 1 cannot overflow.
    let fraction = wait.attoseconds % 1_000_000_000_000_000_000 > 0
    return min(cap, max(1, seconds + (fraction ? 1 : 0)))
  }

  /// `zh_CN.UTF-8` → `zh-Hans`; `zh_TW` → `zh-Hant`; `en_US` → `en-US`; `sr_RS@latin` →
  /// `sr-RS`. Other tags keep their case.
  private static func normalize(_ language: String) -> String {
    let tag = language.prefix { $0 != "." && $0 != "@" }.replacingOccurrences(of: "_", with: "-")
    let subtags = tag.lowercased().split(separator: "-")
    guard let primary = subtags.first, primary == "zh" || primary == "yue" else { return tag }
    let rest = subtags.dropFirst()
    if rest.contains("hant") { return "zh-Hant" }
    if rest.contains("hans") { return "zh-Hans" }
    if primary == "yue" { return "zh-Hant" }
    if rest.contains(where: { $0 == "tw" || $0 == "hk" || $0 == "mo" }) { return "zh-Hant" }
    return "zh-Hans"
  }

  /// The primary language subtag, lowercased: `zh-Hant` → `zh`.
  private static func primaryLanguage(_ tag: String) -> Substring {
    Substring(tag.lowercased().prefix { $0 != "-" })
  }
}
