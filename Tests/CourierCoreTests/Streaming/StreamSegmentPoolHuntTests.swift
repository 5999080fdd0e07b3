import Foundation
import Testing

@testable import CourierCore

@Suite("A streamed body's pooled segment buffers, hunted", .timeLimit(.minutes(5)))
struct StreamSegmentPoolHuntTests {
  /// The byte at `offset` of a body: differs between nearby offsets and between pages.
  private static func pattern(_ offset: Int) -> UInt8 {
    UInt8(truncatingIfNeeded: offset ^ (offset >> 8) ^ (offset >> 16))
  }

  /// `count` bytes of the pattern from `offset`.
  private static func body(from offset: Int, count: Int) -> Data {
    Data((0..<count).map { pattern(offset + $0) })
  }

  private static func bytes(_ count: Int, _ value: UInt8) -> Data {
    Data(repeating: value, count: count)
  }

  /// Whether `chunk` holds the pattern from `offset`.
  private static func matches(_ chunk: Data, at offset: Int) -> Bool {
    chunk.withUnsafeBytes { raw in
      raw.indices.allSatisfy { raw[$0] == pattern(offset + $0) }
    }
  }

  /// Reads a stream to its end.
  private static func readAll(_ stream: ResponseBodyStream) async throws -> [Data] {
    var chunks: [Data] = []
    for try await chunk in stream { chunks.append(chunk) }
    return chunks
  }

  // MARK: - Order and content

  @Test("a lone chunk gathers with the bytes after it, in order, whatever their sizes")
  func loneChunkOrder() {
    var segments = StreamSegments(segmentSize: 16, spares: 2)
    let lone = Data("abc".utf8)
    segments.append(lone)
    Data("defg".utf8).withUnsafeBytes { segments.append($0) }
    // Larger than what is left of the segment, then larger than a segment.
    Self.bytes(12, 1).withUnsafeBytes { segments.append($0) }
    Self.bytes(40, 2).withUnsafeBytes { segments.append($0) }
    #expect(segments.count == 59)
    #expect(segments.takeFirst() == Data("abcdefg".utf8))
    #expect(segments.takeFirst() == Self.bytes(12, 1))
    #expect(segments.takeFirst() == Self.bytes(40, 2))
    #expect(segments.isEmpty)
    #expect(lone == Data("abc".utf8))

    // A lone chunk, then bytes larger than a segment: the chunk first.
    segments.append(Data("xy".utf8))
    Self.bytes(50, 3).withUnsafeBytes { segments.append($0) }
    #expect(segments.takeFirst() == Data("xy".utf8))
    #expect(segments.takeFirst() == Self.bytes(50, 3))
    #expect(segments.pool.counts.out == 0)
  }

  @Test("a lone chunk followed by a chunk as large as a segment, then bytes: all in order")
  func loneChunkThenLargeChunk() {
    var segments = StreamSegments(segmentSize: 16, spares: 2)
    segments.append(Data("ab".utf8))
    let large = Self.bytes(16, 4)
    segments.append(large)
    Data("cd".utf8).withUnsafeBytes { segments.append($0) }
    segments.append(Data("ef".utf8))
    var out = Data()
    while !segments.isEmpty { out.append(segments.takeFirst()) }
    #expect(out == Data("ab".utf8) + large + Data("cdef".utf8))
    #expect(segments.pool.counts.out == 0)
  }

  @Test("a chunk larger than a segment, between buffered bytes, keeps its place uncopied")
  func largeChunkBetweenBytes() {
    var segments = StreamSegments(segmentSize: 64, spares: 2)
    Self.bytes(10, 1).withUnsafeBytes { segments.append($0) }
    let large = Self.body(from: 0, count: 200)
    segments.append(large)
    Self.bytes(5, 2).withUnsafeBytes { segments.append($0) }
    segments.append(Self.bytes(3, 3))
    #expect(segments.takeFirst() == Self.bytes(10, 1))
    let taken = segments.takeFirst()
    #expect(taken == large)
    let same = taken.withUnsafeBytes { a in
      large.withUnsafeBytes { a.baseAddress == $0.baseAddress }
    }
    #expect(same)
    #expect(segments.takeFirst() == Self.bytes(5, 2) + Self.bytes(3, 3))
    #expect(segments.pool.counts.out == 0)
  }

  @Test("empty chunks and empty bytes add nothing and take no buffer")
  func emptyPieces() {
    var segments = StreamSegments(segmentSize: 16, spares: 2)
    segments.append(Data())
    UnsafeRawBufferPointer(start: nil, count: 0).withUnsafeBytes { segments.append($0) }
    Data().withUnsafeBytes { segments.append($0) }
    #expect(segments.isEmpty)
    #expect(segments.pool.counts.out == 0)
    #expect(segments.takeFirst().isEmpty)
    // Empty pieces after a lone chunk leave it alone.
    segments.append(Data("a".utf8))
    Data().withUnsafeBytes { segments.append($0) }
    segments.append(Data())
    #expect(segments.pool.counts.out == 0)
    Data("b".utf8).withUnsafeBytes { segments.append($0) }
    #expect(segments.takeFirst() == Data("ab".utf8))
    #expect(segments.isEmpty)
  }

  @Test("a one-byte buffer: every piece reaches the reader in order, every buffer back")
  func oneByteBuffer() async throws {
    let (stream, writer) = ResponseBodyStream.makeStream(bufferSize: 1)
    let pool = writer.core.segmentPool
    // Never smaller than a transport's read of such a stream.
    #expect(pool.size == ResponseBodyStream.readSize(bufferSize: 1))
    var offset = 0
    for (index, size) in [1, 2, 3, 1, 5, 0, 1, 2, 2, 7].enumerated() {
      let piece = Self.body(from: offset, count: size)
      if index.isMultiple(of: 3) {
        writer.write(piece)
      } else {
        _ = piece.withUnsafeBytes { writer.append($0) }
      }
      offset += size
    }
    writer.flush()
    writer.finish()
    let chunks = try await Self.readAll(stream)
    #expect(chunks.reduce(Data(), +) == Self.body(from: 0, count: offset))
    #expect(pool.counts.out == 0)
    #expect(pool.counts.kept <= 2)
  }

  @Test("an Int.max buffer: segments of 256 KiB, pieces in order, every buffer back")
  func hugeBufferSize() async throws {
    let (stream, writer) = ResponseBodyStream.makeStream(bufferSize: .max)
    let pool = writer.core.segmentPool
    #expect(pool.size == 256 * 1024)
    var offset = 0
    for size in [100, 300 * 1024, 7, 256 * 1024, 1, 600 * 1024, 13] {
      let piece = Self.body(from: offset, count: size)
      if size.isMultiple(of: 2) {
        writer.write(piece)
      } else {
        let (room, _) = piece.withUnsafeBytes { writer.append($0) }
        #expect(room)
      }
      offset += size
    }
    writer.flush()
    writer.finish()
    let whole = try await Self.readAll(stream).reduce(Data(), +)
    #expect(whole == Self.body(from: 0, count: offset))
    #expect(pool.counts.out == 0)
  }

  // MARK: - What the reader does with its chunks

  @Test("a reader that mutates and grows a chunk: its bytes kept, its buffer given back once")
  func readerMutatesChunk() {
    var segments = StreamSegments(segmentSize: 1024, spares: 2)
    Self.bytes(1000, 1).withUnsafeBytes { segments.append($0) }
    var chunk = segments.takeFirst()
    chunk[0] = 9
    #expect(segments.pool.counts == (out: 1, kept: 0), "an in-place change gave the buffer")
    // Growing it moves it to storage of its own; the pool's buffer goes back, once.
    chunk.append(contentsOf: [7, 7, 7])
    #expect(segments.pool.counts == (out: 0, kept: 1))
    Self.bytes(1000, 2).withUnsafeBytes { segments.append($0) }
    let next = segments.takeFirst()
    #expect(next == Self.bytes(1000, 2))
    #expect(chunk == Data([9]) + Self.bytes(999, 1) + Data([7, 7, 7]), "written over")
    chunk = Data()
    #expect(segments.pool.counts == (out: 1, kept: 0))
    _ = consume next
    #expect(segments.pool.counts == (out: 0, kept: 1))
  }

  @Test("a chunk shrunk, then a copy of it changed: neither written over, buffers back once")
  func readerShrinksAndCopies() {
    var segments = StreamSegments(segmentSize: 1024, spares: 4)
    Self.bytes(1000, 1).withUnsafeBytes { segments.append($0) }
    var chunk: Data? = segments.takeFirst()
    chunk?.removeFirst(10)
    chunk?.removeLast(10)
    var copy = chunk
    if let start = copy?.startIndex { copy?[start] = 5 }
    #expect(chunk == Self.bytes(980, 1))
    #expect(copy == Data([5]) + Self.bytes(979, 1))
    #expect(segments.pool.counts.out == 1)
    Self.bytes(1000, 2).withUnsafeBytes { segments.append($0) }
    let next = segments.takeFirst()
    #expect(chunk == Self.bytes(980, 1), "a shrunk chunk was written over")
    chunk = nil
    copy = nil
    _ = consume next
    #expect(segments.pool.counts == (out: 0, kept: 2))
  }

  @Test("a slice the reader keeps holds the buffer: later segments do not write over it")
  func keptSlice() {
    var segments = StreamSegments(segmentSize: 1024, spares: 2)
    Self.body(from: 0, count: 1000).withUnsafeBytes { segments.append($0) }
    var chunk: Data? = segments.takeFirst()
    let slice = chunk![100..<200]
    chunk = nil
    #expect(segments.pool.counts == (out: 1, kept: 0))
    for value: UInt8 in 1...4 {
      Self.bytes(1000, value).withUnsafeBytes { segments.append($0) }
      #expect(segments.takeFirst() == Self.bytes(1000, value))
    }
    #expect(Data(slice) == Self.body(from: 100, count: 100), "the slice was written over")
    _ = consume slice
    #expect(segments.pool.counts == (out: 0, kept: 2))
  }

  @Test("a chunk written into another stream, or back into its own, is given back once")
  func chunkPassedOn() async throws {
    let (source, sourceWriter) = ResponseBodyStream.makeStream(bufferSize: 4096)
    let (sink, sinkWriter) = ResponseBodyStream.makeStream(bufferSize: 4096)
    let pool = sourceWriter.core.segmentPool
    _ = Self.body(from: 0, count: 9000).withUnsafeBytes { sourceWriter.append($0) }
    _ = Data("<".utf8).withUnsafeBytes { sinkWriter.append($0) }
    var iterator = source.makeAsyncIterator()
    var chunk = try #require(try await iterator.next())
    #expect(pool.counts.out == 1)
    // Copied into the sink's segment; kept as it is (a lone chunk) by its own stream.
    sinkWriter.write(chunk)
    sourceWriter.write(chunk)
    sinkWriter.finish()
    sourceWriter.finish()
    chunk = Data()
    #expect(pool.counts.out == 1, "the chunk buffered in its own stream lost its buffer")
    let again = try #require(try await iterator.next())
    #expect(again == Self.body(from: 0, count: 9000))
    #expect(try await iterator.next() == nil)
    _ = consume again
    #expect(pool.counts == (out: 0, kept: 1))
    let out = try await Self.readAll(sink).reduce(Data(), +)
    #expect(out == Data("<".utf8) + Self.body(from: 0, count: 9000))
  }

  // MARK: - Every buffer back, once

  @Test("removeAll after takeFirst gives back only what was left; the taken chunk its own")
  func removeAllAfterTake() {
    var segments = StreamSegments(segmentSize: 1024, spares: 8)
    for value: UInt8 in 1...3 {
      Self.bytes(1000, value).withUnsafeBytes { segments.append($0) }
    }
    var held: Data? = segments.takeFirst()
    segments.removeAll()
    #expect(segments.pool.counts == (out: 1, kept: 2))
    segments.removeAll()
    #expect(segments.pool.counts == (out: 1, kept: 2))
    #expect(held == Self.bytes(1000, 1))
    held = nil
    #expect(segments.pool.counts == (out: 0, kept: 3))
  }

  /// A stream with four pieces of 3/8 of a segment appended (two segments of 3/4 each),
  /// ended with `end`, its first segment read when `taking`, then dropped with the rest
  /// buffered: its pool and the chunk read.
  private static func droppedStream(
    taking: Bool, end: (ResponseBodyStream.Writer) -> Void
  ) async throws -> (pool: StreamSegmentPool, held: Data?) {
    let (stream, writer) = ResponseBodyStream.makeStream(bufferSize: 4096)
    let piece = writer.core.segmentPool.size * 3 / 8
    for value: UInt8 in 1...4 {
      _ = Self.bytes(piece, value).withUnsafeBytes { writer.append($0) }
    }
    end(writer)
    var held: Data?
    if taking {
      var iterator = stream.makeAsyncIterator()
      held = try await iterator.next()
    }
    return (writer.core.segmentPool, held)
  }

  @Test(
    "a stream dropped with segments buffered gives every buffer back",
    arguments: [0, 1, 2, 3])
  func droppedStreamsGiveBack(path: Int) async throws {
    // 0: never read; 1: finished, one read; 2: failed, one read; 3: one read, never ended.
    let error = CourierError(kind: .cancelled, debugMessage: "test", stage: "test")
    var (pool, held) = try await Self.droppedStream(taking: path != 0) { writer in
      switch path {
      case 1: writer.finish()
      case 2: writer.fail(error)
      default: break
      }
    }
    #expect(held?.count ?? 0 == (path == 0 ? 0 : pool.size * 3 / 8 * 2))
    #expect(pool.counts.out == (held == nil ? 0 : 1), "path \(path)")
    held = nil
    #expect(pool.counts.out == 0, "path \(path)")
    #expect(pool.counts.kept <= 3)
  }

  @Test("a stream terminated, then deinitialized, gives its buffers back once")
  func terminateThenDeinit() async throws {
    var pool: StreamSegmentPool?
    do {
      let (stream, writer) = ResponseBodyStream.makeStream(bufferSize: 2048)
      pool = writer.core.segmentPool
      for value: UInt8 in 1...5 {
        _ = Self.bytes(3000, value).withUnsafeBytes { writer.append($0) }
      }
      writer.core.terminate()
      #expect(pool?.counts.out == 0)
      writer.core.terminate()
      _ = stream
    }
    #expect(pool?.counts.out == 0)
    #expect((pool?.counts.kept ?? 0) <= 2)
  }

  @Test("at most `spares` buffers are kept when a reader lets many chunks go at once")
  func sparesBoundedInStream() async throws {
    let (stream, writer) = ResponseBodyStream.makeStream()
    let pool = writer.core.segmentPool
    for value: UInt8 in 0..<12 {
      _ = Self.bytes(256 * 1024, value).withUnsafeBytes { writer.append($0) }
    }
    writer.finish()
    var chunks = try await Self.readAll(stream)
    #expect(chunks.count == 12)
    #expect(pool.counts == (out: 12, kept: 0))
    chunks = []
    #expect(pool.counts == (out: 0, kept: 6))
  }

  // MARK: - Threads

  @Test("a producer thread appends while readers let chunks go on other threads: no byte lost")
  func concurrentGiveBack() async throws {
    let resume = DispatchSemaphore(value: 0)
    let (stream, writer) = ResponseBodyStream.makeStream(
      bufferSize: 64 * 1024, onDemand: { resume.signal() })
    let pool = writer.core.segmentPool
    let total = 6 * 1024 * 1024
    let sizes = [16 * 1024, 1, 100, 70_000, 16 * 1024, 200_000, 3, 16 * 1024, 40_000]
    let producer = Thread {
      var offset = 0
      var index = 0
      while offset < total {
        let size = Swift.min(sizes[index % sizes.count], total - offset)
        index += 1
        let piece = Self.body(from: offset, count: size)
        offset += size
        let (room, needsFlush) = piece.withUnsafeBytes { writer.append($0) }
        if needsFlush || !room { writer.flush() }
        if !room { resume.wait() }
      }
      writer.flush()
      writer.finish()
    }
    producer.start()

    let damaged = PThreadLock(0)
    let dropper = DispatchQueue(label: "dropper", attributes: .concurrent)
    let group = DispatchGroup()
    var held: [(offset: Int, chunk: Data)] = []
    var offset = 0
    var wrongOnArrival = 0
    for try await chunk in stream {
      if !Self.matches(chunk, at: offset) { wrongOnArrival += 1 }
      held.append((offset, chunk))
      offset += chunk.count
      if held.count > 3 {
        let old = held.removeFirst()
        dropper.async(group: group) {
          // Checked again as it is let go, while the producer refills buffers.
          if !Self.matches(old.chunk, at: old.offset) { damaged.withLock { $0 += 1 } }
        }
      }
    }
    for old in held where !Self.matches(old.chunk, at: old.offset) {
      damaged.withLock { $0 += 1 }
    }
    held = []
    await withCheckedContinuation { done in group.notify(queue: .global()) { done.resume() } }
    #expect(offset == total)
    #expect(wrongOnArrival == 0)
    #expect(damaged.withLock { $0 } == 0, "chunks written over while held")
    #expect(pool.counts.out == 0)
    #expect(pool.counts.kept <= 2)
  }

  // MARK: - Memory held past the stream

  /// Where a pool is, while something keeps it.
  private final class PoolReference {
    weak var pool: StreamSegmentPool?
  }

  /// Reads a 1 MiB-buffer stream of `segments` full segments, keeping only the last chunk;
  /// the stream is gone when this returns.
  private static func keepLastChunk(
    of segments: Int, pool: PoolReference
  ) async throws -> Data {
    let (stream, writer) = ResponseBodyStream.makeStream()
    pool.pool = writer.core.segmentPool
    for value in 0..<segments {
      _ = Self.bytes(256 * 1024, UInt8(value)).withUnsafeBytes { writer.append($0) }
    }
    writer.finish()
    var last = Data()
    for try await chunk in stream { last = chunk }
    return last
  }

  @Test("a chunk kept after its stream is gone does not keep the stream's spare buffers")
  func sparesFreedWithStream() async throws {
    let reference = PoolReference()
    let chunk = try await Self.keepLastChunk(of: 7, pool: reference)
    #expect(chunk == Self.bytes(256 * 1024, 6))
    let kept = reference.pool?.counts.kept ?? 0
    #expect(
      kept == 0,
      "one 256 KiB chunk kept pins \(kept) spare buffers (\(kept * 256) KiB) of a finished stream")
  }

  // MARK: - Reuse past the default buffer

  @Test(
    "pieces as large as the curl transport reads are pooled, whatever the buffer size",
    arguments: [4 << 10, 4 << 20])
  func transportPiecesPooled(bufferSize: Int) async throws {
    // What CurlTransport reads at once for such a stream.
    let piece = ResponseBodyStream.readSize(bufferSize: bufferSize)
    let (stream, writer) = ResponseBodyStream.makeStream(bufferSize: bufferSize)
    let pool = writer.core.segmentPool
    var iterator = stream.makeAsyncIterator()
    for value: UInt8 in 0..<4 {
      _ = Self.bytes(piece, value).withUnsafeBytes { writer.append($0) }
      writer.flush()
      let chunk = try #require(try await iterator.next())
      #expect(chunk == Self.bytes(piece, value))
    }
    #expect(
      pool.counts.kept > 0,
      """
      \(piece / 1024) KiB pieces in \(pool.size / 1024) KiB segments: each allocated and \
      freed, none reused
      """)
  }

  // MARK: - Empty chunks

  @Test("an empty chunk written while the reader waits does not wake it with an empty chunk")
  func emptyWriteDoesNotWake() async throws {
    let (stream, writer) = ResponseBodyStream.makeStream(bufferSize: 4096)
    let reader = Task { try await Self.readAll(stream) }
    while !writer.core.readerIsWaiting { await Task.yield() }
    writer.write(Data())
    writer.write(Data("a".utf8))
    writer.finish()
    let chunks = try await reader.value
    #expect(chunks == [Data("a".utf8)], "the reader got \(chunks.map(\.count)) bytes a chunk")
  }
}
