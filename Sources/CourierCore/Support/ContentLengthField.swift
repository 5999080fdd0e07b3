/// Checks on a received `Content-Length` that both transports built on libcurl make
/// themselves.
///
/// libcurl 7.88 reads a `Content-Length` too large for its 64-bit `curl_off_t`
/// (`99999999999999999999`) as no length at all and takes the body up to the connection's
/// close, so a body cut short arrived as a short success on both transports (found with a
/// hostile server). RFC 9112 §6.3 makes such a field invalid framing: the response must be
/// discarded.
package enum ContentLengthField {
  /// Whether one item of a `Content-Length` value (between commas) is a run of digits whose
  /// number does not fit in an `Int64`.
  package static func exceedsInt64<Item: Collection<UInt8>>(_ item: Item) -> Bool {
    var digits: [UInt8] = []
    for byte in item where byte != 0x20 && byte != 0x09 {
      guard ASCII.isDigit(byte) else { return false }
      digits.append(byte)
    }
    return !digits.isEmpty && Int64(String(decoding: digits, as: UTF8.self)) == nil
  }

  /// Whether any item of the `Content-Length` value `value` is digits beyond `Int64.max`.
  package static func exceedsInt64(value: String) -> Bool {
    value.utf8.split(separator: UInt8(ascii: ",")).contains { exceedsInt64($0) }
  }

  /// The developer message for a response refused by ``exceedsInt64(value:)``.
  package static let beyondInt64Message =
    "the response's Content-Length is beyond 2^63 - 1 bytes: libcurl would read the body "
    + "until the connection closes, so the body cannot be framed (RFC 9112 §6.3)"
}
