import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A text encoding named by the `charset` parameter of a `Content-Type`, and its decoder.
///
/// UTF-8, US-ASCII, ISO-8859-1 and UTF-16 are decoded in Swift. The legacy multi-byte
/// encodings (GBK, GB18030, Big5, Shift_JIS, EUC-JP, EUC-KR) and windows-1252 are decoded by
/// the C library's `iconv` on Linux (glibc and musl both carry them; Foundation on Linux has
/// no GBK), and by Foundation's CoreFoundation encodings on Apple platforms, where `iconv`
/// lives in a separate `libiconv` that would need its own linker flag.
///
/// Only the labels below are recognised, so a name from the network never reaches
/// `iconv_open` as it is (glibc treats suffixes such as `//IGNORE` as options).
struct TextCharset: Sendable, Equatable {
  enum Decoder: Sendable, Equatable {
    case utf8
    case ascii
    case latin1
    case utf16(bigEndian: Bool)
    /// Decoded by `iconv` under `iconvName`, or on Apple platforms by Foundation with the
    /// `String.Encoding` raw value `foundation`.
    case external(iconvName: String, foundation: UInt)
  }

  /// The name used in messages, such as `"GBK"`.
  let name: String
  let decoder: Decoder

  static let utf8 = TextCharset(name: "UTF-8", decoder: .utf8)
  static let utf16LittleEndian = TextCharset(name: "UTF-16LE", decoder: .utf16(bigEndian: false))
  static let utf16BigEndian = TextCharset(name: "UTF-16BE", decoder: .utf16(bigEndian: true))

  /// The CoreFoundation encodings as `String.Encoding` raw values
  /// (`CFStringConvertEncodingToNSStringEncoding` sets the high bit).
  private static func foundationEncoding(cf: UInt) -> UInt { 0x8000_0000 | cf }

  /// The charset for a label, compared ignoring ASCII case (WHATWG Encoding label aliases for
  /// the encodings supported here).
  static func named(_ label: String) -> TextCharset? {
    let label = label.lowercased()
    switch label {
    case "utf-8", "utf8", "unicode-1-1-utf-8":
      return .utf8
    case "us-ascii", "ascii", "ansi_x3.4-1968", "iso646-us":
      return TextCharset(name: "US-ASCII", decoder: .ascii)
    case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1", "iso-ir-100":
      return TextCharset(name: "ISO-8859-1", decoder: .latin1)
    // Without a byte order mark, "utf-16" is little-endian, as browsers read it (WHATWG).
    case "utf-16", "utf-16le", "unicode", "ucs-2":
      return TextCharset(
        name: label == "utf-16le" ? "UTF-16LE" : "UTF-16", decoder: .utf16(bigEndian: false))
    case "utf-16be", "unicodefffe":
      return .utf16BigEndian
    case "gbk", "x-gbk", "cp936", "windows-936", "ms936":
      return external("GBK", iconv: "GBK", cf: 0x0631)
    // GB2312 is a subset of GBK, and servers that say gb2312 often send GBK characters, so
    // it is decoded as GBK (as browsers do).
    case "gb2312", "gb_2312", "gb_2312-80", "euc-cn", "x-euc-cn", "csgb2312":
      return external("GB2312", iconv: "GBK", cf: 0x0631)
    case "gb18030":
      return external("GB18030", iconv: "GB18030", cf: 0x0632)
    case "big5", "x-x-big5", "cn-big5", "csbig5":
      return external("Big5", iconv: "BIG5", cf: 0x0A03)
    case "big5-hkscs":
      return external("Big5-HKSCS", iconv: "BIG5-HKSCS", cf: 0x0A06)
    case "shift_jis", "shift-jis", "sjis", "x-sjis", "ms_kanji", "csshiftjis":
      return external("Shift_JIS", iconv: "SHIFT_JIS", cf: 0x0A01)
    case "euc-jp", "x-euc-jp", "cseucpkdfmtjapanese":
      return external("EUC-JP", iconv: "EUC-JP", cf: 0x0920)
    case "euc-kr", "cseuckr", "ks_c_5601-1987", "windows-949":
      return external("EUC-KR", iconv: "EUC-KR", cf: 0x0940)
    case "windows-1252", "cp1252", "x-cp1252":
      return external("windows-1252", iconv: "WINDOWS-1252", cf: 0x0500)
    default:
      return nil
    }
  }

  private static func external(_ name: String, iconv: String, cf: UInt) -> TextCharset {
    TextCharset(
      name: name, decoder: .external(iconvName: iconv, foundation: foundationEncoding(cf: cf)))
  }

  /// The `charset` parameter of a `Content-Type` value, unquoted; `nil` when there is none.
  ///
  /// The parameter name is compared ignoring case; the value may be a token or a quoted
  /// string (RFC 9110 §5.6.6).
  static func charsetParameter(in contentType: String) -> String? {
    let bytes = Array(contentType.utf8)
    guard var index = bytes.firstIndex(of: UInt8(ascii: ";")) else { return nil }
    while index < bytes.count {
      // Skip `;` and optional whitespace before a parameter name.
      while index < bytes.count,
        [UInt8(ascii: ";"), 0x20, 0x09].contains(bytes[index])
      {
        index += 1
      }
      let nameStart = index
      while index < bytes.count, bytes[index] != UInt8(ascii: "="),
        bytes[index] != UInt8(ascii: ";")
      {
        index += 1
      }
      let name = bytes[nameStart..<index]
      guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { continue }
      index += 1
      var value: [UInt8] = []
      if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
        index += 1
        while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
          if bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count { index += 1 }
          value.append(bytes[index])
          index += 1
        }
        index += 1
      } else {
        while index < bytes.count, bytes[index] != UInt8(ascii: ";") {
          value.append(bytes[index])
          index += 1
        }
      }
      let isCharset =
        name.count == 7
        && zip(name, "charset".utf8).allSatisfy { ASCII.lowercased($0) == $1 }
      if isCharset {
        let text = String(decoding: value, as: UTF8.self)
        return text.trimmingCharacters(in: .whitespaces)
      }
    }
    return nil
  }

  /// Decodes `data` as text in the charset of `contentType` (UTF-8 when it names none).
  ///
  /// A byte order mark at the start wins over the label and is dropped, as browsers decode
  /// (WHATWG Encoding, "decode"): `EF BB BF` is UTF-8, `FF FE` UTF-16LE, `FE FF` UTF-16BE.
  ///
  /// - Throws: ``CourierError`` of kind ``CourierError/Kind/decoding`` for a charset not
  ///   supported here, or bytes that are not valid in the charset.
  static func decode(_ data: Data, contentType: String?) throws -> String {
    // Nothing to decode: a 204 or an empty 200 is empty text, whatever its label says.
    if data.isEmpty { return "" }
    var charset = TextCharset.utf8
    if let label = contentType.flatMap(charsetParameter(in:)) {
      guard let named = named(label) else {
        let shown = label.count > 40 ? label.prefix(40) + "…" : label
        throw CourierError(
          kind: .decoding,
          debugMessage: "unsupported charset \(String(shown).debugDescription) in Content-Type")
      }
      charset = named
    }
    var body = data[...]
    if body.starts(with: [0xEF, 0xBB, 0xBF]) {
      charset = .utf8
      body = body.dropFirst(3)
    } else if body.starts(with: [0xFF, 0xFE]) {
      charset = .utf16LittleEndian
      body = body.dropFirst(2)
    } else if body.starts(with: [0xFE, 0xFF]) {
      charset = .utf16BigEndian
      body = body.dropFirst(2)
    }
    guard let text = charset.decode(body) else {
      throw CourierError(kind: .decoding, debugMessage: "body is not valid \(charset.name)")
    }
    return text
  }

  /// The text of `bytes`, or `nil` when they are not valid in this charset (or the system
  /// cannot decode it).
  func decode(_ bytes: Data) -> String? {
    switch decoder {
    case .utf8:
      return String(validating: bytes, as: UTF8.self)
    case .ascii:
      guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
      return String(decoding: bytes, as: UTF8.self)
    case .latin1:
      // Every byte is the code point of the same value.
      return String(String.UnicodeScalarView(bytes.lazy.map { Unicode.Scalar($0) }))
    case .utf16(let bigEndian):
      guard bytes.count.isMultiple(of: 2) else { return nil }
      var units: [UInt16] = []
      units.reserveCapacity(bytes.count / 2)
      var index = bytes.startIndex
      while index < bytes.endIndex {
        let first = UInt16(bytes[index])
        let second = UInt16(bytes[index + 1])
        units.append(bigEndian ? first << 8 | second : second << 8 | first)
        index += 2
      }
      return String(validating: units, as: UTF16.self)
    case .external(let iconvName, let foundation):
      #if canImport(Glibc) || canImport(Musl)
        _ = foundation
        return Self.iconvDecode(bytes, from: iconvName)
      #else
        _ = iconvName
        return String(data: bytes, encoding: String.Encoding(rawValue: foundation))
      #endif
    }
  }

  #if canImport(Glibc) || canImport(Musl)
    /// The size of the buffer `iconv` writes into, reused for the whole body, so memory beyond
    /// the result stays fixed however large the body is.
    private static let outputChunkSize = 16 * 1024

    /// Converts `bytes` from `source` to UTF-8 with `iconv`, through a fixed-size output
    /// buffer; `nil` for an invalid or truncated sequence, or when the system lacks the
    /// converter.
    private static func iconvDecode(_ bytes: Data, from source: String) -> String? {
      guard let descriptor = iconv_open("UTF-8", source), Int(bitPattern: descriptor) != -1
      else { return nil }
      defer { iconv_close(descriptor) }
      var output: [UInt8] = []
      output.reserveCapacity(bytes.count * 3 / 2)
      let converted = withUnsafeTemporaryAllocation(of: CChar.self, capacity: outputChunkSize) {
        chunk -> Bool in
        bytes.withUnsafeBytes { raw -> Bool in
          guard let base = raw.baseAddress else { return true }
          var input: UnsafeMutablePointer<CChar>? = UnsafeMutablePointer(
            mutating: base.assumingMemoryBound(to: CChar.self))
          var inputLeft = raw.count
          // Whether to go on after a call that failed with `error` (0 for none) and wrote
          // `produced` bytes: E2BIG means the chunk is full; EILSEQ (an invalid sequence) and
          // EINVAL (a sequence cut off at the end) mean the body is not in this charset.
          func mayContinue(_ error: Int32, _ produced: Int) -> Bool {
            error == 0 || (error == E2BIG && produced > 0)
          }
          while inputLeft > 0 {
            var out = chunk.baseAddress
            var outLeft = chunk.count
            let error = iconv(descriptor, &input, &inputLeft, &out, &outLeft) == -1 ? errno : 0
            let produced = chunk.count - outLeft
            output.append(
              contentsOf: UnsafeRawBufferPointer(start: chunk.baseAddress, count: produced))
            guard mayContinue(error, produced) else { return false }
          }
          // A call without input flushes the pending output of a stateful encoding.
          while true {
            var out = chunk.baseAddress
            var outLeft = chunk.count
            let error = iconv(descriptor, nil, nil, &out, &outLeft) == -1 ? errno : 0
            let produced = chunk.count - outLeft
            output.append(
              contentsOf: UnsafeRawBufferPointer(start: chunk.baseAddress, count: produced))
            if error == 0 { return true }
            guard mayContinue(error, produced) else { return false }
          }
        }
      }
      return converted ? String(validating: output, as: UTF8.self) : nil
    }
  #endif
}
