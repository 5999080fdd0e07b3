import Foundation

/// A URL's host as text fit for a metric label, a span attribute, a circuit's key or a log
/// line, and the parts written around it: brackets for IPv6, the scheme's default port
/// (also what the same-origin rule compares).
///
/// `URL.host` percent-decodes, so `http://a%0Ab.test/` has a host with a line break in it: a
/// request to it still reaches the observers before its transport fails, and the break would
/// split a log line or an exposition line of the metrics. Here every control character, space
/// and `%` is written percent-encoded again, and the rest is kept as it is.
enum HostText {
  /// `url`'s host, lowercased when `lowercased`, with control characters, spaces and `%`
  /// percent-encoded; `nil` when the URL has no host or an empty one.
  static func host(of url: URL, lowercased: Bool) -> String? {
    guard let host = url.host, !host.isEmpty else { return nil }
    let text = lowercased ? host.lowercased() : host
    guard text.utf8.contains(where: needsEscape) else { return text }
    var escaped = ""
    for scalar in text.unicodeScalars {
      let value = scalar.value
      guard
        value < 0x21 || value == 0x25 || (0x7F...0x9F).contains(value)
          || scalar.properties.generalCategory == .lineSeparator
          || scalar.properties.generalCategory == .paragraphSeparator
      else {
        escaped.unicodeScalars.append(scalar)
        continue
      }
      for byte in String(scalar).utf8 {
        escaped += "%" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)
      }
    }
    return escaped
  }

  /// Whether the byte starts something ``host(of:lowercased:)`` writes percent-encoded: an
  /// ASCII control character, space, `%`, or a non-ASCII byte (checked scalar by scalar).
  private static func needsEscape(_ byte: UInt8) -> Bool {
    byte < 0x21 || byte == 0x25 || byte >= 0x7F
  }

  /// `host` as it is written before `:port`: an IPv6 address in brackets.
  static func bracketed(_ host: String) -> String {
    host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
  }

  /// The port a URL of `scheme` uses when it names none: 80 for `http` and `ws`, 443 for
  /// `https` and `wss`; `nil` for any other scheme.
  static func defaultPort(ofScheme scheme: String?) -> Int? {
    switch scheme?.lowercased() {
    case "http", "ws": 80
    case "https", "wss": 443
    default: nil
    }
  }
}
