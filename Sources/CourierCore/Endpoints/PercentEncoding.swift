/// RFC 3986 percent-encoding with a choice of characters left as they are.
enum PercentEncoding {
  enum Kept {
    /// `A-Z a-z 0-9 - . _ ~`: safe in any component. Used for parameter values and query
    /// names and values, so `/ ? # & = + %` and spaces are always encoded.
    case unreserved
    /// `A-Z a-z 0-9 * - . _`, with space written as `+`: `application/x-www-form-urlencoded`.
    case form
  }

  private static let hex = Array("0123456789ABCDEF".utf8)

  static func encode(_ string: String, keeping kept: Kept) -> String {
    var output = [UInt8]()
    output.reserveCapacity(string.utf8.count)
    append(string, to: &output, keeping: kept)
    return String(decoding: output, as: UTF8.self)
  }

  static func append(_ string: String, to output: inout [UInt8], keeping kept: Kept) {
    for byte in string.utf8 {
      if ASCII.isAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
        || byte == UInt8(ascii: "_")
      {
        output.append(byte)
      } else if kept == .unreserved, byte == UInt8(ascii: "~") {
        output.append(byte)
      } else if kept == .form, byte == UInt8(ascii: "*") {
        output.append(byte)
      } else if kept == .form, byte == UInt8(ascii: " ") {
        output.append(UInt8(ascii: "+"))
      } else {
        appendEscaped(byte, to: &output)
      }
    }
  }

  static func appendEscaped(_ byte: UInt8, to output: inout [UInt8]) {
    output.append(UInt8(ascii: "%"))
    output.append(hex[Int(byte >> 4)])
    output.append(hex[Int(byte & 0x0F)])
  }

  /// Whether a literal template byte may stand in a path as it is: unreserved, sub-delims,
  /// `:`, `@`, `/` (and `%`, which the caller checks starts an escape).
  static func keepsInPath(_ byte: UInt8) -> Bool {
    if ASCII.isAlphanumeric(byte) { return true }
    return switch byte {
    case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"),
      UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"),
      UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"),
      UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: ":"),
      UInt8(ascii: "@"), UInt8(ascii: "/"):
      true
    default: false
    }
  }
}
