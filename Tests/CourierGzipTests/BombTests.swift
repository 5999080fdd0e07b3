import CourierCore
import CourierTesting
import Foundation
import Testing

@testable import CourierGzip

/// A gzip bomb that would expand to 10 GiB, made on the fly: zeros go through a streaming
/// compressor and each compressed chunk straight into the decompressor, so neither the
/// compressed stream (~10 MB) nor its output is ever held whole. Peak memory is measured in a
/// child process (an exit test), where nothing else runs, from `/proc/self/status`.
@Suite(
  "Gzip bomb", .timeLimit(.minutes(5)),
  .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/status"), "reads /proc"))
struct BombTests {
  /// The size the bomb expands to.
  static let expandedSize: Int64 = 10 * 1024 * 1024 * 1024

  @Test("standard limits: the 100× ratio stops a 10 GiB bomb after ~1 MiB, peak RSS bounded")
  func standardLimits() async throws {
    let result = await withTaskExecutorPreference(OwnThreadExecutor.shared) {
      await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
        try BombTests.scenario(limit: .standard)
      }
    }
    let report = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
    print("bomb, standard limits:", report)
    #expect(report.contains("bodyTooLarge"))
  }

  @Test("size limit only (32 MiB): a 10 GiB bomb stops at 32 MiB, peak RSS < 33 MiB above start")
  func sizeLimitOnly() async throws {
    let result = await withTaskExecutorPreference(OwnThreadExecutor.shared) {
      await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
        try BombTests.scenario(limit: .size(DecompressionLimit.defaultMaximumSize))
      }
    }
    let report = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
    print("bomb, size limit only:", report)
    #expect(report.contains("bodyTooLarge"))
  }

  /// Runs the bomb into a decompressor with `limit`, keeping the output as the middleware
  /// does, and exits with failure unless it ends in `bodyTooLarge` with the peak resident set
  /// under the limit + 1 MiB above where it started.
  static func scenario(limit: DecompressionLimit) throws {
    let zeros = Data(count: 1024 * 1024)
    // A first, small bomb primes the process (malloc arenas, thread stacks, zlib state that is
    // freed and reused by the real run) so that the measurement sees the bomb alone.
    var warmUp = 0
    _ = try? bomb(zeros, upTo: 4 * 1024 * 1024, into: GzipDecompressor(limit: .size(2 << 20))) {
      warmUp += $0.count
    }
    let peakReset = ProcessProbe.resetPeakMemory()
    let before = try ProcessProbe.memory()
    let decompressor = GzipDecompressor(limit: limit)
    var kept = Data()
    var failure: CourierError?
    do {
      try bomb(zeros, upTo: expandedSize, into: decompressor) { kept.append(contentsOf: $0) }
    } catch let error as CourierError {
      failure = error
    }
    let after = try ProcessProbe.memory()
    // Without a peak reset, the peak before the bomb counts against it: a stricter test.
    let start = peakReset ? before.resident : min(before.resident, before.peak)
    let growth = after.peak - start
    let bound = (limit.maximumSize ?? 0) + 1024 * 1024
    let report =
      ("\(failure?.kind.name ?? "no error") after \(decompressor.totalOut) bytes out of"
        + " \(decompressor.totalIn) compressed; kept \(kept.count) bytes; peak RSS growth"
        + " \(growth / 1024) KiB (start \(start / 1024) KiB, peak \(after.peak / 1024) KiB,"
        + " peak reset: \(peakReset)); bound \(bound / 1024) KiB")
    // Written straight to the descriptor: exit(1) below must not lose it in a buffer.
    FileHandle.standardOutput.write(Data(report.utf8))
    guard failure?.kind == .bodyTooLarge, growth < bound, kept.count <= bound else {
      exit(1)
    }
  }

  /// Compresses `size` bytes of zeros, a block of `zeros` at a time, and feeds each
  /// compressed chunk to `decompressor` at once, handing its output to `output`.
  static func bomb(
    _ zeros: Data, upTo size: Int64, into decompressor: GzipDecompressor,
    output: (UnsafeRawBufferPointer) throws -> Void
  ) throws {
    let compressor = GzipCompressor(level: .best)
    var fed: Int64 = 0
    while fed < size {
      try compressor.compress(zeros) { chunk in
        try decompressor.decompress(UnsafeRawBufferPointer(chunk), output: output)
      }
      fed += Int64(zeros.count)
    }
    try compressor.finish { chunk in
      try decompressor.decompress(UnsafeRawBufferPointer(chunk), output: output)
    }
    try decompressor.finish()
  }

}
