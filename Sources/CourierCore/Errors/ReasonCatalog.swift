import Foundation

/// The user-readable texts behind ``CourierError/reason``, per error kind and HTTP status, in
/// several languages.
///
/// Built in: English (`en`) and Simplified Chinese (`zh-Hans`). A ``Client`` picks one language
/// (by default the process's preferred language, falling back to English) and every error that
/// leaves it gets its reason from here.
///
/// ## Keys
/// - An error kind's name: `"timedOut"`, `"notReachable"`, `"business"`, … (see
///   ``CourierError/Kind``).
/// - An exact HTTP status: `"http.401"`, `"http.404"`, `"http.429"`.
/// - An HTTP status class: `"http.4xx"`, `"http.5xx"`.
/// - `"http.429.retryAfter"`: used for 429 when the server sent `Retry-After`; `{seconds}`
///   is replaced with the wait.
///
/// For ``CourierError/Kind/business`` errors the server's own message is the reason when it
/// sent one; the catalog's `"business"` text is used when it did not. The same goes for an
/// error status (4xx) whose body carried a business envelope with a message.
///
/// ## Customising
/// ```swift
/// var reasons = ReasonCatalog.standard
/// reasons.set("Please log in again.", for: "http.401", locale: "en")
/// try reasons.load(contentsOf: URL(fileURLWithPath: "ja.json"), locale: "ja")
/// let client = Client(baseURL: url, transport: transport, reasons: reasons, locale: "ja")
/// ```
/// A JSON file is an object of key → text; a `.strings` file is `"key" = "text";` lines.
/// Keys missing from a locale fall back to English, then to a generic sentence.
public struct ReasonCatalog: Sendable {
  private var tables: [String: [String: String]]

  /// The catalog with the built-in English and Simplified Chinese texts.
  public static let standard = ReasonCatalog(tables: [
    "en": BuiltInReasons.english, "zh-Hans": BuiltInReasons.simplifiedChinese,
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
    if let message = error.serverMessage?.trimmingCharacters(in: .whitespacesAndNewlines),
      !message.isEmpty,
      error.kind == .business
        || (error.kind == .httpStatus && (400..<500).contains(error.status ?? 0))
    {
      return message
    }
    for key in Self.keys(for: error) {
      if let text = lookup(key, locale: locale) {
        return Self.fill(text, error: error)
      }
    }
    return lookup("transport", locale: locale) ?? BuiltInReasons.lastResort
  }

  /// The locale among ours that best matches a list of preferred languages (BCP 47 or POSIX
  /// style), or `"en"`.
  public func bestLocale(for preferred: [String]) -> String {
    for language in preferred {
      let normalized = Self.normalize(language)
      if tables[normalized] != nil { return normalized }
      if let match = tables.keys.sorted().first(where: {
        Self.normalize($0).split(separator: "-").first == normalized.split(separator: "-").first
      }) {
        return match
      }
    }
    return "en"
  }

  /// The language the process prefers: `Locale.preferredLanguages`, then the `LANGUAGE`,
  /// `LC_ALL`, `LC_MESSAGES` and `LANG` environment variables (what Linux users set).
  public static var processPreferredLanguages: [String] {
    var languages: [String] = []
    let environment = ProcessInfo.processInfo.environment
    for name in ["LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"] {
      guard let value = environment[name], !value.isEmpty else { continue }
      languages += value.split(separator: ":").map(String.init)
    }
    languages += Locale.preferredLanguages
    return languages.filter { $0 != "C" && $0 != "POSIX" && !$0.hasPrefix("C.") }
  }

  private func lookup(_ key: String, locale: String) -> String? {
    tables[locale]?[key] ?? tables["en"]?[key]
  }

  /// Keys from the most specific to the most general.
  private static func keys(for error: CourierError) -> [String] {
    guard error.kind == .httpStatus, let status = error.status else { return [error.kind.name] }
    var keys: [String] = []
    if status == 429, error.retryAfter != nil { keys.append("http.429.retryAfter") }
    keys.append("http.\(status)")
    keys.append("http.\(status / 100)xx")
    keys.append(error.kind.name)
    return keys
  }

  private static func fill(_ text: String, error: CourierError) -> String {
    guard text.contains("{seconds}"), let wait = error.retryAfter else { return text }
    let seconds = max(
      1,
      Int(
        (Double(wait.components.seconds)
          + Double(wait.components.attoseconds) / 1e18).rounded(.up)))
    return text.replacingOccurrences(of: "{seconds}", with: String(seconds))
  }

  /// `zh_CN.UTF-8` → `zh-Hans`; `en_US` → `en-US`; `zh-Hant-TW` stays.
  private static func normalize(_ language: String) -> String {
    var tag = language.split(separator: ".").first.map(String.init) ?? language
    tag = tag.replacingOccurrences(of: "_", with: "-")
    let lower = tag.lowercased()
    if lower == "zh" || lower == "zh-cn" || lower == "zh-sg" || lower.hasPrefix("zh-hans") {
      return "zh-Hans"
    }
    return tag
  }
}
