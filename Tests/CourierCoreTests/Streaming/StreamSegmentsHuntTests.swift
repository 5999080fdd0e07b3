import Foundation
import Testing

@testable import CourierCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

@Suite("A streamed body's segments, what they allocate", .timeLimit(.minutes(5)))
struct StreamSegmentsHuntTests {
  /// The bytes malloc gave the allocation a chunk's bytes start, when it can tell.
  private static func allocated(_ chunk: Data) -> Int? {
    #if canImport(Glibc)
      typealias Usable = @convention(c) (UnsafeRawPointer?) -> Int
      guard let symbol = dlsym(nil, "malloc_usable_size") else { return nil }
      let usable = unsafeBitCast(symbol, to: Usable.self)
      return chunk.withUnsafeBytes { usable($0.baseAddress) }
    #else
      return nil
    #endif
  }

  @Test("a small chunk written to an empty buffer reaches the reader without 256 KiB reserved")
  func smallChunkNotInflated() async throws {
    let (stream, writer) = ResponseBodyStream.makeStream()
    let chunk = Data(repeating: 7, count: 100)
    writer.write(chunk)
    writer.finish()
    var iterator = stream.makeAsyncIterator()
    let read = try #require(try await iterator.next())
    #expect(read == chunk)
    let size = try #require(Self.allocated(read))
    #expect(size < 4096, "a 100-byte chunk holds \(size) bytes")
  }

  @Test("a reader that keeps up and keeps its chunks holds about what was written")
  func keptChunksNotInflated() async throws {
    let (stream, writer) = ResponseBodyStream.makeStream()
    let reader = Task {
      var kept: [Data] = []
      for try await chunk in stream { kept.append(chunk) }
      return kept
    }
    for index in 0..<200 {
      // Each write meets a waiting reader, as a server's events usually do.
      while !writer.core.readerIsWaiting { await Task.yield() }
      writer.write(Data(repeating: UInt8(truncatingIfNeeded: index), count: 100))
    }
    writer.finish()
    let kept = try await reader.value
    #expect(kept.count == 200)
    let held = kept.reduce(0) { $0 + (Self.allocated($1) ?? 0) }
    #expect(held < 1 << 20, "200 chunks of 100 bytes hold \(held) bytes")
  }

  @Test("a whole body wrapped in a stream is handed over as it is, not copied")
  func wholeBodyNotCopied() async throws {
    let body = Data(repeating: 3, count: 200 * 1024)
    var iterator = ResponseBodyStream(body).makeAsyncIterator()
    let read = try #require(try await iterator.next())
    let same = read.withUnsafeBytes { a in
      body.withUnsafeBytes { a.baseAddress == $0.baseAddress }
    }
    #expect(same, "the body was copied")
    #expect(try await iterator.next() == nil)
  }

  @Test("small pieces appended as the curl transport appends them are kept at their size")
  func appendedPiecesNotInflated() async throws {
    let (stream, writer) = ResponseBodyStream.makeStream()
    var kept: [Data] = []
    var iterator = stream.makeAsyncIterator()
    for index in 0..<50 {
      // One piece a turn, each reserving a segment's room for more that never comes.
      let piece = Data(repeating: UInt8(index), count: 100)
      _ = piece.withUnsafeBytes { writer.append($0) }
      writer.flush()
      kept.append(try #require(try await iterator.next()))
    }
    // A full segment stays as it is: its reservation is used.
    let large = Data(repeating: 9, count: 256 * 1024)
    _ = large.withUnsafeBytes { writer.append($0) }
    writer.finish()
    let whole = try #require(try await iterator.next())
    #expect(whole == large)
    #expect(
      kept.enumerated().allSatisfy { $0.element == Data(repeating: UInt8($0.offset), count: 100) })
    let held = kept.reduce(0) { $0 + (Self.allocated($1) ?? 0) }
    #expect(held < 1 << 20, "50 pieces of 100 bytes hold \(held) bytes")
  }
}
