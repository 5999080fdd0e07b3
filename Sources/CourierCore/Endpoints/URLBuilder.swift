import Foundation

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

    init(_ url: URL) {
      self.url = url
      var text = url.absoluteString
      if text.contains("?") || text.contains("#") {
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

  private static func isAbsolute(_ path: String) -> Bool {
    var utf8 = path.utf8.prefix(8).makeIterator()
    var lowered = [UInt8]()
    while let byte = utf8.next() { lowered.append(ASCII.lowercased(byte)) }
    return lowered.starts(with: "http://".utf8) || lowered.starts(with: "https://".utf8)
  }

  /// Replaces each `{name}` with its percent-encoded value and encodes literal text that may
  /// not stand in a path.
  static func expand(_ template: String, parameters: [String: String]) throws -> String {
    let utf8 = template.utf8
    // Fast path: nothing to replace and nothing to encode.
    if parameters.isEmpty,
      utf8.allSatisfy({ PercentEncoding.keepsInPath($0) && $0 != UInt8(ascii: "%") })
    {
      return template
    }
    var output = [UInt8]()
    output.reserveCapacity(utf8.count + 16)
    var usedNames = Set<String>()
    var index = utf8.startIndex
    while index < utf8.endIndex {
      let byte = utf8[index]
      switch byte {
      case UInt8(ascii: "{"):
        guard let close = utf8[index...].firstIndex(of: UInt8(ascii: "}")) else {
          throw invalid("path template \(template.debugDescription) has an unclosed '{'")
        }
        let name = String(template[utf8.index(after: index)..<close])
        guard !name.isEmpty, !name.contains("{") else {
          throw invalid("path template \(template.debugDescription) has an empty or nested {}")
        }
        guard let value = parameters[name] else {
          throw invalid("path parameter \(name.debugDescription) has no value")
        }
        guard !value.isEmpty else {
          throw invalid("path parameter \(name.debugDescription) is empty")
        }
        PercentEncoding.append(value, to: &output, keeping: .unreserved)
        usedNames.insert(name)
        index = utf8.index(after: close)
        continue
      case UInt8(ascii: "}"):
        throw invalid("path template \(template.debugDescription) has a '}' without '{'")
      case UInt8(ascii: "?"), UInt8(ascii: "#"):
        throw invalid(
          "path template \(template.debugDescription) contains"
            + " '\(Character(Unicode.Scalar(byte)))'; use query items")
      case UInt8(ascii: "%"):
        let next = utf8.index(after: index)
        let isEscape =
          next < utf8.endIndex && utf8.index(after: next) < utf8.endIndex
          && ASCII.isHexDigit(utf8[next])
          && ASCII.isHexDigit(utf8[utf8.index(after: next)])
        if isEscape {
          output.append(byte)
        } else {
          PercentEncoding.appendEscaped(byte, to: &output)
        }
      default:
        if PercentEncoding.keepsInPath(byte) {
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

  static func invalid(_ message: String) -> CourierError {
    CourierError(kind: .invalidRequest, debugMessage: message, stage: "request")
  }
}
