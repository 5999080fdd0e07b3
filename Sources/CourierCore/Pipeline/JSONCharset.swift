import Foundation

/// Re-encodes as UTF-8 a JSON body whose `Content-Type` names another charset, when the
/// response pipeline could not read it as it came.
///
/// RFC 8259 §8.1 has JSON exchanged between systems in UTF-8, and `JSONDecoder` reads only
/// Unicode, but older back ends send `application/json; charset=GBK` (or `ISO-8859-1`,
/// `Big5`, `Shift_JIS`): the envelope scanner and the decoder reject every such body as not
/// UTF-8. AFNetworking's JSON serializer converted such bodies by the response's text
/// encoding; Courier does the same, with ``TextCharset``'s decoders, for JSON media types only
/// (`application/json`, `text/json`, `…+json`), and only after a check or the decoding failed,
/// so a response that passes costs nothing more.
///
/// Bytes that are valid UTF-8 are left as they are whatever the label says (a label that does
/// not match its body is far more common than a legacy-charset body that happens to be valid
/// UTF-8; GBK text almost never is), and so are bytes that are not valid in the named charset:
/// the first failure stands. The re-encoded response says `charset=utf-8` in `Content-Type`
/// and its new size in `Content-Length` (when it had one), so every later stage sees the
/// truth.
enum JSONCharset {
  /// `response` with its JSON body re-encoded as UTF-8 as described above, or `nil` when that
  /// does not apply: no legacy charset, not JSON, already UTF-8, over `limit` bytes, or not
  /// valid in the charset.
  static func reencodedAsUTF8(_ response: Response, limit: Int) -> Response? {
    guard let contentType = response.headers[.contentType],
      let (charset, mediaType) = legacyCharset(of: contentType),
      !response.body.isEmpty, response.body.count <= limit,
      String(validating: response.body, as: UTF8.self) == nil,
      let text = charset.decode(response.body)
    else { return nil }
    var response = response
    let body = Data(text.utf8)
    response.headers.set(.contentType, trustedValue: mediaType + "; charset=utf-8")
    if response.headers.contains(.contentLength) {
      response.headers.set(.contentLength, trustedValue: String(body.count))
    }
    response.body = body
    return response
  }

  /// The charset a JSON `Content-Type` names, when it is one to convert from, with the media
  /// type as written: `nil` for no charset (UTF-8), UTF-8 itself, US-ASCII (a subset),
  /// unknown names and other media types.
  ///
  /// Cheap for the usual values: without a `;` there is no parameter to read, a value that
  /// mentions `utf-8` or `utf8` names UTF-8, and nothing is allocated until neither holds.
  static func legacyCharset(of contentType: String) -> (TextCharset, mediaType: String)? {
    guard contentType.utf8.contains(UInt8(ascii: ";")), !mentionsUTF8(contentType),
      let label = TextCharset.charsetParameter(in: contentType),
      let charset = TextCharset.named(label)
    else { return nil }
    switch charset.decoder {
    case .utf8, .ascii: return nil
    default: break
    }
    let mediaType = contentType.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces)
    let lowercased = mediaType.lowercased()
    guard
      lowercased == "application/json" || lowercased == "text/json"
        || lowercased.hasSuffix("+json")
    else { return nil }
    return (charset, mediaType)
  }

  /// Whether `value` contains `utf-8` or `utf8`, in any case.
  static func mentionsUTF8(_ value: String) -> Bool {
    var matched = 0  // how much of "utf" (then an optional "-", then "8") has been read
    for byte in value.utf8 {
      let lower = ASCII.lowercased(byte)
      switch (matched, lower) {
      case (0, UInt8(ascii: "u")), (1, UInt8(ascii: "t")), (2, UInt8(ascii: "f")):
        matched += 1
      case (3, UInt8(ascii: "-")):
        matched = 4
      case (3, UInt8(ascii: "8")), (4, UInt8(ascii: "8")):
        return true
      default:
        matched = lower == UInt8(ascii: "u") ? 1 : 0
      }
    }
    return false
  }
}
