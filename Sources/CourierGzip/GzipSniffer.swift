import Foundation

/// Looks at bytes and media types to tell compressed data from plain data.
enum GzipSniffer {
  /// Whether `data` starts like a gzip member: magic `1f 8b` and method 8 (deflate).
  static func isGzip(_ data: Data) -> Bool {
    guard data.count >= 3 else { return false }
    let start = data.startIndex
    return data[start] == 0x1F && data[start + 1] == 0x8B && data[start + 2] == 0x08
  }

  /// Whether `data` starts with a valid zlib header (RFC 1950 §2.2).
  static func isZlib(_ data: Data) -> Bool {
    guard data.count >= 2 else { return false }
    return isZlibHeader(data[data.startIndex], data[data.startIndex + 1])
  }

  /// The size a gzip stream's last member says it decompresses to (its ISIZE trailer, the
  /// length modulo 2³²), or `nil` when `bytes` is too short to hold a member. A hint only.
  static func gzipTrailerSize(_ bytes: UnsafeRawBufferPointer) -> Int? {
    guard bytes.count >= 18 else { return nil }
    var size = 0
    for index in 0..<4 { size |= Int(bytes[bytes.count - 4 + index]) << (8 * index) }
    return size
  }

  /// Whether CMF and FLG form a valid zlib header: method 8 (deflate), a window of at most
  /// 32 KiB, no preset dictionary (HTTP has no way to name one), and
  /// `(CMF × 256 + FLG) % 31 == 0`.
  static func isZlibHeader(_ cmf: UInt8, _ flg: UInt8) -> Bool {
    cmf & 0x0F == 8 && cmf >> 4 <= 7 && flg & 0x20 == 0
      && (Int(cmf) * 256 + Int(flg)) % 31 == 0
  }

  /// Whether `data` starts with the signature of a format that is already compressed: gzip,
  /// zlib-less formats with magic numbers (zip, PNG, JPEG, GIF, WebP, zstd, xz, bzip2, 7z,
  /// RAR), where deflating again saves nothing.
  static func hasCompressedSignature(_ data: Data) -> Bool {
    let signatures: [[UInt8]] = [
      [0x1F, 0x8B],  // gzip
      [0x50, 0x4B, 0x03, 0x04],  // zip (also docx, xlsx, jar, apk)
      [0x89, 0x50, 0x4E, 0x47],  // PNG
      [0xFF, 0xD8, 0xFF],  // JPEG
      [0x47, 0x49, 0x46, 0x38],  // GIF8
      [0x28, 0xB5, 0x2F, 0xFD],  // zstd
      [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00],  // xz
      [0x42, 0x5A, 0x68],  // bzip2 "BZh"
      [0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C],  // 7z
      [0x52, 0x61, 0x72, 0x21],  // RAR "Rar!"
    ]
    for signature in signatures where data.starts(with: signature) { return true }
    // WebP: "RIFF" <size> "WEBP"
    if data.count >= 12, data.starts(with: [0x52, 0x49, 0x46, 0x46]),
      data.dropFirst(8).starts(with: [0x57, 0x45, 0x42, 0x50])
    {
      return true
    }
    return false
  }

  /// Whether a `Content-Type` names a compressed format: images other than SVG, BMP,
  /// icons and TIFF, audio other than WAV, video, archives and font files. `application/octet-stream` is *not* on the list:
  /// it says nothing about the bytes, so the signature check and the size check decide.
  static func isCompressedMediaType(_ contentType: String) -> Bool {
    let mediaType =
      contentType.split(separator: ";", maxSplits: 1).first.map {
        $0.trimmingCharacters(in: .whitespaces).lowercased()
      } ?? ""
    if mediaType.hasPrefix("image/") {
      return !["image/svg+xml", "image/bmp", "image/x-icon", "image/tiff"].contains(mediaType)
    }
    if mediaType.hasPrefix("audio/") {
      return !["audio/wav", "audio/wave", "audio/x-wav"].contains(mediaType)
    }
    if mediaType.hasPrefix("video/") { return true }
    let compressed: Set<String> = [
      "application/gzip", "application/x-gzip", "application/zip", "application/zstd",
      "application/x-7z-compressed", "application/x-rar-compressed", "application/vnd.rar",
      "application/x-bzip2", "application/x-xz", "application/x-compress",
      "application/x-brotli", "font/woff", "font/woff2",
    ]
    return compressed.contains(mediaType)
  }
}
