import Foundation

/// One query parameter. Order is kept, names may repeat, and a `nil` value writes the name
/// alone (`?flag`) while an empty value writes `?flag=`.
public struct QueryItem: Sendable, Hashable {
  /// The parameter name, unencoded.
  public var name: String
  /// The parameter value, unencoded; `nil` for a name with no `=`.
  public var value: String?

  /// Creates a query item from unencoded text.
  public init(_ name: String, _ value: String?) {
    self.name = name
    self.value = value
  }
}

/// Turns an endpoint's path template, parameters and query into a URL.
enum URLBuilder {
  /// Joins `base` and the expanded template, and appends the query.
  ///
  /// A template that is itself an absolute `http(s)` URL ignores `base`. Slashes between base
  /// and path are normalised: exactly one separates them whichever side has one.
  static func url(
    base: URL?, template: String, parameters: [String: String], query: [QueryItem]
  ) throws -> URL {
    let path = try expand(template, parameters: parameters)
    var text: String
    let lowered = path.prefix(8).lowercased()
    if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
      text = path
    } else {
      guard let base else {
        throw invalid("relative path \(template.debugDescription) needs a client base URL")
      }
      var baseText = base.absoluteString
      guard !baseText.contains("?"), !baseText.contains("#") else {
        throw invalid("base URL must not have a query or fragment; use query items")
      }
      while baseText.hasSuffix("/") { baseText.removeLast() }
      let relative = path.drop { $0 == "/" }
      text = path.isEmpty ? base.absoluteString : baseText + "/" + relative
    }
    if !query.isEmpty {
      text += text.contains("?") ? "&" : "?"
      text += query.map { item in
        let name = PercentEncoding.encode(item.name, keeping: .unreserved)
        guard let value = item.value else { return name }
        return name + "=" + PercentEncoding.encode(value, keeping: .unreserved)
      }.joined(separator: "&")
    }
    guard let url = URL(string: text), url.scheme != nil, url.host != nil else {
      throw invalid("\(text.debugDescription) is not an absolute URL")
    }
    return url
  }

  /// Replaces each `{name}` with its percent-encoded value and encodes literal text that may
  /// not stand in a path.
  static func expand(_ template: String, parameters: [String: String]) throws -> String {
    var output = ""
    output.reserveCapacity(template.utf8.count + 16)
    var used = Set<String>()
    var index = template.startIndex
    while index < template.endIndex {
      let character = template[index]
      if character == "{" {
        guard let close = template[index...].firstIndex(of: "}") else {
          throw invalid("path template \(template.debugDescription) has an unclosed '{'")
        }
        let name = String(template[template.index(after: index)..<close])
        guard !name.isEmpty, !name.contains("{") else {
          throw invalid("path template \(template.debugDescription) has an empty or nested {}")
        }
        guard let value = parameters[name] else {
          throw invalid("path parameter \(name.debugDescription) has no value")
        }
        guard !value.isEmpty else {
          throw invalid("path parameter \(name.debugDescription) is empty")
        }
        output += PercentEncoding.encode(value, keeping: .unreserved)
        used.insert(name)
        index = template.index(after: close)
        continue
      }
      if character == "}" {
        throw invalid("path template \(template.debugDescription) has a '}' without '{'")
      }
      if character == "?" || character == "#" {
        throw invalid(
          "path template \(template.debugDescription) contains '\(character)'; use query items")
      }
      output += PercentEncoding.encode(String(character), keeping: .pathLiteral)
      index = template.index(after: index)
    }
    let unused = Set(parameters.keys).subtracting(used)
    if let name = unused.sorted().first {
      throw invalid("path parameter \(name.debugDescription) is not used by the template")
    }
    return output
  }

  private static func invalid(_ message: String) -> CourierError {
    CourierError(kind: .invalidRequest, debugMessage: message, stage: "request")
  }
}

/// RFC 3986 percent-encoding with a choice of characters left as they are.
enum PercentEncoding {
  enum Kept {
    /// `A-Z a-z 0-9 - . _ ~`: safe in any component. Used for parameter values and query
    /// names and values, so `/ ? # & = + %` and spaces are always encoded.
    case unreserved
    /// Unreserved, sub-delims, `: @ /`, and `%` that starts a valid escape: template text.
    case pathLiteral
    /// `A-Z a-z 0-9 * - . _`, with space written as `+`: `application/x-www-form-urlencoded`.
    case form
  }

  private static let hex = Array("0123456789ABCDEF".utf8)

  static func encode(_ string: String, keeping kept: Kept) -> String {
    let bytes = Array(string.utf8)
    var output = [UInt8]()
    output.reserveCapacity(bytes.count)
    var index = 0
    while index < bytes.count {
      let byte = bytes[index]
      if kept == .form, byte == UInt8(ascii: " ") {
        output.append(UInt8(ascii: "+"))
      } else if isKept(byte, kept)
        || (kept == .pathLiteral && byte == UInt8(ascii: "%") && index + 2 < bytes.count
          && isHex(bytes[index + 1]) && isHex(bytes[index + 2]))
      {
        output.append(byte)
      } else {
        output.append(UInt8(ascii: "%"))
        output.append(hex[Int(byte >> 4)])
        output.append(hex[Int(byte & 0x0F)])
      }
      index += 1
    }
    return String(decoding: output, as: UTF8.self)
  }

  private static func isHex(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
      UInt8(ascii: "A")...UInt8(ascii: "F"):
      true
    default: false
    }
  }

  private static func isKept(_ byte: UInt8, _ kept: Kept) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
      UInt8(ascii: "_"):
      return true
    case UInt8(ascii: "~"):
      return kept != .form
    case UInt8(ascii: "*"):
      return kept != .unreserved
    case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"),
      UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "+"), UInt8(ascii: ","),
      UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "@"),
      UInt8(ascii: "/"):
      return kept == .pathLiteral
    default:
      return false
    }
  }
}
