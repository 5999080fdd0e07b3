import CourierCore
import Synchronization

/// How one event loop's connections stand, as ``CurlTransport/connectionPool`` reads them:
/// written under the engine lock as sockets open, close and go idle and as requests join or
/// leave the waiting line, read from any thread without that lock. A caller never waits for
/// the lock the loop thread holds while it works, and an observer that reads the figures
/// cannot wait for its own thread.
///
/// Open and idle are one word, so a reader never sees one changed without the other; the
/// waiting count is a word of its own, exact at its moment.
final class CurlPoolGauge: Sendable {
  /// Open connections in the high 32 bits, idle ones in the low.
  private let connections = Atomic<UInt64>(0)
  private let waiting = Atomic<Int>(0)

  /// Publishes the connection counts.
  func publish(open: Int, idle: Int) {
    let packed = UInt64(UInt32(clamping: open)) << 32 | UInt64(UInt32(clamping: idle))
    connections.store(packed, ordering: .relaxed)
  }

  /// Publishes the number of requests waiting for a connection.
  func publish(waiting count: Int) {
    waiting.store(count, ordering: .relaxed)
  }

  /// The figures last published.
  var figures: ConnectionPoolFigures {
    let packed = connections.load(ordering: .relaxed)
    let open = Int(packed >> 32)
    let idle = min(open, Int(packed & 0xFFFF_FFFF))
    return ConnectionPoolFigures(
      open: open, idle: idle, inUse: open - idle, waiting: waiting.load(ordering: .relaxed))
  }
}
