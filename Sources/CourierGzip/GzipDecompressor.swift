import CCourierZlib
import CourierCore
import Foundation

/// Streaming decompression of gzip, zlib and raw deflate data, in fixed-size chunks and within
/// a ``DecompressionLimit``.
///
/// Feed compressed bytes as they arrive with ``decompress(_:output:)``; each call hands the
/// decompressed bytes to `output` in chunks of at most ``chunkSize`` bytes (the output size is
/// never guessed up front). Call ``finish()`` after the last input to check that the stream was
/// complete.
///
/// - Truncated input, a bad CRC-32, Adler-32 or length, bytes after the end of the stream that
///   are not another gzip member, and corrupt deflate data throw ``CourierError`` of kind
///   ``CourierError/Kind/corruptBody``.
/// - Passing the limit throws kind ``CourierError/Kind/bodyTooLarge`` before the chunk that
///   passes it is handed to `output`, so a caller that keeps the output never holds more than
///   the limit, and this type itself never holds more than one chunk.
///
/// After an error every later call throws the same error. The type is not `Sendable`: use one
/// instance from one task at a time.
///
/// ```swift
/// let compressed = try GzipCompressor.compress(Data("hello".utf8))
/// let decompressor = GzipDecompressor(format: .gzip, limit: .standard)
/// var text = Data()
/// try decompressor.decompress(compressed) { chunk in text.append(contentsOf: chunk) }
/// try decompressor.finish()
/// ```
public final class GzipDecompressor {
  /// The largest piece of output handed to the `output` closure at once: 64 KiB.
  public static let chunkSize = 64 * 1024

  /// The format read; ``GzipFormat/deflate`` picks zlib or raw from the first two bytes.
  public let format: GzipFormat
  /// The bounds on the output.
  public let limit: DecompressionLimit
  /// Compressed bytes consumed so far.
  public private(set) var totalIn = 0
  /// Decompressed bytes produced so far.
  public private(set) var totalOut = 0

  private enum State {
    case notStarted
    case inflating
    case streamEnded
  }

  private let stream = ZlibSupport.allocateStream()
  private let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: GzipDecompressor.chunkSize)
  private var state = State.notStarted
  private var started = false
  private var failure: CourierError?
  /// The first bytes of a ``GzipFormat/deflate`` stream, kept until there are two to look at.
  private var prefix: [UInt8] = []
  /// Complete gzip members so far.
  private var members = 0
  /// Compressed bytes consumed since the current member started.
  private var memberIn = 0

  /// Creates a decompressor.
  ///
  /// - Parameters:
  ///   - format: The format of the input; default gzip.
  ///   - limit: The bounds on the output; default ``DecompressionLimit/standard`` (32 MiB,
  ///     100× past 1 MiB).
  public init(format: GzipFormat = .gzip, limit: DecompressionLimit = .standard) {
    self.format = format
    self.limit = limit
  }

  deinit {
    if started { inflateEnd(stream) }
    stream.deinitialize(count: 1)
    stream.deallocate()
    buffer.deallocate()
  }

  /// Whether the input so far ends exactly at the end of a complete stream (or gzip member).
  public var isComplete: Bool { failure == nil && state == .streamEnded }

  /// Decompresses `input`, passing the output to `output` in chunks of at most
  /// ``chunkSize`` bytes. The chunk is only valid during the call.
  ///
  /// - Throws: ``CourierError`` of kind ``CourierError/Kind/corruptBody`` or
  ///   ``CourierError/Kind/bodyTooLarge``, or whatever `output` throws.
  public func decompress(
    _ input: some ContiguousBytes, output: (UnsafeRawBufferPointer) throws -> Void
  ) throws {
    try withoutActuallyEscaping(output) { output in
      var sink = ChunkSink(output: output)
      try input.withUnsafeBytes { bytes in
        try ZlibSupport.forEachPiece(of: bytes) { try decompress(piece: $0, into: &sink) }
      }
    }
  }

  /// Checks that the input ended at the end of a complete stream.
  ///
  /// - Throws: ``CourierError`` of kind ``CourierError/Kind/corruptBody`` when the input was
  ///   empty or stopped part-way (truncated).
  public func finish() throws {
    if let failure { throw failure }
    if format.storage == .deflate, !started, !prefix.isEmpty {
      try fail(.corruptBody, "truncated deflate stream: only \(prefix.count) byte")
    }
    switch state {
    case .streamEnded:
      return
    case .notStarted:
      try fail(.corruptBody, "empty input: a \(format) stream has at least a header")
    case .inflating:
      try fail(
        .corruptBody,
        "truncated \(format) stream: input ended after \(totalIn) bytes without the end of the"
          + " stream (\(totalOut) bytes decompressed)")
    }
  }

  /// Decompresses all of `data`, which must be one complete stream (for gzip, one or more
  /// members), and returns the output.
  ///
  /// - Throws: ``CourierError`` of kind ``CourierError/Kind/corruptBody`` or
  ///   ``CourierError/Kind/bodyTooLarge``.
  public static func decompress(
    _ data: some ContiguousBytes, format: GzipFormat = .gzip,
    limit: DecompressionLimit = .standard
  ) throws -> Data {
    // zlib inflates straight into the result's memory, grown by doubling with `realloc`
    // (`mremap` for large blocks, so growing copies nothing), instead of into a chunk that is
    // then appended to a `Data`, which would cost two extra copies of every byte. Memory still
    // never passes the limit plus one chunk: the capacity is capped there.
    let decompressor = GzipDecompressor(format: format, limit: limit)
    return try data.withUnsafeBytes { input in
      var output = OutputBuffer(
        expected: format == .gzip ? GzipSniffer.gzipTrailerSize(input) : nil,
        inputSize: input.count, ceiling: limit.ceiling(forInput: input.count))
      do {
        try ZlibSupport.forEachPiece(of: input) { piece in
          try decompressor.decompress(piece: piece, into: &output)
        }
        try decompressor.finish()
      } catch {
        output.release()
        throw error
      }
      return output.takeData()
    }
  }

  /// The growing memory a one-shot ``decompress(_:format:limit:)`` inflates into.
  private struct OutputBuffer: InflateSink {
    private var base: UnsafeMutablePointer<UInt8>?
    private var capacity = 0
    private(set) var count = 0
    /// The most the buffer may hold: the limit's ceiling plus one chunk.
    private let maximumCapacity: Int

    /// - Parameters:
    ///   - expected: The size the input says it decompresses to (a gzip trailer's ISIZE),
    ///     used as the first capacity; a wrong hint costs only a regrowth.
    ///   - inputSize: The compressed size; eight times it is the first capacity otherwise
    ///     (JSON compresses 5–10:1, and regrowing a smaller start is slow). Pages never
    ///     written are never resident, and the end gives back what was not used.
    ///   - ceiling: The most the limit allows, or `nil` for no limit.
    init(expected: Int?, inputSize: Int, ceiling: Int?) {
      let chunk = GzipDecompressor.chunkSize
      maximumCapacity = ceiling.map { $0 > Int.max - chunk ? Int.max : $0 + chunk } ?? Int.max
      let (guess, overflow) = inputSize.multipliedReportingOverflow(by: 8)
      let first = expected.map { $0 + 1 } ?? (overflow ? chunk : guess)
      capacity = min(max(first, chunk), maximumCapacity)
    }

    /// Room for at least one more byte: where the next bytes go and how many fit; `nil` when
    /// the buffer is at its largest and full, or memory cannot be had.
    mutating func space(chunk: UnsafeMutablePointer<UInt8>) -> (UnsafeMutablePointer<UInt8>, Int)? {
      if base == nil {
        base = malloc(capacity)?.assumingMemoryBound(to: UInt8.self)
      } else if count == capacity {
        guard capacity < maximumCapacity else { return nil }
        let grown = capacity > maximumCapacity / 2 ? maximumCapacity : capacity * 2
        guard let moved = realloc(base, grown) else { return nil }
        base = moved.assumingMemoryBound(to: UInt8.self)
        capacity = grown
      }
      guard let base else { return nil }
      return (base + count, capacity - count)
    }

    /// Counts the bytes written at ``space(chunk:)``.
    mutating func commit(_ bytes: UnsafeRawBufferPointer) { count += bytes.count }

    /// The bytes as `Data`, which frees them with `free`; the buffer is empty afterwards.
    mutating func takeData() -> Data {
      guard var memory = base, count > 0 else {
        release()
        return Data()
      }
      // Give back a first guess that was much too large.
      if capacity - count > GzipDecompressor.chunkSize,
        let shrunk = realloc(memory, count)?.assumingMemoryBound(to: UInt8.self)
      {
        memory = shrunk
      }
      base = nil
      let data = Data(bytesNoCopy: memory, count: count, deallocator: .free)
      count = 0
      return data
    }

    /// Frees the memory.
    mutating func release() {
      free(base)
      base = nil
      count = 0
    }
  }

  // MARK: - Inflating

  private func decompress<Sink: InflateSink>(
    piece: UnsafeRawBufferPointer, into sink: inout Sink
  ) throws {
    if let failure { throw failure }
    guard !piece.isEmpty else { return }
    if started {
      try inflate(piece, into: &sink)
      return
    }
    var rest = piece
    var windowBits = format.windowBits
    if format.storage == .deflate {
      // Decide zlib or raw from the first two bytes, which may arrive in separate pieces.
      let taken = min(2 - prefix.count, rest.count)
      prefix.append(contentsOf: rest[..<taken])
      rest = UnsafeRawBufferPointer(rebasing: rest[taken...])
      guard prefix.count == 2 else { return }
      windowBits = GzipSniffer.isZlibHeader(prefix[0], prefix[1]) ? 15 : -15
    }
    let code = courier_inflateInit2(stream, windowBits)
    guard code == Z_OK else {
      try fail(
        .corruptBody, "zlib could not start inflating: \(ZlibSupport.message(stream, code: code))")
      return
    }
    started = true
    state = .inflating
    if !prefix.isEmpty {
      let first = prefix
      prefix = []
      try first.withUnsafeBytes { try inflate($0, into: &sink) }
    }
    if !rest.isEmpty { try inflate(rest, into: &sink) }
  }

  private func inflate<Sink: InflateSink>(
    _ input: UnsafeRawBufferPointer, into sink: inout Sink
  )
    throws
  {
    guard let base = input.baseAddress, !input.isEmpty else { return }
    stream.pointee.next_in = UnsafeMutablePointer(
      mutating: base.assumingMemoryBound(to: Bytef.self))
    stream.pointee.avail_in = UInt32(input.count)
    defer {
      stream.pointee.next_in = nil
      stream.pointee.avail_in = 0
    }
    while true {
      if state == .streamEnded {
        guard stream.pointee.avail_in > 0 else { return }
        guard format.storage == .gzip else {
          try fail(
            .corruptBody,
            "trailing garbage: \(stream.pointee.avail_in) bytes after the end of the \(format)"
              + " stream")
          return
        }
        // Another gzip member follows (RFC 1952 §2.2); its header is checked by inflate.
        inflateReset(stream)
        state = .inflating
        memberIn = 0
      }
      guard let (space, room) = sink.space(chunk: buffer) else {
        try fail(
          .bodyTooLarge,
          limit.violation(output: totalOut + 1, input: totalIn)
            ?? "no memory for more than \(totalOut) decompressed bytes")
        return
      }
      // At most 1 MiB a call (16 chunks), so the limits are checked as often as they matter:
      // a bomb still stops at the ratio limit's floor (1 MiB), not at the size limit.
      let offered = min(room, 16 * Self.chunkSize)
      stream.pointee.next_out = space
      stream.pointee.avail_out = UInt32(offered)
      let availableBefore = Int(stream.pointee.avail_in)
      let code = CCourierZlib.inflate(stream, Z_NO_FLUSH)
      let consumed = availableBefore - Int(stream.pointee.avail_in)
      let produced = offered - Int(stream.pointee.avail_out)
      totalIn += consumed
      memberIn += consumed
      switch code {
      case Z_OK, Z_BUF_ERROR:
        break
      case Z_STREAM_END:
        state = .streamEnded
        members += 1
      default:
        try fail(.corruptBody, corruptionMessage(code))
      }
      if produced > 0 {
        if let violation = limit.violation(output: totalOut + produced, input: totalIn) {
          try fail(.bodyTooLarge, violation)
        }
        totalOut += produced
        try sink.commit(UnsafeRawBufferPointer(start: space, count: produced))
      }
      let outputFull = stream.pointee.avail_out == 0
      if stream.pointee.avail_in == 0 && !outputFull { return }
      if code == Z_BUF_ERROR && consumed == 0 && produced == 0 { return }
    }
  }

  /// A stream's one-chunk buffer, each chunk handed to a closure as it fills.
  private struct ChunkSink: InflateSink {
    let output: (UnsafeRawBufferPointer) throws -> Void

    func space(chunk: UnsafeMutablePointer<UInt8>) -> (UnsafeMutablePointer<UInt8>, Int)? {
      (chunk, GzipDecompressor.chunkSize)
    }

    func commit(_ bytes: UnsafeRawBufferPointer) throws { try output(bytes) }
  }

  private func corruptionMessage(_ code: Int32) -> String {
    var message = ZlibSupport.message(stream, code: code)
    switch message {
    case "incorrect data check":
      message += " (the \(format == .gzip ? "CRC-32" : "Adler-32") does not match)"
    case "incorrect length check": message += " (the gzip ISIZE does not match the length)"
    default: break
    }
    if format == .gzip && members > 0 && message.contains("header") {
      return
        "trailing garbage after \(members) complete gzip member\(members == 1 ? "" : "s"): \(message)"
    }
    return "corrupt \(format) stream after \(totalIn) compressed bytes: \(message)"
  }

  private func fail(_ kind: CourierError.Kind, _ message: String) throws {
    let error = CourierError(kind: kind, debugMessage: message)
    failure = error
    throw error
  }
}

/// Where ``GzipDecompressor`` has zlib write: the stream's own chunk, handed on as it fills, or
/// the memory of a one-shot result.
private protocol InflateSink {
  /// Where the next bytes go and how many fit (at least one), given the decompressor's own
  /// chunk; `nil` when no more output may be had.
  mutating func space(chunk: UnsafeMutablePointer<UInt8>) -> (UnsafeMutablePointer<UInt8>, Int)?
  /// Takes the bytes just written at `space`.
  mutating func commit(_ bytes: UnsafeRawBufferPointer) throws
}
