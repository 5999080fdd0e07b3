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
    var segments = StreamSegments()
    #expect(segments.isEmpty)
    for value: UInt8 in 1...5 {
      Self.bytes(100, value).withUnsafeBytes { segments.append($0, reserving: 250) }
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

  @Test("a piece larger than the reserve starts a segment of its own size")
  func largePiece() {
    var segments = StreamSegments()
    Self.bytes(10, 1).withUnsafeBytes { segments.append($0, reserving: 16) }
    Self.bytes(40, 2).withUnsafeBytes { segments.append($0, reserving: 16) }
    Self.bytes(3, 3).withUnsafeBytes { segments.append($0, reserving: 16) }
    #expect(segments.takeFirst() == Self.bytes(10, 1))
    // The 40-byte segment had no room left: the next piece went to a new one.
    #expect(segments.takeFirst() == Self.bytes(40, 2))
    #expect(segments.takeFirst() == Self.bytes(3, 3))
  }

  @Test("a chunk as large as a segment is kept as it is; smaller ones are gathered")
  func chunks() {
    var segments = StreamSegments()
    let large = Self.bytes(64, 7)
    segments.append(Data("ab".utf8), reserving: 8)
    segments.append(Data("cd".utf8), reserving: 8)
    segments.append(large, reserving: 8)
    segments.append(Data("ef".utf8), reserving: 8)
    #expect(segments.count == 70)
    #expect(segments.takeFirst() == Data("abcd".utf8))
    let taken = segments.takeFirst()
    #expect(taken == large)
    let sameStorage = taken.withUnsafeBytes { a in
      large.withUnsafeBytes { b in a.baseAddress == b.baseAddress }
    }
    #expect(sameStorage, "the large chunk was copied")
    #expect(segments.takeFirst() == Data("ef".utf8))
    segments.append(Data("gh".utf8), reserving: 8)
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
