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

/// The names of the headers of one request that carry a credential under a name no
/// ``Redaction`` lists: ``AuthMiddleware`` adds the header it sends a credential in when that
/// is not `Authorization`, `Proxy-Authorization`, `Cookie` or another name of
/// ``Redaction/standard``.
///
/// Every Courier transport removes these headers when a redirect leaves the request's
/// origin (``Redirect/nextRequest(after:status:location:)``), and ``LoggingMiddleware`` and
/// cassettes write their values as `***` (``Redaction/header(_:of:)``). A middleware of your
/// own that sends a secret under a name of its own adds that name too:
///
/// ```swift
/// struct SigningMiddleware: Middleware {
///   func intercept(_ request: Request, next: Next) async throws -> Response {
///     var request = request
///     let name = try HTTPHeaders.Name("X-Signature")
///     try request.headers.set(name, "signature")
///     request.attributes[CredentialHeadersAttribute.self].insert(name)
///     return try await next(request)
///   }
/// }
/// ```
public enum CredentialHeadersAttribute: RequestAttributeKey {
  /// None.
  public static let defaultValue: Set<HTTPHeaders.Name> = []
}

/// What a body is, for redaction.
enum BodyShape: Equatable {
  case json
  case form
  case multipart(boundary: [UInt8])
  case unknown

  /// The shape `contentType` names, else (when `text` is given) the one the text has.
  init(contentType: String?, text: String?) {
    let media = contentType.map { type in
      (type.split(separator: ";", maxSplits: 1).first ?? "")
        .trimmingCharacters(in: .whitespaces).lowercased()
    }
    if let media, let contentType {
      if media == "application/x-www-form-urlencoded" {
        self = .form
        return
      }
      // A multipart type without a boundary leaves the shape to the text.
      if media.hasPrefix("multipart/"), let boundary = Self.boundary(contentType) {
        self = .multipart(boundary: boundary)
        return
      }
      if media.contains("json") {
        self = .json
        return
      }
    }
    guard let text else {
      self = .unknown
      return
    }
    if Self.isJSON(text) {
      self = .json
    } else if Self.isForm(text) {
      self = .form
    } else if let boundary = Self.leadingBoundary(text.utf8) {
      self = .multipart(boundary: boundary)
    } else {
      self = .unknown
    }
  }

  /// The boundary a multipart body opens with, when its first line is a delimiter line:
  /// `--`, then 1 to 70 of the characters RFC 2046 allows in a boundary, then optional
  /// spaces or tabs and the line end. `nil` for anything else.
  static func leadingBoundary(_ bytes: some Collection<UInt8>) -> [UInt8]? {
    guard bytes.starts(with: "--".utf8) else { return nil }
    var line = Array(bytes.dropFirst(2).prefix { $0 != 0x0A && $0 != 0x0D })
    while let last = line.last, last == 0x20 || last == 0x09 { line.removeLast() }
    let allowed = Set("'()+_,-./:=? ".utf8)
    guard (1...70).contains(line.count),
      line.allSatisfy({ ASCII.isLetter($0) || ASCII.isDigit($0) || allowed.contains($0) })
    else { return nil }
    return line
  }

  /// The `boundary` parameter of a multipart type, quotes removed; `nil` when absent or
  /// empty.
  private static func boundary(_ contentType: String) -> [UInt8]? {
    for parameter in contentType.split(separator: ";").dropFirst() {
      let pair = parameter.split(separator: "=", maxSplits: 1)
      guard pair.count == 2,
        pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "boundary"
      else { continue }
      var value = pair[1].trimmingCharacters(in: .whitespaces)
      if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
        value = String(value.dropFirst().dropLast())
      }
      return value.isEmpty ? nil : Array(value.utf8)
    }
    return nil
  }

  /// Whether `text` is a JSON object or array after any white space and byte order mark.
  static func isJSON(_ text: String) -> Bool {
    var bytes = Substring(text).utf8[...]
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
    bytes = bytes.drop { [0x20, 0x09, 0x0A, 0x0D].contains($0) }
    guard let first = bytes.first, first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    else { return false }
    return (try? JSONSerialization.jsonObject(with: Data(bytes))) != nil
  }

  /// Whether `text` is nothing but `name=value` pairs joined by `&`: no white space, quotes
  /// or brackets, and a non-empty name before an `=` in every pair.
  static func isForm(_ text: String) -> Bool {
    guard !text.isEmpty else { return false }
    let forbidden = Set("\"'<>{}\\`|^".utf8)
    guard !text.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F || forbidden.contains($0) })
    else { return false }
    return text.split(separator: "&", omittingEmptySubsequences: false).allSatisfy { pair in
      guard let equals = pair.firstIndex(of: "=") else { return false }
      return equals != pair.startIndex
    }
  }
}

/// Hides the contents of listed parts of a `multipart/…` body (RFC 2046 §5.1, RFC 7578),
/// keeping every delimiter, header and unlisted part as written. Works part by part on the
/// bytes, so binary file parts pass through and a truncated body is redacted up to its end.
enum MultipartRedactor {
  /// `body` with each part named by `redaction` replaced by `***` and each JSON or form part
  /// redacted inside; `nil` when no delimiter line of `boundary` occurs in it.
  static func redact(_ body: [UInt8], boundary: [UInt8], with redaction: Redaction) -> [UInt8]? {
    let delimiter = Array("--".utf8) + boundary
    guard var delimiterStart = firstDelimiter(delimiter, in: body, from: 0) else { return nil }
    var output: [UInt8] = []
    output.reserveCapacity(body.count)
    var copied = 0  // body[..<copied] is in output
    while true {
      // The delimiter line: `--boundary`, then `--` for the last, or padding and a line end.
      var index = delimiterStart + delimiter.count
      if body[index...].starts(with: "--".utf8) {
        output += body[copied...]
        return output
      }
      index = body[index...].firstIndex(of: 0x0A).map { $0 + 1 } ?? body.count
      output += body[copied..<index]
      // The part runs to the line end before the next delimiter, or to the end.
      let next = firstDelimiter(delimiter, in: body, from: index)
      var partEnd = body.count
      if let next {
        partEnd = next - 1  // the LF
        if partEnd > index, body[partEnd - 1] == 0x0D { partEnd -= 1 }
        partEnd = max(index, partEnd)
      }
      output += part(body[index..<partEnd], with: redaction)
      copied = partEnd
      guard let next else { return output }
      delimiterStart = next
    }
  }

  /// The start of the first delimiter line at or after `start`: `delimiter` at the start of
  /// the body or of a line.
  private static func firstDelimiter(
    _ delimiter: [UInt8], in body: [UInt8], from start: Int
  )
    -> Int?
  {
    var index = start
    while index + delimiter.count <= body.count {
      if (index == 0 || body[index - 1] == 0x0A),
        body[index..<(index + delimiter.count)].elementsEqual(delimiter)
      {
        return index
      }
      guard let newline = body[index...].firstIndex(of: 0x0A) else { return nil }
      index = newline + 1
    }
    return nil
  }

  /// One part, headers and content, redacted.
  private static func part(_ part: ArraySlice<UInt8>, with redaction: Redaction) -> [UInt8] {
    // The header block ends at the first empty line.
    var lineStart = part.startIndex
    var contentStart: Int?
    var headers: [(name: String, value: String)] = []
    while lineStart < part.endIndex {
      let lineEnd = part[lineStart...].firstIndex(of: 0x0A) ?? part.endIndex
      var line = part[lineStart..<lineEnd]
      if line.last == 0x0D { line = line.dropLast() }
      if line.isEmpty {
        contentStart = min(lineEnd + 1, part.endIndex)
        break
      }
      let text = String(decoding: line, as: UTF8.self)
      if let colon = text.firstIndex(of: ":") {
        headers.append(
          (
            text[..<colon].trimmingCharacters(in: .whitespaces).lowercased(),
            text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
          ))
      }
      lineStart = lineEnd + 1
    }
    // A part cut before its content has nothing to hide.
    guard let contentStart else { return Array(part) }
    let head = Array(part[..<contentStart])
    let content = part[contentStart...]
    let disposition = headers.first { $0.name == "content-disposition" }?.value ?? ""
    if let name = parameter("name", in: disposition), redaction.hidesBodyKey(name) {
      return head + Array(Redaction.marker.utf8)
    }
    let type = headers.first { $0.name == "content-type" }?.value
    if case .multipart(let boundary) = BodyShape(contentType: type, text: nil) {
      return head + (redact(Array(content), boundary: boundary, with: redaction) ?? Array(content))
    }
    guard let text = String(validating: content, as: UTF8.self),
      let redacted = redaction.redactedBody(text, contentType: type)
    else { return Array(part) }
    return head + Array(redacted.utf8)
  }

  /// The value of parameter `wanted` of a `Content-Disposition` value (`form-data; name="a"`),
  /// quotes removed; semicolons inside quotes do not separate.
  private static func parameter(_ wanted: String, in disposition: String) -> String? {
    var parameters: [Substring] = []
    var quoted = false
    var start = disposition.startIndex
    for index in disposition.indices {
      switch disposition[index] {
      case "\"": quoted.toggle()
      case ";" where !quoted:
        parameters.append(disposition[start..<index])
        start = disposition.index(after: index)
      default: break
      }
    }
    parameters.append(disposition[start...])
    for parameter in parameters.dropFirst() {
      guard let equals = parameter.firstIndex(of: "=") else { continue }
      guard parameter[..<equals].trimmingCharacters(in: .whitespaces).lowercased() == wanted
      else { continue }
      var value = parameter[parameter.index(after: equals)...].trimmingCharacters(
        in: .whitespaces)
      if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
        value = String(value.dropFirst().dropLast())
      }
      return value
    }
    return nil
  }
}

/// Hides the values of listed member names in JSON text at any depth, keeping everything
/// else as written. Works token by token, so malformed or truncated JSON is redacted too.
enum JSONRedactor {
  static func redact(_ text: String, keys: Set<String>) -> String {
    guard !keys.isEmpty else { return text }
    let bytes = Array(text.utf8)
    var output = [UInt8]()
    output.reserveCapacity(bytes.count)
    var index = 0
    while index < bytes.count {
      guard bytes[index] == UInt8(ascii: "\"") else {
        output.append(bytes[index])
        index += 1
        continue
      }
      let end = stringEnd(bytes, from: index)
      output.append(contentsOf: bytes[index..<end])
      var cursor = skipSpace(bytes, from: end)
      guard cursor < bytes.count, bytes[cursor] == UInt8(ascii: ":"),
        keys.contains(key(bytes[index..<end]).lowercased())
      else {
        index = end
        continue
      }
      let colon = cursor
      cursor = skipSpace(bytes, from: colon + 1)
      output.append(contentsOf: bytes[end..<cursor])  // the spaces, ':' and spaces
      output.append(contentsOf: Array("\"\(Redaction.marker)\"".utf8))
      index = valueEnd(bytes, from: cursor)
    }
    return String(decoding: output, as: UTF8.self)
  }

  /// The index after the string that starts at `start` (or the end of the text).
  private static func stringEnd(_ bytes: [UInt8], from start: Int) -> Int {
    var index = start + 1
    while index < bytes.count {
      switch bytes[index] {
      case UInt8(ascii: "\\"): index += 2
      case UInt8(ascii: "\""): return index + 1
      default: index += 1
      }
    }
    return bytes.count
  }

  private static func skipSpace(_ bytes: [UInt8], from start: Int) -> Int {
    var index = start
    while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    return index
  }

  /// The index after the value that starts at `start`: a string, a balanced object or
  /// array, or a number or literal.
  private static func valueEnd(_ bytes: [UInt8], from start: Int) -> Int {
    guard start < bytes.count else { return bytes.count }
    switch bytes[start] {
    case UInt8(ascii: "\""):
      return stringEnd(bytes, from: start)
    case UInt8(ascii: "{"), UInt8(ascii: "["):
      var depth = 0
      var index = start
      while index < bytes.count {
        switch bytes[index] {
        case UInt8(ascii: "\""):
          index = stringEnd(bytes, from: index)
          continue
        case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
          depth -= 1
          if depth == 0 { return index + 1 }
        default: break
        }
        index += 1
      }
      return bytes.count
    default:
      var index = start
      while index < bytes.count,
        ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D]
          .contains(bytes[index])
      {
        index += 1
      }
      return index
    }
  }

  /// The member name a string token spells, with escapes resolved when it has any.
  private static func key(_ token: ArraySlice<UInt8>) -> String {
    let inner = token.dropFirst().dropLast(token.last == UInt8(ascii: "\"") ? 1 : 0)
    if !inner.contains(UInt8(ascii: "\\")) { return String(decoding: inner, as: UTF8.self) }
    return (try? JSONDecoder().decode(String.self, from: Data(token)))
      ?? String(decoding: inner, as: UTF8.self)
  }
}
