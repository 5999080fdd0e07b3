import CCourierZlib
import Courier
import Foundation

// MARK: - 4. Gzip

/// Compress and decompress throughput of the Courier codec against zlib's one-shot
/// `compress2` / `uncompress` called directly on the same bytes.
///
/// `compress2` and `uncompress` read and write the zlib format, so the comparison rows run the
/// codec in ``GzipFormat/zlib`` too (same level 6, same deflate code underneath); a gzip row
/// shows the CRC-32 cost on top. `uncompress` is told the output size and writes into one
/// buffer; the codec's one-shot calls, which the middleware uses, grow their own (see
/// `GzipDecompressor.decompress`). MB/s is uncompressed megabytes (10⁶ bytes) per second;
/// each variant's median over alternating rounds. The ratio is the median of each round's
/// ratio (the codec against zlib measured one after the other), which the VM's swings in
/// speed move less than a ratio of the two medians: across runs of 7 rounds the latter
/// ranged 0.91–1.17 for code that does the same work as zlib's call.
enum GzipBenchmark {
  static func run(rounds: Int) throws {
    print(
      "### Gzip: level 6, JSON-like body, median of \(rounds) rounds (MB/s of uncompressed data)\n")
    print(
      "| body | operation | Courier codec (zlib format) | zlib one-shot | ratio | Courier codec (gzip format) |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for (name, size, repeats) in [("1 MiB", 1 << 20, 20), ("64 MiB", 64 << 20, 1)] {
      let body = jsonLike(size)
      let zlibBody = try GzipCompressor.compress(body, format: .zlib)
      let gzipBody = try GzipCompressor.compress(body, format: .gzip)
      let level = CompressionLevel.default
      var compress: [[Double]] = [[], [], []]
      var decompress: [[Double]] = [[], [], []]
      for _ in 0..<rounds {
        compress[0].append(
          try rate(size, repeats) {
            _ = try GzipCompressor.compress(body, format: .zlib, level: level)
          })
        compress[1].append(
          try rate(size, repeats) { try oneShotCompress(body, level: level.value) })
        compress[2].append(
          try rate(size, repeats) {
            _ = try GzipCompressor.compress(body, format: .gzip, level: level)
          })
        decompress[0].append(
          try rate(size, repeats) {
            _ = try GzipDecompressor.decompress(zlibBody, format: .zlib, limit: .none)
          })
        decompress[1].append(
          try rate(size, repeats) { try oneShotUncompress(zlibBody, size: size) })
        decompress[2].append(
          try rate(size, repeats) {
            _ = try GzipDecompressor.decompress(gzipBody, format: .gzip, limit: .none)
          })
      }
      for (operation, rates) in [("compress", compress), ("decompress", decompress)] {
        let medians = rates.map(Measure.median)
        let ratio = Measure.median(zip(rates[0], rates[1]).map { $0 / $1 })
        print(
          "| \(name) | \(operation) | \(Measure.format(medians[0])) | \(Measure.format(medians[1]))"
            + " | \(Measure.format(ratio, decimals: 2))"
            + " | \(Measure.format(medians[2])) |")
      }
      print(
        "| \(name) | compressed size | \(zlibBody.count) bytes | | | \(gzipBody.count) bytes |")
    }
  }

  /// Megabytes of `size`-byte input per second over `repeats` runs of `body`.
  static func rate(_ size: Int, _ repeats: Int, _ body: () throws -> Void) throws -> Double {
    let start = ContinuousClock.now
    for _ in 0..<repeats { try body() }
    let seconds = Measure.nanoseconds(ContinuousClock.now - start) / 1e9
    return Double(size * repeats) / 1e6 / seconds
  }

  /// zlib's `compress2` into a buffer of `compressBound` bytes.
  static func oneShotCompress(_ body: Data, level: Int) throws {
    var length = compressBound(uLong(body.count))
    var output = [UInt8](repeating: 0, count: Int(length))
    let code = body.withUnsafeBytes { input in
      compress2(
        &output, &length, input.baseAddress?.assumingMemoryBound(to: Bytef.self),
        uLong(input.count), Int32(level))
    }
    guard code == Z_OK else {
      throw CourierError(kind: .invalidRequest, debugMessage: "compress2 \(code)")
    }
  }

  /// zlib's `uncompress` into a buffer of the known output size.
  static func oneShotUncompress(_ compressed: Data, size: Int) throws {
    var length = uLongf(size)
    var output = [UInt8](repeating: 0, count: size)
    let code = compressed.withUnsafeBytes { input in
      uncompress(
        &output, &length, input.baseAddress?.assumingMemoryBound(to: Bytef.self),
        uLong(input.count))
    }
    guard code == Z_OK, Int(length) == size else {
      throw CourierError(kind: .corruptBody, debugMessage: "uncompress \(code)")
    }
  }

  /// JSON records with varying ids, names and numbers: compresses about 5:1 like real API
  /// responses, not 1000:1 like zeros.
  static func jsonLike(_ size: Int) -> Data {
    var data = Data("[".utf8)
    data.reserveCapacity(size + 200)
    var state: UInt64 = 42
    var index = 0
    let cities = ["Beijing", "Shanghai", "Guangzhou", "Shenzhen", "Chengdu", "Hangzhou"]
    while data.count < size {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      let value = Int(state >> 40)
      data.append(
        contentsOf:
          #"{"id":\#(index),"name":"user\#(value % 100_000)","city":"\#(cities[value % cities.count])","#
          .utf8)
      data.append(
        contentsOf: #""score":\#(value % 1000).\#(value % 97),"active":\#(value % 2 == 0)},"#.utf8)
      index += 1
    }
    return data.prefix(size)
  }
}
