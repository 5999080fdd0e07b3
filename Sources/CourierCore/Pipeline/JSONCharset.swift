import Foundation

/// Re-encodes as UTF-8 a JSON body whose `Content-Type` names another charset, before the
/// response pipeline reads it.
///
/// RFC 8259 §8.1 has JSON exchanged between systems in UTF-8, and `JSONDecoder` reads only
/// Unicode, but older back ends send `application/json; charset=GBK` (or `ISO-8859-1`,
/// `Big5`, `Shift_JIS`): the envelope scanner and the decoder would reject every such body
/// as not UTF-8. AFNetworking's JSON serializer converted such bodies by the response's text
/// encoding; this does the same, with ``TextCharset``'s decoders, for JSON media types only
/// (`application/json`, `text/json`, `…+json`).
///
/// Bytes that are already valid UTF-8 are left as they are whatever the label says: a label
/// that does not match its body is far more common than a body in a legacy charset that
/// happens to be valid UTF-8 (GBK text almost never is). A body that is not valid in the
/// named charset is left too, so the decoder reports it. After re-encoding, `Content-Type`
/// says `charset=utf-8` and `Content-Length` (when present) the new size, so every later stage
/// and the response handed back see the truth.
enum JSONCharset {
  /// Re-encodes `response`'s body as described above, when it is a JSON body of at most
  /// `limit` bytes in a charset other than UTF-8.
  static func reencodeAsUTF8(_ response: inout Response, limit: Int) {
    guard let contentType = response.headers[.contentType],
      let charset = legacyCharset(of: contentType),
      !response.body.isEmpty, response.body.count <= limit,
      String(validating: response.body, as: UTF8.self) == nil,
      let text = charset.decode(response.body)
    else { return }
    let body = Data(text.utf8)
    let mediaType = contentType.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces)
    response.headers.set(.contentType, trustedValue: mediaType + "; charset=utf-8")
    if response.headers.contains(.contentLength) {
      response.headers.set(.contentLength, trustedValue: String(body.count))
    }
    response.body = body
  }

  /// `response` with its body re-encoded as ``reencodeAsUTF8(_:limit:)`` does.
  static func reencodedAsUTF8(_ response: Response, limit: Int) -> Response {
    var response = response
    reencodeAsUTF8(&response, limit: limit)
    return response
  }

  /// The charset a JSON `Content-Type` names, when it is one to convert from: `nil` for no
  /// charset (UTF-8), UTF-8 itself, US-ASCII (a subset), unknown names and other media types.
  ///
  /// Cheap for the usual values: without a `;` there is no parameter to read, a value that
  /// mentions `utf-8` or `utf8` names UTF-8, and nothing is allocated until neither holds.
  static func legacyCharset(of contentType: String) -> TextCharset? {
    guard contentType.utf8.contains(UInt8(ascii: ";")), !mentionsUTF8(contentType),
      let label = TextCharset.charsetParameter(in: contentType),
      let charset = TextCharset.named(label)
    else { return nil }
    switch charset.decoder {
    case .utf8, .ascii: return nil
    default: break
    }
    let mediaType = contentType.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces)
      .lowercased()
    guard
      mediaType == "application/json" || mediaType == "text/json"
        || mediaType.hasSuffix("+json")
    else { return nil }
    return charset
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
