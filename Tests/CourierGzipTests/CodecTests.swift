import CourierCore
import CourierTesting
import Foundation
import Testing

@testable import CourierGzip

@Suite("Gzip codec: round trips, formats, streaming", .timeLimit(.minutes(5)))
struct CodecTests {
  static let sizes = [0, 1, 1023, 1024, 1024 * 1024]

  @Test("random data round-trips through gzip", arguments: sizes)
  func randomRoundTrip(size: Int) throws {
    let original = randomBytes(size, seed: UInt64(size) &+ 1)
    let compressed = try GzipCompressor.compress(original)
    #expect(GzipSniffer.isGzip(compressed))
    #expect(try GzipDecompressor.decompress(compressed) == original)
  }

  @Test("repetitive data round-trips through gzip and shrinks", arguments: sizes)
  func repetitiveRoundTrip(size: Int) throws {
    let original = repetitiveBytes(size)
    let compressed = try GzipCompressor.compress(original)
    #expect(try GzipDecompressor.decompress(compressed) == original)
    if size >= 1024 { #expect(compressed.count < original.count / 4) }
  }

  @Test("64 MiB round-trips, streamed in and out", arguments: ["random", "repetitive"])
  func largeRoundTrip(kind: String) async throws {
    // Seconds of computing with no suspension point: on the compute thread, so the global
    // executor's few threads stay free for the tests that wait.
    try await withTaskExecutorPreference(ComputeExecutor.shared) {
      let size = 64 * 1024 * 1024
      let original = kind == "random" ? randomBytes(size) : repetitiveBytes(size)
      // Level 1 keeps the random case to about a second; the codec path is the same.
      let compressed = try GzipCompressor.compress(original, level: .fastest)
      // 64 MiB is past the standard 32 MiB limit, so this needs a larger one.
      let limit = DecompressionLimit(maximumSize: size, maximumRatio: nil)
      let decompressor = GzipDecompressor(limit: limit)
      var output = Data()
      var largestChunk = 0
      try decompressor.decompress(compressed) { chunk in
        largestChunk = max(largestChunk, chunk.count)
        output.append(contentsOf: chunk)
      }
      try decompressor.finish()
      #expect(output == original)
      #expect(largestChunk == GzipDecompressor.chunkSize)
      #expect(decompressor.totalOut == size)
      #expect(decompressor.totalIn == compressed.count)
    }
  }

  @Test(
    "every format and level round-trips",
    arguments: [GzipFormat.gzip, .zlib, .rawDeflate, .deflate],
    [CompressionLevel.none, .fastest, .default, .best])
  func formatsAndLevels(format: GzipFormat, level: CompressionLevel) throws {
    let original = repetitiveBytes(100_000)
    let compressed = try GzipCompressor.compress(original, format: format, level: level)
    #expect(try GzipDecompressor.decompress(compressed, format: format) == original)
    if level != .none { #expect(compressed.count < original.count / 4) }
  }

  @Test(
    "one-shot decoding grows its output past the first guess, in every format, and a wrong size hint only costs a regrowth",
    arguments: [GzipFormat.gzip, .zlib, .rawDeflate])
  func oneShotGrowth(format: GzipFormat) throws {
    // Zeros shrink about 1000:1, far past the first capacity (8× the input).
    let zeros = Data(count: 8 << 20)
    let compressed = try GzipCompressor.compress(zeros, format: format)
    #expect(try GzipDecompressor.decompress(compressed, format: format, limit: .none) == zeros)
    // Two gzip members: the trailer's size is the last member's alone.
    if format == .gzip {
      let small = try GzipCompressor.compress(Data("tail".utf8))
      let joined = compressed + small
      #expect(
        try GzipDecompressor.decompress(joined, limit: .none) == zeros + Data("tail".utf8))
    }
  }

  @Test("a one-shot bomb stops at the ratio limit's floor, not at the size limit")
  func oneShotBombStopsEarly() throws {
    let bomb = try GzipCompressor.compress(Data(count: 64 << 20))
    let error = try #require(
      throws: CourierError.self,
      performing: { try GzipDecompressor.decompress(bomb, limit: .standard) })
    #expect(error.kind == .bodyTooLarge)
    #expect(error.debugMessage.contains("expanded more than 100×"))
    // Stopped within the 1 MiB checks of the floor, far below the 32 MiB size limit.
    let produced = error.debugMessage.split(separator: "(").last?.split(separator: " ").first
    let bytes = try #require(produced.flatMap { Int($0) })
    #expect(bytes <= 3 << 20)
  }

  @Test("zlib format is what zlib's own compress2 writes: the header is 78 xx")
  func zlibHeader() throws {
    let compressed = try GzipCompressor.compress(Data("hello".utf8), format: .zlib)
    #expect(compressed.first == 0x78)
    #expect(GzipSniffer.isZlib(compressed))
  }

  @Test("deflate decoding takes zlib-wrapped and raw streams")
  func deflateAcceptsBoth() throws {
    let original = repetitiveBytes(5000)
    let wrapped = try GzipCompressor.compress(original, format: .zlib)
    let raw = try GzipCompressor.compress(original, format: .rawDeflate)
    #expect(try GzipDecompressor.decompress(wrapped, format: .deflate) == original)
    #expect(try GzipDecompressor.decompress(raw, format: .deflate) == original)
    // The first two bytes in separate pieces still select the right format.
    #expect(try decompressInPieces(wrapped, piece: 1, format: .deflate) == original)
    #expect(try decompressInPieces(raw, piece: 1, format: .deflate) == original)
  }

  @Test("input in pieces of 1, 7 and 4096 bytes decodes the same", arguments: [1, 7, 4096])
  func pieces(piece: Int) throws {
    let original = repetitiveBytes(200_000) + randomBytes(3000)
    let compressed = try GzipCompressor.compress(original)
    #expect(try decompressInPieces(compressed, piece: piece) == original)
  }

  @Test("the streaming compressor hands out chunks of at most 64 KiB")
  func compressorChunks() throws {
    let original = randomBytes(300_000)
    let compressor = GzipCompressor(level: .fastest)
    var output = Data()
    var largest = 0
    for start in stride(from: 0, to: original.count, by: 10_000) {
      try compressor.compress(original[start..<min(start + 10_000, original.count)]) {
        largest = max(largest, $0.count)
        output.append(contentsOf: $0)
      }
    }
    try compressor.finish { output.append(contentsOf: $0) }
    #expect(largest <= GzipCompressor.chunkSize)
    #expect(compressor.totalIn == original.count)
    #expect(compressor.totalOut == output.count)
    #expect(try GzipDecompressor.decompress(output) == original)
    #expect(codecError { try compressor.compress(Data([1])) { _ in } }?.kind == .invalidRequest)
  }

  @Test("multi-member gzip decodes to the members joined, also when split between them")
  func multiMember() throws {
    let parts = [Data("first member\n".utf8), repetitiveBytes(70_000), Data(), randomBytes(999)]
    var joined = Data()
    for part in parts { joined += try GzipCompressor.compress(part) }
    let expected = parts.reduce(Data(), +)
    #expect(try GzipDecompressor.decompress(joined) == expected)
    #expect(try decompressInPieces(joined, piece: 5) == expected)
    let decompressor = GzipDecompressor()
    try decompressor.decompress(joined) { _ in }
    #expect(decompressor.isComplete)
  }

  @Test("limits describe themselves with their numbers")
  func limitDescriptions() {
    #expect(DecompressionLimit.standard.description == "limit 32 MiB, ratio 100×")
    #expect(DecompressionLimit.none.description == "no limit")
    #expect(DecompressionLimit.size(1500).description == "limit 1500 bytes")
    #expect(DecompressionLimit.ratio(25).description == "ratio 25×")
    #expect(DecompressionLimit.standard.maximumSize == 33_554_432)
    #expect(DecompressionLimit.standard.ratioFloor == 1_048_576)
    #expect(CompressionLevel(42).value == 9)
  }
}
