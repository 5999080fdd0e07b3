/// Splits a `Set-Cookie` value that `HTTPURLResponse` merged from several fields back into one
/// value per cookie.
///
/// On Linux, `HTTPURLResponse` joins repeated header fields with `", "`, and `Set-Cookie` is
/// the one field where that is not equivalent (RFC 9110 §5.3; RFC 6265 §3). A comma starts a
/// new cookie only when what follows it, after spaces, is a cookie name and `=`: the comma in
/// `Expires=Wed, 21 Oct 2015 07:28:00 GMT` is followed by `21 `, so it stays. A cookie value
/// that itself holds `, name=` (which RFC 6265 forbids) is split there too; nothing better can
/// be done once the fields were merged.
enum SetCookieSplitter {
  /// The cookies in `merged`, trimmed of surrounding spaces, in order; empty pieces are
  /// dropped.
  static func split(_ merged: String) -> [String] {
    let bytes = Array(merged.utf8)
    guard bytes.contains(UInt8(ascii: ",")) else { return [merged] }
    var cookies: [String] = []
    var start = 0
    var index = 0
    while index < bytes.count {
      if bytes[index] == UInt8(ascii: ","), let next = nameStart(after: index, in: bytes) {
        append(bytes[start..<index], to: &cookies)
        start = next
        index = next
      } else {
        index += 1
      }
    }
    append(bytes[start...], to: &cookies)
    return cookies
  }

  /// Where the next cookie starts when the comma at `comma` is followed by `name=`.
  private static func nameStart(after comma: Int, in bytes: [UInt8]) -> Int? {
    var start = comma + 1
    while start < bytes.count, bytes[start] == UInt8(ascii: " ") || bytes[start] == 0x09 {
      start += 1
    }
    var end = start
    while end < bytes.count, isTokenByte(bytes[end]) { end += 1 }
    guard end > start, end < bytes.count, bytes[end] == UInt8(ascii: "=") else { return nil }
    return start
  }

  /// An RFC 9110 `tchar`, the characters of a cookie name.
  private static func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"):
      true
    default:
      "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }
  }

  private static func append(_ piece: ArraySlice<UInt8>, to cookies: inout [String]) {
    var piece = piece
    while let first = piece.first, first == UInt8(ascii: " ") || first == 0x09 {
      piece = piece.dropFirst()
    }
    while let last = piece.last, last == UInt8(ascii: " ") || last == 0x09 {
      piece = piece.dropLast()
    }
    if !piece.isEmpty { cookies.append(String(decoding: piece, as: UTF8.self)) }
  }
}
