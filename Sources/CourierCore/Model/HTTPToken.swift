/// RFC 9110 §5.6.2 token rules, shared by methods and header names.
enum HTTPToken {
  /// Whether `string` is a non-empty token.
  static func isValid(_ string: String) -> Bool {
    guard !string.isEmpty else { return false }
    return string.utf8.allSatisfy(isTokenByte)
  }

  /// `string` when it is a token; otherwise an `invalidRequest` error naming `what` it was.
  static func checked(_ string: String, as what: String) throws -> String {
    guard isValid(string) else {
      throw CourierError(
        kind: .invalidRequest,
        debugMessage: "\(what) \(string.debugDescription) is not a valid token")
    }
    return string
  }

  /// Whether one byte may appear in a token.
  @inline(__always)
  static func isTokenByte(_ byte: UInt8) -> Bool {
    if ASCII.isAlphanumeric(byte) { return true }
    switch byte {
    case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"),
      UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"),
      UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
      UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
      return true
    default:
      return false
    }
  }
}
