/// Hides credentials in URLs inside any text: user info always, and the values of query and
/// fragment parameters whose names a predicate picks. The one mechanism behind
/// ``CourierError/redactingURLs(in:)`` (every value) and ``Redaction/url(_:)`` (listed names).
enum URLRedactor {
  /// `text` with every URL-looking token (`scheme://…`, up to a space, quote, angle bracket or
  /// backslash) redacted: user info becomes `***`, and so does the value of every
  /// `name=value` in the query or fragment whose name `hides` accepts; names stay.
  static func redactingURLs(in text: String, hides: (Substring) -> Bool) -> String {
    guard text.contains("://") else { return text }
    let bytes = Array(text.utf8)
    var output: [UInt8] = []
    output.reserveCapacity(bytes.count)
    var copied = 0
    var index = 0
    while index + 2 < bytes.count {
      guard bytes[index] == UInt8(ascii: ":"), bytes[index + 1] == UInt8(ascii: "/"),
        bytes[index + 2] == UInt8(ascii: "/")
      else {
        index += 1
        continue
      }
      // The scheme: letters, digits, "+", "-", "." before "://", starting with a letter.
      var schemeStart = index
      while schemeStart > copied, ASCII.isSchemeByte(bytes[schemeStart - 1]) { schemeStart -= 1 }
      while schemeStart < index, !ASCII.isLetter(bytes[schemeStart]) { schemeStart += 1 }
      var end = index + 3
      while end < bytes.count, !isTerminator(bytes[end]) { end += 1 }
      // Punctuation that closes the surrounding text is not part of the URL.
      while end > index + 3, ",;.)}".utf8.contains(bytes[end - 1]) { end -= 1 }
      output += bytes[copied..<schemeStart]
      redact(bytes[schemeStart..<end], schemeEnd: index - schemeStart, hides: hides, to: &output)
      copied = end
      index = end
    }
    output += bytes[copied...]
    return String(decoding: output, as: UTF8.self)
  }

  /// A URI reference (RFC 3986 §4.1) standing alone, as in a `Location` value: absolute
  /// (`https://u:p@h/p?q`), network-path (`//h/p?q`) or relative (`/p?q`, `p?q#f`), redacted
  /// as ``redactingURLs(in:hides:)`` redacts a URL: user info becomes `***`, and so does the
  /// value of every query or fragment parameter whose name `hides` accepts.
  static func redactingReference(_ text: Substring, hides: (Substring) -> Bool) -> String {
    let bytes = Array(text.utf8)
    guard bytes.contains(where: { "?#@".utf8.contains($0) }) else { return String(text) }
    // A scheme is letters, digits, "+", "-", "." up to ":", starting with a letter; a
    // relative reference has none (its first segment holds no ":" before any "/", "?", "#").
    var authorityStart: Int?
    if let first = bytes.first, ASCII.isLetter(first),
      let colon = bytes.firstIndex(where: { !ASCII.isSchemeByte($0) }), bytes[colon] == 0x3A
    {
      if bytes[(colon + 1)...].starts(with: "//".utf8) { authorityStart = colon + 3 }
    } else if bytes.starts(with: "//".utf8) {
      authorityStart = 2
    }
    var output: [UInt8] = []
    output.reserveCapacity(bytes.count)
    redact(bytes[...], authorityStart: authorityStart, hides: hides, to: &output)
    return String(decoding: output, as: UTF8.self)
  }

  /// One URL token, `scheme://authority/path?query#fragment`, redacted onto `output`.
  private static func redact(
    _ url: ArraySlice<UInt8>, schemeEnd: Int, hides: (Substring) -> Bool,
    to output: inout [UInt8]
  ) {
    redact(Array(url)[...], authorityStart: schemeEnd + 3, hides: hides, to: &output)
  }

  /// A URI reference redacted onto `output`; `authorityStart` is where its authority begins
  /// (after `scheme://` or `//`), `nil` when it has none.
  private static func redact(
    _ url: ArraySlice<UInt8>, authorityStart: Int?, hides: (Substring) -> Bool,
    to output: inout [UInt8]
  ) {
    let url = Array(url)
    var index = 0
    if let authorityStart {
      output += url[..<authorityStart]
      index = authorityStart
      // Authority: up to "/", "?" or "#"; user info is everything before its last "@".
      var authorityEnd = index
      while authorityEnd < url.count, !"/?#".utf8.contains(url[authorityEnd]) {
        authorityEnd += 1
      }
      if let at = url[index..<authorityEnd].lastIndex(of: UInt8(ascii: "@")) {
        output += "***@".utf8
        index = at + 1
      }
    }
    // Path: kept.
    while index < url.count, !"?#".utf8.contains(url[index]) {
      output.append(url[index])
      index += 1
    }
    // Query and fragment: each `name=value` keeps its name; a "?" after the first is data.
    let queryStart = index
    var nameStart = index
    var hiding: Bool?  // nil: in a name; true or false: in a value, hidden or not
    while index < url.count {
      let byte = url[index]
      switch byte {
      case UInt8(ascii: "#"), UInt8(ascii: "&"):
        hiding = nil
        output.append(byte)
        nameStart = index + 1
      case UInt8(ascii: "?") where index == queryStart:
        output.append(byte)
        nameStart = index + 1
      case UInt8(ascii: "=") where hiding == nil:
        let name = Substring(decoding: url[nameStart..<index], as: UTF8.self)
        let hidden = hides(name)
        hiding = hidden
        output += hidden ? Array("=***".utf8) : [byte]
      default:
        if hiding != true { output.append(byte) }
      }
      index += 1
    }
  }

  private static func isTerminator(_ byte: UInt8) -> Bool {
    byte <= 0x20 || byte == 0x7F || "\"'<>`\\".utf8.contains(byte)
  }
}
