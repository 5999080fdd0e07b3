import CourierCore
import Foundation
import Testing

@testable import CourierGzip

@Suite(
  "Gzip codec and the system gzip command", .timeLimit(.minutes(5)),
  .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/gzip"), "needs /usr/bin/gzip")
)
struct InteropTests {
  static let inputs: [(String, Data)] = [
    ("empty", Data()),
    ("random 1 MiB", randomBytes(1024 * 1024, seed: 7)),
    ("repetitive 1 MiB", repetitiveBytes(1024 * 1024)),
  ]

  @Test("gzip's output decodes with ours", arguments: 0..<3, ["-1", "-6", "-9"])
  func theirsDecodesWithOurs(input: Int, level: String) throws {
    let original = Self.inputs[input].1
    let (compressed, status) = try runGzip(["-c", level], input: original)
    #expect(status == 0)
    #expect(GzipSniffer.isGzip(compressed))
    #expect(try GzipDecompressor.decompress(compressed) == original)
  }

  @Test("our output decodes with gzip -d", arguments: 0..<3)
  func oursDecodesWithTheirs(input: Int) throws {
    let original = Self.inputs[input].1
    let compressed = try GzipCompressor.compress(original)
    let (decompressed, status) = try runGzip(["-d", "-c"], input: compressed)
    #expect(status == 0)
    #expect(decompressed == original)
  }

  @Test("our multi-member output decodes with gzip -d; theirs (two files joined) with ours")
  func multiMemberBothWays() throws {
    let first = Data("one\n".utf8)
    let second = repetitiveBytes(10_000)
    let ours = try GzipCompressor.compress(first) + GzipCompressor.compress(second)
    let (decompressed, status) = try runGzip(["-d", "-c"], input: ours)
    #expect(status == 0)
    #expect(decompressed == first + second)
    let theirs = try runGzip(["-c"], input: first).output + runGzip(["-c"], input: second).output
    #expect(try GzipDecompressor.decompress(theirs) == first + second)
  }

  @Test("gzip -d rejects what we reject: a bad CRC")
  func badCRCBothWays() throws {
    var compressed = try GzipCompressor.compress(repetitiveBytes(10_000))
    compressed[compressed.endIndex - 8] ^= 0xFF
    #expect(try runGzip(["-d", "-c"], input: compressed).status != 0)
    #expect(codecError { _ = try GzipDecompressor.decompress(compressed) }?.kind == .corruptBody)
  }
}
