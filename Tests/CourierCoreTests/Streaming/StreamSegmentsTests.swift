import Foundation
import Synchronization
import Testing

@testable import CourierCore

@Suite("A streamed body's buffer, in segments", .timeLimit(.minutes(5)))
struct StreamSegmentsTests {
  private static func bytes(_ count: Int, _ value: UInt8) -> Data {
    Data(repeating: value, count: count)
  }

  @Test("bytes fill the last segment's room, then start a new one; taken front first, in order")
  func segmentsInOrder() {
    var segments = StreamSegments(segmentSize: 250)
    #expect(segments.isEmpty)
    for value: UInt8 in 1...5 {
      Self.bytes(100, value).withUnsafeBytes { segments.append($0) }
    }
    #expect(segments.count == 500)
    // 250 bytes of room: two pieces of 100 each, then a new segment.
    #expect(segments.takeFirst() == Self.bytes(100, 1) + Self.bytes(100, 2))
    #expect(segments.takeFirst() == Self.bytes(100, 3) + Self.bytes(100, 4))
    #expect(segments.count == 100)
    #expect(segments.takeFirst() == Self.bytes(100, 5))
    #expect(segments.isEmpty)
    #expect(segments.takeFirst().isEmpty)
  }

  @Test("a piece larger than a segment starts a segment of its own size")
  func largePiece() {
    var segments = StreamSegments(segmentSize: 16)
    Self.bytes(10, 1).withUnsafeBytes { segments.append($0) }
    Self.bytes(40, 2).withUnsafeBytes { segments.append($0) }
    Self.bytes(3, 3).withUnsafeBytes { segments.append($0) }
    #expect(segments.takeFirst() == Self.bytes(10, 1))
    // The 40-byte segment had no room left: the next piece went to a new one.
    #expect(segments.takeFirst() == Self.bytes(40, 2))
    #expect(segments.takeFirst() == Self.bytes(3, 3))
  }

  @Test("a chunk as large as a segment is kept as it is; smaller ones are gathered")
  func chunks() {
    var segments = StreamSegments(segmentSize: 8)
    let large = Self.bytes(64, 7)
    segments.append(Data("ab".utf8))
    segments.append(Data("cd".utf8))
    segments.append(large)
    segments.append(Data("ef".utf8))
    #expect(segments.count == 70)
    #expect(segments.takeFirst() == Data("abcd".utf8))
    let taken = segments.takeFirst()
    #expect(taken == large)
    let sameStorage = taken.withUnsafeBytes { a in
      large.withUnsafeBytes { b in a.baseAddress == b.baseAddress }
    }
    #expect(sameStorage, "the large chunk was copied")
    #expect(segments.takeFirst() == Data("ef".utf8))
    segments.append(Data("gh".utf8))
    segments.removeAll()
    #expect(segments.isEmpty && segments.count == 0)
  }

  @Test("a paused producer goes on once the reader has left at most half the buffer")
  func resumesAtHalf() async throws {
    let demands = Atomic(0)
    let (stream, writer) = ResponseBodyStream.makeStream(
      bufferSize: 1000, onDemand: { demands.add(1, ordering: .relaxed) })
    // Pieces appended as the curl transport appends them share a segment (it reserves a
    // buffer's worth past the first): 4 of 300 bytes, past the buffer's 1,000.
    var room = true
    for value: UInt8 in 1...4 {
      room = Self.bytes(300, value).withUnsafeBytes { writer.append($0).room }
    }
    #expect(!room, "1,200 bytes fill a 1,000-byte buffer")
    var iterator = stream.makeAsyncIterator()
    let first = try await iterator.next()
    #expect(first?.count == 1200)
    #expect(demands.load(ordering: .relaxed) == 1)
    // Large chunks, each a segment: the producer waits until at most 500 bytes are left.
    let chunk = Self.bytes(256 * 1024, 9)
    let (big, bigWriter) = ResponseBodyStream.makeStream(
      bufferSize: 3 * 256 * 1024,
      onDemand: { demands.add(10, ordering: .relaxed) })
    for _ in 0..<3 { bigWriter.write(chunk) }
    var reader = big.makeAsyncIterator()
    #expect(try await reader.next()?.count == chunk.count)
    #expect(demands.load(ordering: .relaxed) == 1, "two segments left: more than half")
    #expect(try await reader.next()?.count == chunk.count)
    #expect(demands.load(ordering: .relaxed) == 11, "one left: at most half")
    bigWriter.finish()
    #expect(try await reader.next()?.count == chunk.count)
    #expect(try await reader.next() == nil)
  }
}

@Suite("A streamed body's segment buffers, reused", .timeLimit(.minutes(5)))
struct StreamSegmentPoolTests {
  private static func address(_ chunk: Data) -> UnsafeRawPointer? {
    chunk.withUnsafeBytes { $0.baseAddress }
  }

  @Test("a chunk the reader lets go gives its buffer to the next segment")
  func reused() throws {
    var segments = StreamSegments(segmentSize: 1024, spares: 2)
    var first: Data? = Data()
    Data(repeating: 1, count: 1000).withUnsafeBytes { segments.append($0) }
    first = segments.takeFirst()
    let firstAddress = try #require(first.flatMap(Self.address))
    #expect(segments.pool.counts == (out: 1, kept: 0))
    first = nil
    #expect(segments.pool.counts == (out: 0, kept: 1))
    Data(repeating: 2, count: 1000).withUnsafeBytes { segments.append($0) }
    let second = segments.takeFirst()
    #expect(Self.address(second) == firstAddress, "the buffer was not reused")
    #expect(second == Data(repeating: 2, count: 1000))
    #expect(first == nil)
  }

  @Test("a chunk the reader keeps is never written over by the segments after it")
  func keptChunkUntouched() {
    var segments = StreamSegments(segmentSize: 1024, spares: 4)
    var kept: [(value: UInt8, chunk: Data)] = []
    for value: UInt8 in 1...20 {
      Data(repeating: value, count: 1000).withUnsafeBytes { segments.append($0) }
      kept.append((value, segments.takeFirst()))
      // Some let go, so that their buffers are reused while the others are kept.
      if value % 3 == 0 { kept.removeFirst() }
    }
    #expect(kept.count == 14)
    for (value, chunk) in kept {
      #expect(chunk == Data(repeating: value, count: 1000), "chunk \(value) was written over")
    }
  }

  @Test("at most `spares` buffers are kept; the rest, and pieces larger than a segment, freed")
  func sparesBounded() {
    var segments = StreamSegments(segmentSize: 1024, spares: 2)
    var taken: [Data] = []
    for _ in 0..<5 {
      Data(repeating: 3, count: 1000).withUnsafeBytes { segments.append($0) }
    }
    Data(repeating: 4, count: 5000).withUnsafeBytes { segments.append($0) }
    while !segments.isEmpty { taken.append(segments.takeFirst()) }
    #expect(taken.map(\.count) == [1000, 1000, 1000, 1000, 1000, 5000])
    #expect(segments.pool.counts == (out: 6, kept: 0))
    taken = []
    #expect(segments.pool.counts == (out: 0, kept: 2))
  }

  @Test("segments dropped unread, by removeAll or with the stream, give their buffers back")
  func droppedUnread() {
    var segments = StreamSegments(segmentSize: 1024, spares: 8)
    for _ in 0..<3 { Data(repeating: 5, count: 1000).withUnsafeBytes { segments.append($0) } }
    #expect(segments.pool.counts == (out: 3, kept: 0))
    segments.removeAll()
    #expect(segments.pool.counts == (out: 0, kept: 3))

    let pool = Self.poolOfDroppedStream()
    #expect(pool.counts.out == 0, "a dropped stream's segments were not given back")
  }

  /// The pool of a stream dropped, unread, with two segments buffered.
  private static func poolOfDroppedStream() -> StreamSegmentPool {
    let (stream, writer) = ResponseBodyStream.makeStream(bufferSize: 4096)
    let pool = writer.core.segmentPool
    // Each more than half a segment: one segment each.
    for _ in 0..<2 {
      _ = Data(repeating: 6, count: pool.size / 2 + 1).withUnsafeBytes { writer.append($0) }
    }
    withExtendedLifetime(stream) { #expect(pool.counts.out == 2) }
    return pool
  }

  @Test("a small segment is copied out at its size and its buffer kept at once")
  func smallCopied() {
    var segments = StreamSegments(segmentSize: 256 * 1024, spares: 2)
    Data(repeating: 7, count: 100).withUnsafeBytes { segments.append($0) }
    let chunk = segments.takeFirst()
    #expect(chunk == Data(repeating: 7, count: 100))
    #expect(segments.pool.counts == (out: 0, kept: 1))
  }
}
