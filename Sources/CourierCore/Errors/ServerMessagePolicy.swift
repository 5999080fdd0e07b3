/// Which messages from the server may become an error's user-facing ``CourierError/reason``,
/// and how they are cleaned before anyone sees them.
///
/// A server message is the text of a business envelope (`"Token expired"` in
/// `{"code": 40101, "msg": "Token expired"}`). It always stays, exactly as sent, in
/// ``CourierError/serverMessage`` for developers; this policy decides only what the *reason*
/// shows. Set it on the catalog a client uses:
///
/// ```swift
/// var reasons = ReasonCatalog.standard
/// reasons.serverMessages = .businessOnly
/// let client = Client(baseURL: base, transport: transport, reasons: reasons)
/// ```
///
/// Whatever the preset, a message that may be shown is first cleaned:
/// 1. control characters (Unicode category Cc, such as NUL and ESC) and bidirectional
///    embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) and U+FEFF are
///    removed;
/// 2. every run of whitespace, line breaks included, becomes one space, and the ends are
///    trimmed;
/// 3. with ``refusesInternalDetails`` (the default), a message that looks like internals is
///    refused (see ``refusesInternalDetails`` for the exact rules);
/// 4. a message longer than ``maximumLength`` Characters is cut and ends with `…`.
///
/// When nothing remains, or the message is refused, the reason is the catalog's text for the
/// error, as if the server had sent no message.
public struct ServerMessagePolicy: Sendable, Hashable {
  /// Show the message of a ``CourierError/Kind/business`` error (an envelope that reported a
  /// failure inside an accepted status).
  public var showsBusinessMessages: Bool
  /// Show the envelope message of a rejected 4xx response (kind
  /// ``CourierError/Kind/httpStatus``, status 400–499), such as
  /// `400 {"code":1001,"msg":"Phone number invalid"}`. Messages of 5xx responses are never
  /// shown: that is where servers put stack traces.
  public var showsClientErrorMessages: Bool
  /// The longest message shown, in `Character`s, the ellipsis included; default
  /// ``defaultMaximumLength`` (120). Below 2, a message that is too long is not shown at all.
  public var maximumLength: Int
  /// Refuse messages that look like internals rather than a sentence for people; default
  /// `true`. A cleaned message is refused when it contains:
  /// - `://` (a URL);
  /// - a credential-like pair: `token`, `password`, `passwd`, `secret` or `key` (any case,
  ///   so also `access_token`, `apiKey`) followed by `=` (spaces allowed) or by `":` (JSON);
  /// - a source location: `.` and 1 to 10 ASCII letters, `:`, an optional space and a digit
  ///   (`db.py:42`, `Main.java:17`, and also a host and port such as `db.internal:5432`), or
  ///   one of `.java:`, `.kt:`, `.swift:`, `.py:`, `.go:`, `.rb:`, `.php:`, `.js:`, `.ts:`,
  ///   `.cs:`, `.cpp:`, `.rs:`, `.scala:`;
  /// - a stack-trace marker: `Traceback`, `Exception` not followed by a lowercase letter
  ///   (case as written, as traces print it: `NullPointerException`, not `Exceptional`),
  ///   `stack trace`, `stacktrace`, `goroutine ` (any case), or `at line `, `on line `,
  ///   `, line ` followed by a digit.
  ///
  /// This is a heuristic against accidents — a debug message or an exception text that
  /// reached the envelope — not a guarantee: a server that puts secrets in plain words can
  /// still leak them. Use ``businessOnly`` or ``never`` when you do not trust the server's
  /// wording. False positives only cost the server's wording: the catalog's text is shown.
  public var refusesInternalDetails: Bool

  /// The default ``maximumLength``: 120 `Character`s. A reason is shown in an alert or a
  /// toast; business messages from real backends are 5–30 Chinese characters or rarely over
  /// 100 Latin ones, and 120 keeps a message to two or three lines on a phone while stopping
  /// a dumped page from filling the screen.
  public static let defaultMaximumLength = 120

  /// Creates a policy.
  public init(
    showsBusinessMessages: Bool,
    showsClientErrorMessages: Bool,
    maximumLength: Int = ServerMessagePolicy.defaultMaximumLength,
    refusesInternalDetails: Bool = true
  ) {
    self.showsBusinessMessages = showsBusinessMessages
    self.showsClientErrorMessages = showsClientErrorMessages
    self.maximumLength = maximumLength
    self.refusesInternalDetails = refusesInternalDetails
  }

  /// Show the messages of business errors only; a rejected 4xx response gets the catalog's
  /// text for its status.
  public static let businessOnly = ServerMessagePolicy(
    showsBusinessMessages: true, showsClientErrorMessages: false)

  /// Show the messages of business errors and of 4xx responses whose body carried an
  /// envelope message. This is ``standard``.
  public static let businessAndClientErrors = ServerMessagePolicy(
    showsBusinessMessages: true, showsClientErrorMessages: true)

  /// Never show a server message; every reason comes from the catalog.
  public static let never = ServerMessagePolicy(
    showsBusinessMessages: false, showsClientErrorMessages: false)

  /// The default: ``businessAndClientErrors``, cleaned, capped at 120 Characters, refusing
  /// internals.
  ///
  /// The backends Courier is written for (app backends with `{"code", "msg", "data"}`
  /// envelopes) write `msg` for the app's users, in their language — "手机号格式不正确" —
  /// and many send it with a 4xx status as well as inside a 200. Showing it is what those apps
  /// do by hand today, and the catalog could only say "the request could not be completed".
  /// The cleaning, the cap and the guard above deal with the messages that were never meant
  /// for users.
  public static let standard = businessAndClientErrors

  /// Whether this policy lets `error`'s server message be its reason: a business error with
  /// ``showsBusinessMessages``, or a 4xx ``CourierError/Kind/httpStatus`` error with
  /// ``showsClientErrorMessages``.
  public func showsMessage(of error: CourierError) -> Bool {
    switch error.kind {
    case .business:
      return showsBusinessMessages
    case .httpStatus:
      guard showsClientErrorMessages, let status = error.status else { return false }
      return (400..<500).contains(status)
    default:
      return false
    }
  }

  /// `message` as it may be shown to people — cleaned, checked and capped as the type's
  /// documentation describes — or `nil` when nothing remains or it is refused.
  ///
  /// Only the start of a message can be shown, so only its start is read: 16 Unicode scalars
  /// of cleaned text per ``maximumLength`` Character, plus 256 (2,176 by default; an emoji
  /// with skin tones is up to 8 scalars, so every real Character fits). The guard sees that
  /// whole part, more than is shown, so a URL or a `key=value` pair cut by the ellipsis is
  /// still refused, and a megabyte-long message costs no more than a short one.
  public func displayText(for message: String) -> String? {
    let length = max(0, maximumLength)
    let limit = length <= (Int.max - 256) / 16 ? length * 16 + 256 : .max
    let (cleaned, hasMore) = Self.clean(message, limit: limit)
    guard !cleaned.isEmpty else { return nil }
    if refusesInternalDetails, Self.looksInternal(cleaned) { return nil }
    guard hasMore || cleaned.count > maximumLength else { return cleaned }
    guard maximumLength >= 2 else { return nil }
    var cut = String(cleaned.prefix(maximumLength - 1))
    while cut.last?.isWhitespace == true { cut.removeLast() }
    return cut + "…"
  }

  /// Removes control and bidirectional formatting characters, turns each run of whitespace
  /// into one space, and trims the ends. Stops after `limit` scalars of output; `hasMore` says
  /// whether visible text was left unread.
  static func clean(_ message: String, limit: Int) -> (text: String, hasMore: Bool) {
    var result = String.UnicodeScalarView()
    var count = 0
    var pendingSpace = false
    for scalar in message.unicodeScalars {
      if scalar.properties.isWhitespace {
        pendingSpace = count > 0
        continue
      }
      if scalar.properties.generalCategory == .control || isFormattingControl(scalar) {
        continue
      }
      if count + (pendingSpace ? 2 : 1) > limit { return (String(result), true) }
      if pendingSpace {
        result.append(" ")
        count += 1
        pendingSpace = false
      }
      result.append(scalar)
      count += 1
    }
    return (String(result), false)
  }

  /// Bidirectional embeddings, overrides and isolates, and the byte order mark: invisible
  /// characters that can reorder or hide what a reason appears to say.
  private static func isFormattingControl(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x202A...0x202E, 0x2066...0x2069, 0xFEFF: true
    default: false
    }
  }

  private static let sourceExtensions = [
    ".java:", ".kt:", ".swift:", ".py:", ".go:", ".rb:", ".php:", ".js:", ".ts:", ".cs:",
    ".cpp:", ".rs:", ".scala:",
  ]

  /// The rules listed on ``refusesInternalDetails``, on a cleaned message.
  static func looksInternal(_ text: String) -> Bool {
    let bytes = Array(text.utf8)
    let lower = Array(text.lowercased().utf8)
    func byte(_ index: Int) -> UInt8? { index < lower.count ? lower[index] : nil }
    func isDigit(_ index: Int) -> Bool { byte(index).map(ASCII.isDigit) == true }

    if find("://", in: bytes) || find("Traceback", in: bytes) { return true }
    // `Exception` as traces print it (`NullPointerException`, `Exception:`), not `Exceptional`.
    let endsWord = { (end: Int) in
      end == bytes.count || !(UInt8(ascii: "a")...UInt8(ascii: "z")).contains(bytes[end])
    }
    if find("Exception", in: bytes, where: endsWord) { return true }
    for marker in ["stack trace", "stacktrace", "goroutine "] + sourceExtensions
    where find(marker, in: lower) {
      return true
    }
    for marker in ["at line ", "on line ", ", line "] where find(marker, in: lower, where: isDigit)
    {
      return true
    }
    for name in ["token", "password", "passwd", "secret", "key"] {
      let pair = find(name, in: lower) { end in
        var index = end
        if byte(index) == UInt8(ascii: "\"") {
          index += 1
          while byte(index) == UInt8(ascii: " ") { index += 1 }
          return byte(index) == UInt8(ascii: ":")
        }
        while byte(index) == UInt8(ascii: " ") { index += 1 }
        return byte(index) == UInt8(ascii: "=")
      }
      if pair { return true }
    }
    // A source location: `.`, 1...10 ASCII letters, `:`, an optional space, a digit.
    return find(".", in: lower) { end in
      var index = end
      while let next = byte(index), ASCII.isLetter(next), index - end < 10 { index += 1 }
      guard index > end, byte(index) == UInt8(ascii: ":") else { return false }
      index += 1
      if byte(index) == UInt8(ascii: " ") { index += 1 }
      return isDigit(index)
    }
  }

  /// Whether `pattern` occurs in `bytes` at a place where `accept` (given the index just past
  /// the occurrence) agrees.
  private static func find(
    _ pattern: String, in bytes: [UInt8], where accept: (_ end: Int) -> Bool = { _ in true }
  ) -> Bool {
    let pattern = Array(pattern.utf8)
    guard let first = pattern.first, bytes.count >= pattern.count else { return false }
    for start in 0...(bytes.count - pattern.count)
    where bytes[start] == first && bytes[start..<start + pattern.count].elementsEqual(pattern) {
      if accept(start + pattern.count) { return true }
    }
    return false
  }
}
