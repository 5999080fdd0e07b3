/// HMAC-SHA256 (RFC 2104), checked against the RFC 4231 test vectors.
public enum HMACSHA256 {
  /// The authentication code of `message` under `key`.
  public static func authenticationCode(
    for message: some Sequence<UInt8>, key: some Sequence<UInt8>
  ) -> [UInt8] {
    var keyBlock = Array(key)
    if keyBlock.count > SHA256.blockSize { keyBlock = SHA256.hash(keyBlock) }
    keyBlock += [UInt8](repeating: 0, count: SHA256.blockSize - keyBlock.count)
    var inner = SHA256()
    inner.update(keyBlock.map { $0 ^ 0x36 })
    inner.update(message)
    var outer = SHA256()
    outer.update(keyBlock.map { $0 ^ 0x5c })
    outer.update(inner.finalize())
    return outer.finalize()
  }
}

extension Sequence<UInt8> {
  /// The bytes as lower-case hexadecimal.
  public var hexString: String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    for byte in self {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0x0f)])
    }
    return String(decoding: text, as: UTF8.self)
  }
}
