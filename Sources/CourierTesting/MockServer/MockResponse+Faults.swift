import Foundation

extension MockResponse {
  /// A response whose body is `data` as one gzip member, with `Content-Encoding: gzip`.
  ///
  /// The member is written by hand: a 10-byte header, `data` in stored (uncompressed)
  /// deflate blocks of up to 65,535 bytes, then the CRC-32 and the length of `data`. Any gzip
  /// decoder inflates it; with `corruptCRC` the CRC-32 in the trailer has every bit flipped,
  /// so a decoder that checks the trailer (as RFC 1952 requires) reports a corrupt body
  /// after inflating all of it.
  ///
  /// ```swift
  /// server.enqueue(.gzip(Data(#"{"ok":true}"#.utf8), corruptCRC: true))
  /// ```
  ///
  /// - Parameters:
  ///   - data: The body before encoding.
  ///   - corruptCRC: Write a wrong CRC-32 in the trailer.
  ///   - status: The status code.
  ///   - contentType: The `Content-Type` of `data`.
  public static func gzip(
    _ data: Data, corruptCRC: Bool = false, status: Int = 200,
    contentType: String = "application/json"
  ) -> MockResponse {
    MockResponse(
      status: status,
      headers: [
        MockHeader(name: "Content-Type", value: contentType),
        MockHeader(name: "Content-Encoding", value: "gzip"),
      ],
      body: GzipMember.stored(data, corruptCRC: corruptCRC))
  }

  /// A copy of this response with `Retry-After: <seconds>` (the delay-seconds form).
  ///
  /// ```swift
  /// server.enqueue(MockResponse(status: 503).retryAfter(seconds: 1))
  /// ```
  public func retryAfter(seconds: Int) -> MockResponse {
    addingHeader("Retry-After", String(max(0, seconds)))
  }

  /// A copy of this response with `Retry-After: <HTTP-date>`, the IMF-fixdate form such as
  /// `Sun, 06 Nov 1994 08:49:37 GMT` (see ``httpDate(_:)``).
  ///
  /// ```swift
  /// server.enqueue(MockResponse(status: 503).retryAfter(date: Date().addingTimeInterval(2)))
  /// ```
  public func retryAfter(date: Date) -> MockResponse {
    addingHeader("Retry-After", Self.httpDate(date))
  }

  /// `date` as an IMF-fixdate (RFC 9110 §5.6.7), such as `Sun, 06 Nov 1994 08:49:37 GMT`:
  /// English names, GMT, whole seconds (rounded down).
  public static func httpDate(_ date: Date) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(secondsFromGMT: 0)
    formatter.calendar = Calendar(identifier: .gregorian)
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    return formatter.string(from: date)
  }
}

/// Writes gzip members without a compressor: stored deflate blocks and a CRC-32.
enum GzipMember {
  /// `data` as one gzip member with stored blocks; `corruptCRC` flips the trailer's CRC-32.
  static func stored(_ data: Data, corruptCRC: Bool) -> Data {
    // ID1 ID2 CM=deflate FLG=0 MTIME=0 XFL=0 OS=255 (unknown).
    var member = Data([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255])
    let bytes = [UInt8](data)
    var offset = 0
    repeat {
      let count = min(65_535, bytes.count - offset)
      let final: UInt8 = offset + count == bytes.count ? 1 : 0
      // BFINAL, BTYPE=00 (stored), then LEN and its ones' complement NLEN, little-endian.
      member.append(final)
      let length = UInt16(count)
      member.append(contentsOf: [UInt8(length & 0xff), UInt8(length >> 8)])
      member.append(contentsOf: [UInt8(~length & 0xff), UInt8(~length >> 8)])
      member.append(contentsOf: bytes[offset..<offset + count])
      offset += count
    } while offset < bytes.count
    let crc = crc32(bytes) ^ (corruptCRC ? 0xffff_ffff : 0)
    appendLittleEndian(crc, to: &member)
    appendLittleEndian(UInt32(truncatingIfNeeded: bytes.count), to: &member)
    return member
  }

  /// The CRC-32 of RFC 1952 (the reflected polynomial 0xEDB88320).
  static func crc32(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xffff_ffff
    for byte in bytes {
      crc ^= UInt32(byte)
      for _ in 0..<8 {
        crc = crc & 1 == 1 ? (crc >> 1) ^ 0xedb8_8320 : crc >> 1
      }
    }
    return ~crc
  }

  private static func appendLittleEndian(_ value: UInt32, to data: inout Data) {
    data.append(contentsOf: [
      UInt8(value & 0xff), UInt8((value >> 8) & 0xff), UInt8((value >> 16) & 0xff),
      UInt8(value >> 24),
    ])
  }
}
