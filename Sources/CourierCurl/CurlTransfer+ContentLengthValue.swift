import CourierCore

extension CurlTransfer {
  /// One `Content-Length` value without its white space: a number when it is a short run of
  /// digits (so `05` and `5` agree), else its bytes.
  enum ContentLengthValue: Equatable {
    case number(UInt64)
    case text([UInt8])

    /// The value of `item`, or `nil` when it is only white space (an empty item, as in `5,`).
    /// Digits are read without allocating: the usual value costs nothing under the engine lock.
    init?(_ item: Slice<UnsafeRawBufferPointer>) {
      var number: UInt64 = 0
      var digits = 0
      for byte in item where byte != 0x20 && byte != 0x09 {
        guard ASCII.isDigit(byte), digits < 18 else {
          self = .text(item.filter { $0 != 0x20 && $0 != 0x09 })
          return
        }
        number = number * 10 + UInt64(byte - UInt8(ascii: "0"))
        digits += 1
      }
      guard digits > 0 else { return nil }
      self = .number(number)
    }
  }
}
