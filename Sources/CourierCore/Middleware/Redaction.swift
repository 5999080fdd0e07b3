import Foundation

/// Which credentials logging hides, and how: header values, query parameter values (in the
/// URL and in URLs inside headers such as `Location`), and JSON, form or multipart body
/// values whose names are listed are replaced by the fixed marker `***`, which tells neither
/// the secret nor its length. Secrets are found by name: a body of no shape these rules read
/// (``redactedBody(_:contentType:)``) is not logged at all.
///
/// On by default (``standard``). Add names for your own secrets, or take a name off the list
/// when you need to see it while debugging:
///
/// ```swift
/// var redaction = Redaction.standard
/// redaction.headers.insert("X-Signature")
/// redaction.bodyKeys.insert("pin")
/// redaction.queryParameters.remove("code")  // this API's `code` is not a secret
/// let logging = LoggingMiddleware(level: .body, redaction: redaction)
/// ```
///
/// Names compare without regard to ASCII case.
public struct Redaction: Sendable, Hashable {
  /// Header names whose values are hidden.
  public var headers: Set<String> { didSet { headerKeys = Self.lowered(headers) } }
  /// Query parameter names whose values are hidden, also as the bracketed part of a nested
  /// name (`user[token]`).
  public var queryParameters: Set<String> { didSet { queryKeys = Self.lowered(queryParameters) } }
  /// JSON member names (at any depth), form field names and multipart part names whose values
  /// are hidden; a form or multipart name that nests fields in brackets (`user[password]`)
  /// is hidden when any of its parts is listed.
  public var bodyKeys: Set<String> { didSet { bodyKeySet = Self.lowered(bodyKeys) } }

  private var headerKeys: Set<String>
  private var queryKeys: Set<String>
  private var bodyKeySet: Set<String>

  /// The marker a hidden value becomes.
  public static let marker = "***"

  /// Creates a redaction from name lists.
  public init(headers: Set<String>, queryParameters: Set<String>, bodyKeys: Set<String>) {
    self.headers = headers
    self.queryParameters = queryParameters
    self.bodyKeys = bodyKeys
    headerKeys = Self.lowered(headers)
    queryKeys = Self.lowered(queryParameters)
    bodyKeySet = Self.lowered(bodyKeys)
  }

  /// The default lists:
  /// - headers `Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie`, `X-API-Key`,
  ///   `X-Auth-Token`;
  /// - query parameters `token`, `access_token`, `refresh_token`, `api_key`, `apikey`, `key`,
  ///   `password`, `secret`, `signature`, `sig`, `code` (an OAuth authorization code);
  /// - body keys `password`, `token`, `access_token`, `refresh_token`, `secret`,
  ///   `client_secret`, `id_token`.
  public static let standard = Redaction(
    headers: [
      "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-API-Key",
      "X-Auth-Token",
    ],
    queryParameters: [
      "token", "access_token", "refresh_token", "api_key", "apikey", "key", "password",
      "secret", "signature", "sig", "code",
    ],
    bodyKeys: [
      "password", "token", "access_token", "refresh_token", "secret", "client_secret",
      "id_token",
    ])

  /// Hides nothing. Only for local debugging: logs then hold credentials in clear.
  public static let none = Redaction(headers: [], queryParameters: [], bodyKeys: [])

  private static func lowered(_ names: Set<String>) -> Set<String> {
    Set(names.map { $0.lowercased() })
  }

  /// Whether the value of header `name` is hidden.
  public func hidesHeader(_ name: String) -> Bool {
    headerKeys.contains(name.lowercased())
  }

  /// The header's value as it may be logged: `***` when its name is listed; otherwise the
  /// value with every URL in it redacted by ``url(_:)``'s rules. The headers whose whole
  /// value is a URL or holds one in a known place — `Location`, `Content-Location`,
  /// `Referer`, `Refresh` (`5; url=…`) and `Link` (`<…>; rel=…`, several separated by
  /// commas) — are read as such, relative references included (`/callback?code=…`); in any
  /// other value, each absolute URL (`scheme://…`) is.
  public func header(_ field: HTTPHeaders.Field) -> String {
    let name = field.name
    if hidesHeader(name.rawName) { return Self.marker }
    let value = field.value
    guard !queryKeys.isEmpty || value.contains("@") else { return value }
    if name == .location || name.matches("Content-Location") || name.matches("Referer") {
      return URLRedactor.redactingReference(value[...], hides: hidesQueryName)
    }
    if name.matches("Refresh") { return refresh(value) }
    if name.matches("Link") { return link(value) }
    return URLRedactor.redactingURLs(in: value, hides: hidesQueryName)
  }

  /// The value of `field`, a header of `request`, as it may be logged or recorded: as
  /// ``header(_:)`` writes it, or `***` when the request's ``CredentialHeadersAttribute`` names
  /// it (a credential ``AuthMiddleware`` sent under a name of your choosing). A redaction
  /// that hides no header name, such as ``none``, shows those too.
  public func header(_ field: HTTPHeaders.Field, of request: Request) -> String {
    if !headerKeys.isEmpty, request.attributes[CredentialHeadersAttribute.self].contains(field.name)
    {
      return Self.marker
    }
    return header(field)
  }

  /// `url` as it may be logged: listed query (and fragment) values and any user info become
  /// `***`.
  public func url(_ url: URL) -> String {
    URLRedactor.redactingURLs(in: url.absoluteString, hides: hidesQueryName)
  }

  /// Whether the value of the query parameter written as `name` is hidden.
  private func hidesQueryName(_ name: Substring) -> Bool {
    let text = String(name)
    return Self.lists(queryKeys, (text.removingPercentEncoding ?? text).lowercased())
  }

  /// Whether `keys` lists `name` (lower-cased), whole or as one part of a name that nests
  /// fields in brackets, as forms and query strings do (`user[password]`, `password[]`,
  /// `cards[0][token]`): the bracketed part is the field's own name, as a nested JSON
  /// member's is.
  private static func lists(_ keys: Set<String>, _ name: String) -> Bool {
    if keys.contains(name) { return true }
    guard name.contains("[") else { return false }
    return name.split(whereSeparator: { $0 == "[" || $0 == "]" }).contains {
      keys.contains(String($0))
    }
  }

  /// A `Refresh` value, `delay; url=target` (the target possibly quoted), with its target
  /// redacted.
  private func refresh(_ value: String) -> String {
    let bytes = Array(value.utf8)
    guard let separator = bytes.firstIndex(where: { $0 == 0x3B || $0 == 0x2C }) else {
      return URLRedactor.redactingURLs(in: value, hides: hidesQueryName)
    }
    func skipSpace(from start: Int) -> Int {
      bytes[start...].firstIndex { $0 != 0x20 && $0 != 0x09 } ?? bytes.count
    }
    // The target follows `url=` (spaces allowed around `=`), or the separator directly.
    var index = skipSpace(from: separator + 1)
    if bytes.count - index >= 3, ASCII.equalIgnoringCase(bytes[index..<(index + 3)], "url".utf8) {
      let equals = skipSpace(from: index + 3)
      if equals < bytes.count, bytes[equals] == UInt8(ascii: "=") {
        index = skipSpace(from: equals + 1)
      }
    }
    var end = bytes.count
    if index < bytes.count, bytes[index] == 0x22 || bytes[index] == 0x27 {
      let quote = bytes[index]
      index += 1
      end = bytes[index...].firstIndex(of: quote) ?? bytes.count
    }
    let target = Substring(decoding: bytes[index..<end], as: UTF8.self)
    return String(decoding: bytes[..<index], as: UTF8.self)
      + URLRedactor.redactingReference(target, hides: hidesQueryName)
      + String(decoding: bytes[end...], as: UTF8.self)
  }

  /// A `Link` value, `<target>; rel=…; anchor="…"` one or more times, with every target and
  /// every quoted parameter redacted as a URI reference, and every absolute URL in the text
  /// between them (a parameter in single quotes or none, which the grammar does not allow but
  /// a server may send) as in any other header.
  private func link(_ value: String) -> String {
    var output = ""
    var rest = value[...]
    while let open = rest.firstIndex(where: { $0 == "<" || $0 == "\"" }) {
      let closing: Character = rest[open] == "<" ? ">" : "\""
      output += URLRedactor.redactingURLs(in: String(rest[..<open]), hides: hidesQueryName)
      output.append(rest[open])
      let inner = rest[rest.index(after: open)...]
      let close = inner.firstIndex(of: closing) ?? inner.endIndex
      output += URLRedactor.redactingReference(inner[..<close], hides: hidesQueryName)
      rest = inner[close...]
      if let first = rest.first {
        output.append(first)
        rest = rest.dropFirst()
      }
    }
    return output + URLRedactor.redactingURLs(in: String(rest), hides: hidesQueryName)
  }

  /// A body as it may be recorded: JSON members, form fields and multipart parts with listed
  /// names hidden (see ``redactedBody(_:contentType:)``). Text of any other shape comes back
  /// as it is but for JSON members inside it (`"password":"…"`); the caller decides whether
  /// it is text.
  public func body(_ text: String, contentType: String?) -> String {
    // Text of no known shape may still hold JSON members (an HTML page's script, a
    // truncated document): hiding them costs nothing.
    redactedBody(text, contentType: contentType) ?? JSONRedactor.redact(text, keys: bodyKeySet)
  }

  /// A body with the values of listed names hidden, or `nil` when its shape is one these
  /// rules cannot see into, so that a secret in it could not be found by name.
  ///
  /// The shape comes from `contentType` when it names one: JSON (any type containing
  /// `json`, such as `application/problem+json`), `application/x-www-form-urlencoded`, or
  /// `multipart/…` with a boundary (each part whose name is listed becomes `***`; a part
  /// that is itself JSON or a form is redacted inside; other parts, file bytes among them,
  /// are kept). Otherwise the text itself decides: JSON when it parses as JSON after any
  /// white space and byte order mark, a form when it is nothing but `name=value` pairs
  /// joined by `&`, multipart when its first line is a delimiter line (`--boundary`).
  /// Anything else — prose, HTML, a bare token — gives `nil`: a name-based
  /// rule cannot tell what in it is secret. With no body key listed (``none``), every body
  /// comes back as it is.
  ///
  /// A type can be wrong, so the text has the last word: a body typed as JSON that is a form
  /// is redacted as a form too, one typed as a form that is JSON as JSON too, and one typed
  /// as multipart in which no part of its boundary begins as if it had no type.
  public func redactedBody(_ text: String, contentType: String?) -> String? {
    guard !bodyKeySet.isEmpty else { return text }
    switch BodyShape(contentType: contentType, text: text) {
    case .json:
      let redacted = JSONRedactor.redact(text, keys: bodyKeySet)
      return BodyShape.isForm(text) ? form(redacted, keys: bodyKeySet) : redacted
    case .form:
      let redacted = form(text, keys: bodyKeySet)
      return BodyShape.isJSON(text) ? JSONRedactor.redact(redacted, keys: bodyKeySet) : redacted
    case .multipart(let boundary):
      if let redacted = MultipartRedactor.redact(
        Array(text.utf8), boundary: boundary, with: self)
      {
        return String(decoding: redacted, as: UTF8.self)
      }
      // The type's boundary is not the body's: the text decides, as without a type.
      return contentType == nil ? nil : redactedBody(text, contentType: nil)
    case .unknown: return nil
    }
  }

  /// A body's bytes as they may be recorded: a multipart body redacted part by part (its file
  /// parts may be binary), split on its type's boundary or, when that is missing or wrong,
  /// on the one its first line opens with; any other UTF-8 body as ``body(_:contentType:)``
  /// redacts its text; bytes that are neither come back unchanged.
  public func body(_ data: Data, contentType: String?) -> Data {
    guard !bodyKeySet.isEmpty, !data.isEmpty else { return data }
    // On the bytes, since file parts may be binary: the type's boundary, else (for a body
    // typed as multipart or as no shape at all) the one its first line opens with.
    let declared = BodyShape(contentType: contentType, text: nil)
    var boundaries: [[UInt8]] = []
    if case .multipart(let boundary) = declared { boundaries.append(boundary) }
    if declared == .unknown || !boundaries.isEmpty,
      let boundary = BodyShape.leadingBoundary(data), !boundaries.contains(boundary)
    {
      boundaries.append(boundary)
    }
    for boundary in boundaries {
      if let redacted = MultipartRedactor.redact(Array(data), boundary: boundary, with: self) {
        return Data(redacted)
      }
    }
    // Not `String(data:encoding:)`, which drops a leading byte order mark.
    guard let text = String(validating: data, as: UTF8.self) else { return data }
    return Data(body(text, contentType: contentType).utf8)
  }

  /// Whether the value of a multipart part named `name` (as written in its
  /// `Content-Disposition`) is hidden.
  func hidesBodyKey(_ name: String) -> Bool {
    Self.lists(bodyKeySet, name.lowercased())
      || Self.lists(bodyKeySet, (name.removingPercentEncoding ?? name).lowercased())
  }

  /// A form body (`name=value&…`) with the values of listed names replaced; names stay as
  /// written.
  private func form(_ text: String, keys: Set<String>) -> String {
    guard !keys.isEmpty else { return text }
    return text.split(separator: "&", omittingEmptySubsequences: false).map { pair in
      guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
      let name = pair[..<equals].replacingOccurrences(of: "+", with: " ")
      let decoded = (name.removingPercentEncoding ?? name).lowercased()
      return Self.lists(keys, decoded) ? pair[..<equals] + "=" + Self.marker : String(pair)
    }.joined(separator: "&")
  }
}
