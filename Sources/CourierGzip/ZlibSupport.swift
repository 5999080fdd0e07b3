import CCourierZlib
import CourierCore

/// Helpers shared by ``GzipCompressor`` and ``GzipDecompressor``.
enum ZlibSupport {
  /// zlib counts input in `UInt32`; larger buffers are fed in pieces of this size.
  static let largestPiece = 1 << 30

  /// zlib's message for the last error on `stream`, or a description of `code`.
  static func message(_ stream: UnsafeMutablePointer<z_stream>, code: Int32) -> String {
    if let text = stream.pointee.msg { return String(cString: text) }
    switch code {
    case Z_MEM_ERROR: return "out of memory"
    case Z_STREAM_ERROR: return "inconsistent stream state"
    case Z_VERSION_ERROR: return "incompatible zlib version"
    case Z_NEED_DICT: return "the stream needs a preset dictionary"
    default: return "zlib error \(code)"
    }
  }

  /// Calls `body` with consecutive pieces of `bytes` no larger than ``largestPiece``.
  static func forEachPiece(
    of bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Void
  ) rethrows {
    var start = 0
    while start < bytes.count {
      let end = min(start + largestPiece, bytes.count)
      try body(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
      start = end
    }
  }

  /// A zero-initialised `z_stream` at a stable address (zlib keeps a pointer back to it).
  static func allocateStream() -> UnsafeMutablePointer<z_stream> {
    let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    stream.initialize(to: z_stream())
    return stream
  }
}
