import Foundation

/// The bytes a ``ResponseBodyStream`` holds for its reader, as segments the reader takes front
/// first.
///
/// Bytes the producer adds while the reader lags go into the last segment while its room
/// lasts, then into a new one: what is buffered is never moved to a larger allocation, so
/// every byte is copied once, from the transport's buffer into a segment. A chunk the producer
/// hands over as `Data`, as large as a segment, becomes one as it is, uncopied; so does a
/// smaller one that finds nothing buffered, until more comes while it waits.
///
/// Segments of ``segmentSize`` come from a ``StreamSegmentPool``: the reader gets one as `Data`
/// that gives its buffer back to the pool when the reader lets it go, and the next segment
/// reuses it. Without it, a large body allocated and freed a segment for every 256 KiB it
/// carried, and the allocator returned the freed pages to the system and faulted fresh ones
/// in for the next: a third of the streaming's cost.
///
/// A segment taken with less than half its room used, and at most 64 KiB, is handed over in a
/// copy of its own size (and its buffer goes back to the pool at once): a reader that keeps
/// its chunks (small events, each the only piece of a producer's turn) holds what arrived
/// rather than a segment a chunk.
///
/// It owns its buffers: its one owner (``StreamCore``) keeps it in place, never copies it, and
/// calls ``removeAll()`` before letting it go.
struct StreamSegments {
  /// Bytes buffered: a chunk kept as the producer wrote it, or a buffer the segments copy
  /// into, `reserved` bytes long (from the pool when that is the pool's size).
  private enum Storage {
    case chunk(Data)
    case buffer(UnsafeMutableRawPointer)
  }

  private struct Segment {
    var storage: Storage
    var count: Int
    var reserved: Int
  }

  /// Front first; bytes are added to the last.
  private var segments: [Segment] = []
  /// The buffers segments of ``segmentSize`` bytes use, shared with the chunks handed out.
  let pool: StreamSegmentPool
  /// How many more bytes the last segment takes without a new one: none for a chunk kept as
  /// written.
  private var room: Int {
    guard let last = segments.last, case .buffer = last.storage else { return 0 }
    return last.reserved - last.count
  }
  /// The bytes buffered.
  private(set) var count = 0
  /// The only segment is a chunk smaller than a segment, kept as written because nothing was
  /// buffered: a reader that keeps up gets it without a segment's room it would hold. What
  /// comes while it waits gathers with it in a segment of its own (its bytes copied then,
  /// once).
  private var loneChunk = false

  /// Segments of `segmentSize` bytes, of which the pool keeps `spares` for reuse.
  init(segmentSize: Int, spares: Int = 2) {
    pool = StreamSegmentPool(size: Swift.max(1, segmentSize), spares: spares)
  }

  /// The room a new segment has, unless a piece larger than it starts one.
  var segmentSize: Int { pool.size }

  /// Whether nothing is buffered.
  var isEmpty: Bool { count == 0 }

  /// Copies `bytes` in: into the last segment while they fit its room, else into a new one of
  /// ``segmentSize`` (or of their size when they are larger).
  mutating func append(_ bytes: UnsafeRawBufferPointer) {
    guard !bytes.isEmpty else { return }
    if loneChunk {
      loneChunk = false
      let lone = segments.removeLast()
      count -= lone.count
      if case .chunk(let data) = lone.storage {
        data.withUnsafeBytes { appendCopy($0, reserving: Swift.max(segmentSize, $0.count)) }
      }
    }
    appendCopy(bytes, reserving: segmentSize)
  }

  /// Copies `bytes` (not empty) into the last segment's room, or a new segment that holds at
  /// least `reserve` bytes.
  private mutating func appendCopy(_ bytes: UnsafeRawBufferPointer, reserving reserve: Int) {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return }
    if bytes.count > room {
      let capacity = Swift.max(reserve, bytes.count)
      segments.append(
        Segment(storage: .buffer(pool.take(capacity)), count: 0, reserved: capacity))
    }
    let last = segments.count - 1
    guard case .buffer(let buffer) = segments[last].storage else { return }
    (buffer + segments[last].count).copyMemory(from: base, byteCount: bytes.count)
    segments[last].count += bytes.count
    count += bytes.count
  }

  /// Adds `chunk`: a segment of its own, as it is, when nothing is buffered or when it does
  /// not fit the last segment's room and is at least ``segmentSize`` bytes long; else copied
  /// in as ``append(_:)`` copies bytes.
  mutating func append(_ chunk: Data) {
    guard !chunk.isEmpty else { return }
    let alone = segments.isEmpty
    guard alone || (chunk.count > room && chunk.count >= segmentSize) else {
      chunk.withUnsafeBytes { append($0) }
      return
    }
    segments.append(Segment(storage: .chunk(chunk), count: chunk.count, reserved: chunk.count))
    count += chunk.count
    loneChunk = alone && chunk.count < segmentSize
  }

  /// Takes the front segment; empty when nothing is buffered.
  mutating func takeFirst() -> Data {
    guard !segments.isEmpty else { return Data() }
    let first = segments.removeFirst()
    if segments.isEmpty { loneChunk = false }
    count -= first.count
    switch first.storage {
    case .chunk(let data):
      return data
    case .buffer(let buffer):
      guard first.count > Self.compactedSize || first.reserved <= 2 * first.count else {
        defer { pool.give(buffer, reserved: first.reserved) }
        return Data(bytes: buffer, count: first.count)
      }
      let pool = pool
      let reserved = first.reserved
      return Data(
        bytesNoCopy: buffer, count: first.count,
        deallocator: .custom { buffer, _ in pool.give(buffer, reserved: reserved) })
    }
  }

  /// 64 KiB: the largest segment copied to its own size when taken.
  private static let compactedSize = 64 * 1024

  /// Drops everything buffered.
  mutating func removeAll() {
    for segment in segments {
      guard case .buffer(let buffer) = segment.storage else { continue }
      pool.give(buffer, reserved: segment.reserved)
    }
    segments = []
    count = 0
    loneChunk = false
  }
}

/// Buffers of one size for a stream's segments, kept when their chunk is let go and reused for
/// the next: `spares` at most, the rest freed. Any thread gives a buffer back (where the
/// reader drops its chunk); the buffers kept are freed with the pool, once the stream and
/// every chunk it handed out are gone.
final class StreamSegmentPool: Sendable {
  private struct Buffers {
    var kept: [UnsafeMutableRawPointer] = []
    /// Given by ``take(_:)`` and not back yet.
    var out = 0
    /// The stream is gone: buffers given back are freed, not kept.
    var closed = false
  }

  /// The bytes of each buffer kept.
  let size: Int
  private let spares: Int
  /// A `pthread` mutex, so that ThreadSanitizer sees a buffer pass from the thread that let
  /// its chunk go to the producer's that fills it again.
  private let buffers: PThreadLock<Buffers>

  init(size: Int, spares: Int) {
    self.size = size
    self.spares = Swift.max(0, spares)
    buffers = PThreadLock(Buffers())
  }

  /// A buffer of `capacity` bytes: one kept when that is ``size``, else a new one.
  func take(_ capacity: Int) -> UnsafeMutableRawPointer {
    let reused = buffers.withLock { buffers -> UnsafeMutableRawPointer? in
      buffers.out += 1
      return capacity == size ? buffers.kept.popLast() : nil
    }
    return reused ?? .allocate(byteCount: capacity, alignment: 16)
  }

  /// Takes back a buffer ``take(_:)`` gave for `reserved` bytes: kept while fewer than
  /// `spares` are, else freed.
  func give(_ buffer: UnsafeMutableRawPointer, reserved: Int) {
    let kept = buffers.withLock { buffers in
      buffers.out -= 1
      guard reserved == size, !buffers.closed, buffers.kept.count < spares else { return false }
      buffers.kept.append(buffer)
      return true
    }
    if !kept { buffer.deallocate() }
  }

  /// Frees the buffers kept, and every buffer given back from now on: the stream is gone,
  /// and a chunk its reader still holds must not keep spares nobody will use.
  func close() {
    let freed = buffers.withLock { buffers in
      buffers.closed = true
      defer { buffers.kept = [] }
      return buffers.kept
    }
    for buffer in freed { buffer.deallocate() }
  }

  /// The buffers given and not back yet, and those kept for reuse; for tests.
  var counts: (out: Int, kept: Int) { buffers.withLock { ($0.out, $0.kept.count) } }

  deinit { close() }
}
