import Foundation
import Synchronization

/// Turns an endpoint's path template, parameters and query into a URL.
///
/// Works on UTF-8 bytes with one output buffer, because it runs for every request: a template
/// without parameters and with nothing to encode costs no allocation beyond the final string.
enum URLBuilder {
  /// A client's base URL, checked and trimmed of trailing slashes once.
  struct Base: Sendable {
    let url: URL
    /// The base without trailing slashes, or why it cannot be a base.
    let trimmed: Result<String, CourierError>
    /// URLs already built from templates without parameters or query, when kept (a client's
    /// base keeps them; see ``ResolvedURLs``).
    let resolved: ResolvedURLs?

    init(_ url: URL, keepingResolvedURLs: Bool = false) {
      self.url = url
      resolved = keepingResolvedURLs ? ResolvedURLs() : nil
      var text = url.absoluteString
      if !URLBuilder.isHTTP(scheme: url.scheme) {
        trimmed = .failure(URLBuilder.unsupportedScheme(url.scheme, what: "base URL"))
      } else if text.contains("?") || text.contains("#") {
        trimmed = .failure(
          URLBuilder.invalid("base URL must not have a query or fragment; use query items"))
      } else {
        while text.hasSuffix("/") { text.removeLast() }
        trimmed = .success(text)
      }
    }
  }

  /// Joins `base` and the expanded template, and appends the query.
  ///
  /// A template that is itself an absolute `http(s)` URL ignores `base`. Slashes between base
  /// and path are normalised: exactly one separates them whichever side has one.
  static func url(
    base: Base?, template: String, parameters: [String: String], query: [QueryItem]
  ) throws -> URL {
    // The same template always gives the same URL against one base: kept after the first.
    let resolved = parameters.isEmpty && query.isEmpty ? base?.resolved : nil
    if let resolved, let url = resolved.url(for: template) { return url }
    let url = try build(base: base, template: template, parameters: parameters, query: query)
    resolved?.keep(url, for: template)
    return url
  }

  private static func build(
    base: Base?, template: String, parameters: [String: String], query: [QueryItem]
  ) throws -> URL {
    let path = try expand(template, parameters: parameters)
    var text: String
    if isAbsolute(path) {
      text = path
    } else {
      guard let base else {
        throw invalid("relative path \(template.debugDescription) needs a client base URL")
      }
      let baseText = try base.trimmed.get()
      if path.isEmpty {
        text = base.url.absoluteString
      } else {
        let relative = path.utf8.first == UInt8(ascii: "/") ? path.drop { $0 == "/" } : path[...]
        text = baseText + "/" + relative
      }
    }
    if !query.isEmpty {
      var bytes = [UInt8]()
      bytes.reserveCapacity(query.count * 16)
      for (index, item) in query.enumerated() {
        if index > 0 { bytes.append(UInt8(ascii: "&")) }
        PercentEncoding.append(item.name, to: &bytes, keeping: .unreserved)
        if let value = item.value {
          bytes.append(UInt8(ascii: "="))
          PercentEncoding.append(value, to: &bytes, keeping: .unreserved)
        }
      }
      text += text.contains("?") ? "&" : "?"
      text += String(decoding: bytes, as: UTF8.self)
    }
    guard let url = URL(string: text), url.scheme != nil, url.host != nil else {
      throw invalid("\(text.debugDescription) is not an absolute URL")
    }
    return url
  }

  /// Whether `path` starts with `http://` or `https://`, in any case.
  private static func isAbsolute(_ path: String) -> Bool {
    guard let length = schemeLength(path.utf8) else { return false }
    return isHTTP(scheme: path.utf8.prefix(length))
  }

  /// The length of the scheme when `text` starts with `scheme://` (RFC 3986 §3.1: a letter,
  /// then letters, digits, `+`, `-`, `.`), else `nil`.
  private static func schemeLength(_ text: String.UTF8View) -> Int? {
    var length = 0
    var index = text.startIndex
    while index < text.endIndex {
      let byte = text[index]
      if byte == UInt8(ascii: ":") {
        guard length > 0, text[index...].starts(with: "://".utf8) else { return nil }
        return length
      }
      guard length > 0 ? ASCII.isSchemeByte(byte) : ASCII.isLetter(byte) else { return nil }
      length += 1
      index = text.index(after: index)
    }
    return nil
  }

  /// Whether `scheme` is `http` or `https`, in any case.
  static func isHTTP(scheme: some Collection<UInt8>) -> Bool {
    ASCII.equalIgnoringCase(scheme, "http".utf8) || ASCII.equalIgnoringCase(scheme, "https".utf8)
  }

  /// Whether `scheme` is `http` or `https`, in any case; `false` for `nil`.
  static func isHTTP(scheme: String?) -> Bool {
    guard var scheme else { return false }
    // Over the contiguous bytes: zipping two UTF-8 views cost more than the check (it runs
    // for every request).
    return scheme.withUTF8 { isHTTP(scheme: $0) }
  }

  /// Throws ``CourierError/Kind/invalidRequest`` unless `url` is `http` or `https`: Courier's
  /// transports would otherwise hand an `ftp:` or `file:` URL to libcurl, which really tries.
  static func checkScheme(of url: URL) throws {
    guard isHTTP(scheme: url.scheme) else {
      throw unsupportedScheme(url.scheme, what: "request URL")
    }
  }

  private static func unsupportedScheme(_ scheme: String?, what: String) -> CourierError {
    invalid(
      "\(what) has scheme \((scheme ?? "none").debugDescription); only http and https are"
        + " supported")
  }

  /// Replaces each `{name}` with its percent-encoded value and encodes literal text that may
  /// not stand in a path.
  static func expand(_ template: String, parameters: [String: String]) throws -> String {
    let utf8 = template.utf8
    // A template with a scheme of its own is refused unless that is http or https, before
    // anything else: with any other, it would be joined to the base as a path.
    let schemeLength = schemeLength(utf8)
    if let schemeLength, !isHTTP(scheme: utf8.prefix(schemeLength)) {
      let scheme = String(decoding: utf8.prefix(schemeLength), as: UTF8.self)
      throw unsupportedScheme(scheme, what: "path template")
    }
    // Fast path: nothing to replace and nothing to encode.
    if parameters.isEmpty,
      utf8.allSatisfy({ PercentEncoding.keepsInPath($0) && $0 != UInt8(ascii: "%") })
    {
      return template
    }
    // In an absolute template, the authority (`[::1]:8080`) is copied as written.
    let authorityEnd = authorityEnd(of: utf8, schemeLength: schemeLength)
    var output = [UInt8]()
    output.reserveCapacity(utf8.count + 16)
    var usedNames = Set<String>()
    var index = utf8.startIndex
    while index < utf8.endIndex {
      let byte = utf8[index]
      switch byte {
      case UInt8(ascii: "{"):
        let (name, end) = try appendParameter(
          of: template, at: index, parameters: parameters, to: &output)
        usedNames.insert(name)
        index = end
        continue
      case UInt8(ascii: "}"):
        throw invalid("path template \(template.debugDescription) has a '}' without '{'")
      case UInt8(ascii: "?"), UInt8(ascii: "#"):
        throw invalid(
          "path template \(template.debugDescription) contains"
            + " '\(Character(Unicode.Scalar(byte)))'; use query items")
      case UInt8(ascii: "%"):
        if startsEscape(utf8, at: index) {
          output.append(byte)
        } else {
          PercentEncoding.appendEscaped(byte, to: &output)
        }
      default:
        let isIPLiteralBracket =
          index < authorityEnd && (byte == UInt8(ascii: "[") || byte == UInt8(ascii: "]"))
        if PercentEncoding.keepsInPath(byte) || isIPLiteralBracket {
          output.append(byte)
        } else {
          PercentEncoding.appendEscaped(byte, to: &output)
        }
      }
      index = utf8.index(after: index)
    }
    if usedNames.count < parameters.count,
      let name = parameters.keys.sorted().first(where: { !usedNames.contains($0) })
    {
      throw invalid("path parameter \(name.debugDescription) is not used by the template")
    }
    return String(decoding: output, as: UTF8.self)
  }

  /// Where the authority of an absolute template ends; the start for a relative one.
  private static func authorityEnd(of utf8: String.UTF8View, schemeLength: Int?) -> String.Index {
    guard let schemeLength else { return utf8.startIndex }
    let authorityStart = utf8.index(utf8.startIndex, offsetBy: schemeLength + 3)
    return utf8[authorityStart...].firstIndex(of: UInt8(ascii: "/")) ?? utf8.endIndex
  }

  /// Appends the value of the `{name}` at `open`, encoded; the name, and where the text goes on.
  private static func appendParameter(
    of template: String, at open: String.Index, parameters: [String: String],
    to output: inout [UInt8]
  ) throws -> (name: String, end: String.Index) {
    let utf8 = template.utf8
    guard let close = utf8[open...].firstIndex(of: UInt8(ascii: "}")) else {
      throw invalid("path template \(template.debugDescription) has an unclosed '{'")
    }
    let name = String(template[utf8.index(after: open)..<close])
    guard !name.isEmpty, !name.contains("{") else {
      throw invalid("path template \(template.debugDescription) has an empty or nested {}")
    }
    guard let value = parameters[name] else {
      throw invalid("path parameter \(name.debugDescription) has no value")
    }
    guard !value.isEmpty else {
      throw invalid("path parameter \(name.debugDescription) is empty")
    }
    // `.` and `..` would stay one segment only until a client or server removes dot
    // segments (RFC 3986 §5.2.4; libcurl and most servers do, even for %2E%2E), so
    // `users/{id}/sessions` with `..` would reach `/sessions`.
    guard value != "." && value != ".." else {
      throw invalid(
        "path parameter \(name.debugDescription) is \(value.debugDescription), which would"
          + " remove a path segment")
    }
    PercentEncoding.append(value, to: &output, keeping: .unreserved)
    return (name, utf8.index(after: close))
  }

  /// Whether the `%` at `index` starts an escape: two hex digits follow it.
  private static func startsEscape(_ utf8: String.UTF8View, at index: String.Index) -> Bool {
    let next = utf8.index(after: index)
    return next < utf8.endIndex && utf8.index(after: next) < utf8.endIndex
      && ASCII.isHexDigit(utf8[next])
      && ASCII.isHexDigit(utf8[utf8.index(after: next)])
  }

  static func invalid(_ message: String) -> CourierError {
    CourierError(kind: .invalidRequest, debugMessage: message, stage: "request")
  }
}

/// The URLs a client built from templates without parameters or query (`"items"`,
/// `"user/profile"`), by template: such a template always gives the same URL against the
/// client's base, so building it (joining the strings, `URL(string:)` parsing and checking
/// the result) need not be repeated on every request. At most ``limit`` templates are kept;
/// past that the table starts again, so an app that builds paths by string interpolation
/// cannot make it grow.
final class ResolvedURLs: Sendable {
  /// The most templates kept.
  static let limit = 64

  private let table = Mutex<[String: URL]>([:])

  func url(for template: String) -> URL? {
    table.withLock { $0[template] }
  }

  func keep(_ url: URL, for template: String) {
    table.withLock { table in
      if table.count >= Self.limit { table.removeAll(keepingCapacity: true) }
      table[template] = url
    }
  }
}
