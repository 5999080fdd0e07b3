/// Checks on a received `Content-Length` that both transports built on libcurl make
/// themselves.
///
/// libcurl 7.88 reads a `Content-Length` too large for its 64-bit `curl_off_t`
/// (`99999999999999999999`) as no length at all and takes the body up to the connection's
/// close, so a body cut short would arrive as a short success on both transports. RFC 9112
/// §6.3 makes such a field invalid framing: the response must be discarded.
package enum ContentLengthField {
  /// Whether one item of a `Content-Length` value (between commas) is a run of digits whose
  /// number does not fit in an `Int64`. Read in place, without allocating: a transport checks
  /// every response's value.
  package static func exceedsInt64<Item: Collection<UInt8>>(_ item: Item) -> Bool {
    var value: Int64 = 0
    var overflows = false
    for byte in item where byte != 0x20 && byte != 0x09 {
      guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return false }
      let (tens, first) = value.multipliedReportingOverflow(by: 10)
      let (sum, second) = tens.addingReportingOverflow(Int64(byte &- UInt8(ascii: "0")))
      overflows = overflows || first || second
      value = sum
    }
    return overflows
  }

  /// Whether any item of the `Content-Length` value `value` is digits beyond `Int64.max`.
  package static func exceedsInt64(value: String) -> Bool {
    // Int64.max has 19 digits: a shorter value (every usual one) is not split at all.
    value.utf8.count >= 19
      && value.utf8.split(separator: UInt8(ascii: ",")).contains { exceedsInt64($0) }
  }

  /// The developer message for a response refused by ``exceedsInt64(value:)``.
  package static let beyondInt64Message =
    "the response's Content-Length is beyond 2^63 - 1 bytes: libcurl would read the body "
    + "until the connection closes, so the body cannot be framed (RFC 9112 §6.3)"
}
