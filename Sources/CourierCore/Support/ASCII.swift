/// Byte-level ASCII classes shared by the header, token, URL, JSON and HTTP parsers, so each
/// rule is written once.
///
/// `package` so that `CourierTesting`'s HTTP parser uses the same definitions.
package enum ASCII {
  /// `0`–`9`.
  @inline(__always)
  package static func isDigit(_ byte: UInt8) -> Bool {
    byte &- UInt8(ascii: "0") < 10
  }

  /// `0`–`9`, `a`–`f`, `A`–`F`.
  @inline(__always)
  package static func isHexDigit(_ byte: UInt8) -> Bool {
    isDigit(byte) || (byte | 0x20) &- UInt8(ascii: "a") < 6
  }

  /// Space or horizontal tab: HTTP's optional white space (RFC 9110 §5.6.3), trimmed from
  /// header values and skipped around them.
  @inline(__always)
  package static func isOptionalWhitespace(_ byte: UInt8) -> Bool {
    byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
  }

  /// `a`–`z`, `A`–`Z`.
  @inline(__always)
  package static func isLetter(_ byte: UInt8) -> Bool {
    (byte | 0x20) &- UInt8(ascii: "a") < 26
  }

  /// `a`–`z`, `A`–`Z`, `0`–`9`.
  @inline(__always)
  package static func isAlphanumeric(_ byte: UInt8) -> Bool {
    isLetter(byte) || isDigit(byte)
  }

  /// A byte of a URL scheme after its first letter (RFC 3986 §3.1): a letter, a digit, `+`,
  /// `-` or `.`.
  @inline(__always)
  package static func isSchemeByte(_ byte: UInt8) -> Bool {
    isAlphanumeric(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
      || byte == UInt8(ascii: ".")
  }

  /// The byte with `A`–`Z` lowered; every other byte unchanged.
  @inline(__always)
  package static func lowercased(_ byte: UInt8) -> UInt8 {
    byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
  }

  /// The byte with `a`–`z` raised; every other byte unchanged.
  @inline(__always)
  package static func uppercased(_ byte: UInt8) -> UInt8 {
    byte &- UInt8(ascii: "a") < 26 ? byte & ~0x20 : byte
  }

  /// Whether `lhs` and `rhs` hold the same bytes, ignoring ASCII case. Specialised for the
  /// buffers it is called with: over contiguous bytes it costs a loop, where zipping two
  /// `String.UTF8View`s cost more than the comparison.
  package static func equalIgnoringCase<L: Collection<UInt8>, R: Collection<UInt8>>(
    _ lhs: L, _ rhs: R
  ) -> Bool {
    guard lhs.count == rhs.count else { return false }
    var right = rhs.makeIterator()
    for byte in lhs where lowercased(byte) != right.next().map(lowercased) { return false }
    return true
  }

  /// The value of a hexadecimal digit, or `nil`.
  @inline(__always)
  package static func hexValue(_ byte: UInt8) -> UInt8? {
    if isDigit(byte) { return byte &- UInt8(ascii: "0") }
    let lower = byte | 0x20
    if lower &- UInt8(ascii: "a") < 6 { return lower &- UInt8(ascii: "a") &+ 10 }
    return nil
  }
}
