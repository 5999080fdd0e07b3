/// How a transport's connections stand at one moment: how many are open, how many of those
/// wait idle for a next request or carry one now, and how many requests wait for a
/// connection because their host's limit is reached.
///
/// A transport that keeps connections reports these through
/// ``Transport/connectionPool``; ``MetricsObserver`` records them as gauges. Rising `waiting`
/// with `idle` at zero says the per-host limit is too low for the load; `idle` at zero
/// between requests says connections are not being kept for reuse (`open` alone cannot say:
/// it follows the requests in flight whether or not their connections are kept).
///
/// ```swift
/// if let pool = transport.connectionPool, pool.waiting > 0 {
///   print("\(pool.waiting) requests wait for a connection; \(pool.inUse) in use")
/// }
/// ```
public struct ConnectionPoolFigures: Sendable, Hashable, CustomStringConvertible {
  /// Connections open now, whatever they are doing.
  public var open: Int
  /// Open connections kept between requests, ready for the next one to the same origin.
  public var idle: Int
  /// Open connections that are not idle: carrying a request, or being set up for one.
  public var inUse: Int
  /// Requests waiting for a connection, because their host already has as many as the
  /// transport allows.
  public var waiting: Int

  /// Creates figures; transports you write fill them from what they know.
  public init(open: Int, idle: Int, inUse: Int, waiting: Int) {
    self.open = open
    self.idle = idle
    self.inUse = inUse
    self.waiting = waiting
  }

  /// `open 3 (idle 1, in use 2), waiting 0`.
  public var description: String {
    "open \(open) (idle \(idle), in use \(inUse)), waiting \(waiting)"
  }
}
