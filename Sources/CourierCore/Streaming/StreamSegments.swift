import Foundation

/// The bytes a ``ResponseBodyStream`` holds for its reader, as segments the reader takes front
/// first.
///
/// Bytes the producer adds while the reader lags go into the last segment while its reserved
/// room lasts, then into a new one: what is buffered is never moved to a larger allocation, so
/// every byte is copied once, from the transport's buffer into a segment. A chunk the producer
/// hands over as `Data`, as large as a segment, becomes one as it is, uncopied; so does a
/// smaller one that finds nothing buffered, until more comes while it waits.
///
/// A segment taken with less than half its reservation used, and at most 64 KiB, is handed
/// over in a copy of its own size: a reader that keeps its chunks (small events, each the only
/// piece of a producer's turn) holds what arrived rather than 256 KiB a chunk.
struct StreamSegments {
  /// Bytes buffered, and how many their allocation was reserved for.
  private struct Segment {
    var data: Data
    var reserved: Int
  }

  /// Front first; bytes are added to the last.
  private var segments: [Segment] = []
  /// How many more bytes the last segment takes without growing: none for a chunk kept as
  /// written.
  private var room: Int {
    segments.last.map { $0.reserved - $0.data.count } ?? 0
  }
  /// The bytes buffered.
  private(set) var count = 0
  /// The only segment is a chunk smaller than a segment, kept as written because nothing was
  /// buffered: a reader that keeps up gets it without a reserve it would hold. What comes
  /// while it waits gathers with it in a segment of its own (its bytes copied then, once).
  private var loneChunk = false

  /// Whether nothing is buffered.
  var isEmpty: Bool { count == 0 }

  /// Copies `bytes` in: into the last segment while they fit its room, else into a new one
  /// that reserves `reserve` bytes (at least as many as `bytes`).
  mutating func append(_ bytes: UnsafeRawBufferPointer, reserving reserve: Int) {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return }
    if loneChunk {
      loneChunk = false
      let lone = segments.removeLast().data
      count -= lone.count
      lone.withUnsafeBytes {
        append($0, reserving: Swift.max(reserve, lone.count + bytes.count))
      }
    }
    if segments.isEmpty || bytes.count > room {
      let capacity = Swift.max(reserve, bytes.count)
      var segment = Data()
      segment.reserveCapacity(capacity)
      segments.append(Segment(data: segment, reserved: capacity))
    }
    segments[segments.count - 1].data.append(
      base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
    count += bytes.count
  }

  /// Adds `chunk`: a segment of its own, as it is, when nothing is buffered or when it does
  /// not fit the last segment's room and is at least `reserve` bytes long; else copied in as
  /// ``append(_:reserving:)`` copies bytes.
  mutating func append(_ chunk: Data, reserving reserve: Int) {
    guard !chunk.isEmpty else { return }
    let alone = segments.isEmpty
    guard alone || (chunk.count > room && chunk.count >= reserve) else {
      chunk.withUnsafeBytes { append($0, reserving: reserve) }
      return
    }
    segments.append(Segment(data: chunk, reserved: chunk.count))
    count += chunk.count
    loneChunk = alone && chunk.count < reserve
  }

  /// Takes the front segment; empty when nothing is buffered.
  mutating func takeFirst() -> Data {
    guard !segments.isEmpty else { return Data() }
    let first = segments.removeFirst()
    if segments.isEmpty { loneChunk = false }
    count -= first.data.count
    guard first.data.count <= Self.compactedSize, first.reserved > 2 * first.data.count else {
      return first.data
    }
    return first.data.withUnsafeBytes { Data($0) }
  }

  /// 64 KiB: the largest segment copied to its own size when taken.
  private static let compactedSize = 64 * 1024

  /// Drops everything buffered.
  mutating func removeAll() {
    segments = []
    count = 0
    loneChunk = false
  }
}
