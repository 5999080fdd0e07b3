import Foundation
import Testing

@testable import CourierTesting

#if canImport(Glibc)
  import Glibc
#endif

private let hasProcStatus = FileManager.default.fileExists(atPath: "/proc/self/status")

/// MockServer's request parser on a socket pair: what Fuzz/FuzzRequestReader found.
@Suite("MockServer request reader", .timeLimit(.minutes(5)))
struct RequestReaderTests {
  /// Found by Fuzz/FuzzRequestReader: a 65-byte request declaring a chunk of `FFFFFFF` bytes
  /// made the reader allocate 320 MiB before a byte of it arrived. Measured in a child process
  /// (an exit test) through VmPeak, the peak of the address space, which a fresh allocation
  /// raises whether or not its pages are touched.
  @Test(
    "a declared Content-Length that never arrives is not allocated ahead (fuzzing regression)",
    .enabled(if: hasProcStatus, "reads /proc/self/status"))
  func declaredLengthIsNotAllocatedAhead() async {
    _ = await withTaskExecutorPreference(OwnThreadExecutor.shared) {
      await #expect(processExitsWith: .success) {
        RequestReaderTests.allocationScenario(framing: "Content-Length: 200000000\r\n")
      }
    }
  }

  @Test(
    "a declared chunk that never arrives is not allocated ahead (fuzzing regression)",
    .enabled(if: hasProcStatus, "reads /proc/self/status"))
  func declaredChunkIsNotAllocatedAhead() async {
    _ = await withTaskExecutorPreference(OwnThreadExecutor.shared) {
      await #expect(processExitsWith: .success) {
        RequestReaderTests.allocationScenario(framing: "Transfer-Encoding: chunked\r\n\r\nFFFFFFF")
      }
    }
  }

  /// Reads a request whose head declares a body of about 200 MiB of which 3 bytes arrive, and
  /// exits with 0 when that failed as `connectionClosed` having raised the peak address space
  /// by less than 64 MiB, 1 when it raised it more, 2 when it ended otherwise.
  static func allocationScenario(framing: String) -> Never {
    #if canImport(Glibc)
      // One malloc arena: a thread that first allocates between the two readings (a pool
      // worker, the exit test's own) would otherwise reserve a 64 MiB arena of address space,
      // and VmPeak would read that as the reader's allocation (seen once under full load).
      // glibc's mallopt(M_ARENA_MAX, 1); <malloc.h> is not part of the Glibc module.
      typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
      if let mallopt = dlsym(nil, "mallopt") {
        _ = unsafeBitCast(mallopt, to: Mallopt.self)(-8, 1)
      }
    #endif
    // Warm up with a small declared size, so the runtime's own first allocations are done.
    _ = try? readBody(of: "POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\nabc")
    guard let before = try? virtualPeak() else { exit(3) }
    let outcome = Result {
      try readBody(of: "POST /upload HTTP/1.1\r\nHost: x\r\n\(framing)\r\nabc")
    }
    guard let after = try? virtualPeak() else { exit(3) }
    guard case .failure(let error) = outcome, error as? RequestReadError == .connectionClosed
    else { exit(2) }
    exit(after - before < 64 * 1024 * 1024 ? 0 : 1)
  }

  @Test("a body larger than one growth step arrives whole, by Content-Length and chunked")
  func bodiesAcrossGrowthSteps() throws {
    let body = (0..<(RequestReader.bodyGrowthStep * 5 / 2)).map { UInt8(truncatingIfNeeded: $0) }
    let length = "POST / HTTP/1.1\r\nContent-Length: \(body.count)\r\n\r\n"
    #expect(try Self.readBody(of: Array(length.utf8) + body) == Data(body))
    let size = String(body.count, radix: 16)
    let chunked = Array("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n\(size)\r\n".utf8)
    #expect(try Self.readBody(of: chunked + body + Array("\r\n0\r\n\r\n".utf8)) == Data(body))
  }

  // MARK: - Helpers

  static func readBody(of request: String) throws -> Data {
    try readBody(of: Array(request.utf8))
  }

  /// Sends `bytes` from a writer thread into one end of a socket pair, closes it, and reads
  /// one request head and body from the other end.
  static func readBody(of bytes: [UInt8]) throws -> Data {
    var fds: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else {
      throw POSIXError(.EMFILE)
    }
    let (readEnd, writeEnd) = (fds[1], fds[0])
    defer { close(readEnd) }
    let writer = Thread {
      bytes.withUnsafeBytes { raw in
        guard let base = raw.baseAddress else { return }
        var sent = 0
        while sent < raw.count {
          let count = send(writeEnd, base + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
          if count <= 0 { break }
          sent += count
        }
      }
      close(writeEnd)
    }
    writer.start()
    var reader = RequestReader(fd: readEnd)
    guard let head = try reader.readHead() else { throw RequestReadError.connectionClosed }
    return try reader.readBody(for: head)
  }

  /// VmPeak from /proc/self/status, in bytes.
  static func virtualPeak() throws -> Int {
    let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmPeak:") } ?? ""
    return (line.split(separator: " ").compactMap { Int($0) }.first ?? 0) * 1024
  }
}
