import CCourierZlib
import CourierCore
import Foundation

/// Streaming compression to gzip, zlib or raw deflate, in fixed-size chunks.
///
/// Feed the input with ``compress(_:output:)`` as it comes and call ``finish(output:)`` once at
/// the end; each call hands the compressed bytes to `output` in chunks of at most
/// ``chunkSize`` bytes (the output size is never guessed up front). For a body in memory,
/// ``compress(_:format:level:)`` does all three steps.
///
/// The type is not `Sendable`: use one instance from one task at a time.
///
/// ```swift
/// let body = Data(repeating: UInt8(ascii: "a"), count: 10_000)
/// let gzip = try GzipCompressor.compress(body, format: .gzip, level: .fastest)
/// ```
public final class GzipCompressor {
  /// The largest piece of output handed to the `output` closure at once: 64 KiB.
  public static let chunkSize = 64 * 1024

  /// The format written; ``GzipFormat/deflate`` writes zlib-wrapped data.
  public let format: GzipFormat
  /// The compression level.
  public let level: CompressionLevel
  /// Uncompressed bytes consumed so far.
  public private(set) var totalIn = 0
  /// Compressed bytes produced so far.
  public private(set) var totalOut = 0

  private let stream = ZlibSupport.allocateStream()
  private let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: GzipCompressor.chunkSize)
  private var started = false
  private var finished = false

  /// Creates a compressor.
  ///
  /// - Parameters:
  ///   - format: The format to write; default gzip.
  ///   - level: The compression level; default ``CompressionLevel/default`` (6).
  public init(format: GzipFormat = .gzip, level: CompressionLevel = .default) {
    self.format = format
    self.level = level
  }

  deinit {
    if started { deflateEnd(stream) }
    stream.deinitialize(count: 1)
    stream.deallocate()
    buffer.deallocate()
  }

  /// Compresses `input`, passing whatever output is ready to `output` in chunks of at most
  /// ``chunkSize`` bytes (zlib may hold input back until later calls). The chunk is only valid
  /// during the call.
  ///
  /// - Throws: ``CourierError`` of kind ``CourierError/Kind/invalidRequest`` when called after
  ///   ``finish(output:)`` or when zlib fails, or whatever `output` throws.
  public func compress(
    _ input: some ContiguousBytes, output: (UnsafeRawBufferPointer) throws -> Void
  ) throws {
    try start()
    try input.withUnsafeBytes { bytes in
      try ZlibSupport.forEachPiece(of: bytes) { piece in
        try run(piece, flush: Z_NO_FLUSH, output: output)
      }
    }
  }

  /// Writes the rest of the stream: buffered output, the end of the deflate stream and the
  /// format's trailer (gzip's CRC-32 and length, zlib's Adler-32).
  ///
  /// - Throws: ``CourierError`` of kind ``CourierError/Kind/invalidRequest`` when called twice
  ///   or when zlib fails, or whatever `output` throws.
  public func finish(output: (UnsafeRawBufferPointer) throws -> Void) throws {
    try start()
    try run(UnsafeRawBufferPointer(start: nil, count: 0), flush: Z_FINISH, output: output)
    finished = true
  }

  /// Compresses all of `data` into one complete stream.
  ///
  /// - Throws: ``CourierError`` of kind ``CourierError/Kind/invalidRequest`` when zlib fails
  ///   (out of memory).
  public static func compress(
    _ data: some ContiguousBytes, format: GzipFormat = .gzip, level: CompressionLevel = .default
  ) throws -> Data {
    let compressor = GzipCompressor(format: format, level: level)
    if let result = try data.withUnsafeBytes({ try compressor.compressAtOnce($0) }) {
      return result
    }
    var result = Data()
    try compressor.compress(data) { result.append(contentsOf: $0) }
    try compressor.finish { result.append(contentsOf: $0) }
    return result
  }

  /// Compresses all of `input` in one `deflate` call straight into memory of `deflateBound`
  /// bytes, as zlib's own `compress2` does, instead of chunk by chunk into a growing `Data`
  /// (an extra copy of every byte); `nil` for an input too large for zlib's 32-bit counts,
  /// which the chunked path handles.
  private func compressAtOnce(_ input: UnsafeRawBufferPointer) throws -> Data? {
    guard input.count < 1 << 30 else { return nil }
    try start()
    let bound = Int(deflateBound(stream, uLong(input.count)))
    guard let memory = malloc(max(bound, 1))?.assumingMemoryBound(to: UInt8.self) else {
      throw Self.failure("no memory for \(bound) bytes of compressed output")
    }
    stream.pointee.next_in = UnsafeMutablePointer(
      mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
    stream.pointee.avail_in = UInt32(input.count)
    stream.pointee.next_out = memory
    stream.pointee.avail_out = UInt32(bound)
    let code = deflate(stream, Z_FINISH)
    let produced = bound - Int(stream.pointee.avail_out)
    stream.pointee.next_in = nil
    stream.pointee.avail_in = 0
    guard code == Z_STREAM_END else {
      free(memory)
      throw Self.failure("zlib failed to deflate: \(ZlibSupport.message(stream, code: code))")
    }
    totalIn = input.count
    totalOut = produced
    finished = true
    let result = realloc(memory, max(produced, 1))?.assumingMemoryBound(to: UInt8.self) ?? memory
    return Data(bytesNoCopy: result, count: produced, deallocator: .free)
  }

  private func start() throws {
    guard !finished else { throw Self.failure("the compressor was used after finish(output:)") }
    guard !started else { return }
    // memLevel 8 is zlib's default: 128 KiB of state beside the 32 KiB window.
    let code = courier_deflateInit2(
      stream, Int32(level.value), format.windowBits, 8, Z_DEFAULT_STRATEGY)
    guard code == Z_OK else {
      throw Self.failure(
        "zlib could not start deflating: \(ZlibSupport.message(stream, code: code))")
    }
    started = true
  }

  private func run(
    _ input: UnsafeRawBufferPointer, flush: Int32,
    output: (UnsafeRawBufferPointer) throws -> Void
  ) throws {
    if let base = input.baseAddress {
      stream.pointee.next_in = UnsafeMutablePointer(
        mutating: base.assumingMemoryBound(to: Bytef.self))
    }
    stream.pointee.avail_in = UInt32(input.count)
    defer {
      stream.pointee.next_in = nil
      stream.pointee.avail_in = 0
    }
    while true {
      stream.pointee.next_out = buffer
      stream.pointee.avail_out = UInt32(Self.chunkSize)
      let availableBefore = Int(stream.pointee.avail_in)
      let code = deflate(stream, flush)
      totalIn += availableBefore - Int(stream.pointee.avail_in)
      let produced = Self.chunkSize - Int(stream.pointee.avail_out)
      guard code == Z_OK || code == Z_BUF_ERROR || code == Z_STREAM_END else {
        throw Self.failure("zlib failed to deflate: \(ZlibSupport.message(stream, code: code))")
      }
      if produced > 0 {
        totalOut += produced
        try output(UnsafeRawBufferPointer(start: buffer, count: produced))
      }
      if flush == Z_FINISH {
        if code == Z_STREAM_END { return }
      } else if stream.pointee.avail_in == 0 && stream.pointee.avail_out != 0 {
        return
      }
      if code == Z_BUF_ERROR && produced == 0 { return }
    }
  }

  private static func failure(_ message: String) -> CourierError {
    CourierError(kind: .invalidRequest, debugMessage: message)
  }
}
