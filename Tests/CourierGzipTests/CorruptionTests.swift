import CourierCore
import Foundation
import Testing

@testable import CourierGzip

@Suite("Gzip codec: corrupt input and limits", .timeLimit(.minutes(5)))
struct CorruptionTests {
  let original = repetitiveBytes(50_000)

  func gzip() throws -> Data { try GzipCompressor.compress(original) }

  /// `data` with the byte at `offset` (from the end when negative) XOR-ed with `mask`.
  func flipping(_ data: Data, at offset: Int, mask: UInt8 = 0xFF) -> Data {
    var copy = data
    let index = offset >= 0 ? copy.startIndex + offset : copy.endIndex + offset
    copy[index] ^= mask
    return copy
  }

  @Test("truncated input is corruptBody, at every cut", arguments: [1, 5, 10, 30, 100, 8])
  func truncated(cutFromEnd: Int) throws {
    let data = try gzip()
    let error = codecError { _ = try GzipDecompressor.decompress(data.dropLast(cutFromEnd)) }
    #expect(error?.kind == .corruptBody)
    #expect(error?.debugMessage.contains("truncated") == true, "\(error?.debugMessage ?? "")")
  }

  @Test("empty input is corruptBody")
  func empty() {
    #expect(codecError { _ = try GzipDecompressor.decompress(Data()) }?.kind == .corruptBody)
  }

  @Test("a bad CRC-32 is corruptBody")
  func badCRC() throws {
    let error = codecError { _ = try GzipDecompressor.decompress(flipping(try gzip(), at: -8)) }
    #expect(error?.kind == .corruptBody)
    #expect(error?.debugMessage.contains("CRC-32") == true, "\(error?.debugMessage ?? "")")
  }

  @Test("a bad length (ISIZE) is corruptBody")
  func badLength() throws {
    let error = codecError {
      _ = try GzipDecompressor.decompress(flipping(try gzip(), at: -4, mask: 0x01))
    }
    #expect(error?.kind == .corruptBody)
    #expect(error?.debugMessage.contains("ISIZE") == true, "\(error?.debugMessage ?? "")")
  }

  @Test("a bad Adler-32 in zlib format is corruptBody")
  func badAdler() throws {
    let zlib = try GzipCompressor.compress(original, format: .zlib)
    let error = codecError {
      _ = try GzipDecompressor.decompress(flipping(zlib, at: -1), format: .zlib)
    }
    #expect(error?.kind == .corruptBody)
    #expect(error?.debugMessage.contains("Adler-32") == true, "\(error?.debugMessage ?? "")")
  }

  @Test(
    "trailing garbage is corruptBody",
    arguments: [Data("garbage".utf8), Data([0]), Data([0x1F]), Data(repeating: 0, count: 16)])
  func trailingGarbage(garbage: Data) throws {
    let error = codecError { _ = try GzipDecompressor.decompress(try gzip() + garbage) }
    #expect(error?.kind == .corruptBody, "\(String(describing: error?.debugMessage))")
  }

  @Test(
    "trailing garbage after a zlib or raw stream is corruptBody",
    arguments: [GzipFormat.zlib, .rawDeflate])
  func trailingGarbageOtherFormats(format: GzipFormat) throws {
    let data = try GzipCompressor.compress(original, format: format) + Data("xyz".utf8)
    let error = codecError { _ = try GzipDecompressor.decompress(data, format: format) }
    #expect(error?.kind == .corruptBody)
    #expect(error?.debugMessage.contains("trailing garbage") == true)
  }

  @Test("a corrupt deflate stream is corruptBody")
  func corruptStream() throws {
    var data = try gzip()
    // Overwrite the middle of the deflate data with bytes that are not a valid block.
    for offset in 20..<60 { data[offset] = 0xFF }
    let error = codecError { _ = try GzipDecompressor.decompress(data) }
    #expect(error?.kind == .corruptBody)
  }

  @Test("not gzip at all is corruptBody, and the error repeats on later calls")
  func notGzip() throws {
    let decompressor = GzipDecompressor()
    let first = codecError { try decompressor.decompress(Data("{\"a\":1}".utf8)) { _ in } }
    #expect(first?.kind == .corruptBody)
    #expect(codecError { try decompressor.finish() }?.debugMessage == first?.debugMessage)
  }

  @Test("the size limit stops at the limit: bodyTooLarge, and nothing past it is handed out")
  func sizeLimit() throws {
    let data = try GzipCompressor.compress(randomBytes(300_000))
    let decompressor = GzipDecompressor(limit: .size(200_000))
    var handedOut = 0
    let error = codecError { try decompressor.decompress(data) { handedOut += $0.count } }
    #expect(error?.kind == .bodyTooLarge)
    #expect(handedOut <= 200_000)
    #expect(handedOut > 200_000 - GzipDecompressor.chunkSize)
  }

  @Test("a body exactly at the size limit passes")
  func exactlyAtLimit() throws {
    let body = randomBytes(100_000)
    let data = try GzipCompressor.compress(body)
    #expect(try GzipDecompressor.decompress(data, limit: .size(100_000)) == body)
  }

  @Test("the ratio limit ignores small bodies and stops large ones")
  func ratioLimit() throws {
    // 512 KiB of zeros compresses ~1000:1 but stays under the 1 MiB floor.
    let small = try GzipCompressor.compress(Data(count: 512 * 1024))
    #expect(try GzipDecompressor.decompress(small).count == 512 * 1024)
    let large = try GzipCompressor.compress(Data(count: 4 * 1024 * 1024))
    let error = codecError { _ = try GzipDecompressor.decompress(large) }
    #expect(error?.kind == .bodyTooLarge)
    #expect(error?.debugMessage.contains("100×") == true)
    // With no limit it decodes.
    #expect(try GzipDecompressor.decompress(large, limit: .none).count == 4 * 1024 * 1024)
  }
}
