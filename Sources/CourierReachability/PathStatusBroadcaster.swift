import Synchronization

/// Holds a current ``PathStatus`` and hands every change to any number of subscribers: the
/// building block of Courier's monitors, and of yours (see ``PathMonitor``).
///
/// Each call to ``updates()`` makes a new `AsyncStream` that first yields the status at the
/// moment of subscribing and then every change, so a subscriber never misses the change that
/// happens between reading ``status`` and subscribing. A slow subscriber is not queued every
/// intermediate status: its stream keeps only the newest one (for a path, only the latest
/// state matters). Publishing the status that is already current wakes nobody.
///
/// ```swift
/// let broadcaster = PathStatusBroadcaster(.unsatisfied(reason: .unknown))
/// let changes = broadcaster.updates()
/// broadcaster.publish(.satisfied(interfaces: [.wifi]))
/// for await status in changes where status.isSatisfied { break }
/// ```
public final class PathStatusBroadcaster: Sendable {
  private struct State {
    var status: PathStatus
    var finished = false
    var nextID = 0
    var subscribers: [Int: AsyncStream<PathStatus>.Continuation] = [:]
  }

  // Every access goes through the Mutex, so the class is Sendable without `@unchecked`.
  private let state: Mutex<State>

  /// Creates a broadcaster holding `initial`.
  public init(_ initial: PathStatus) {
    state = Mutex(State(status: initial))
  }

  /// The current status.
  public var status: PathStatus { state.withLock { $0.status } }

  /// The number of streams from ``updates()`` that are still being listened to.
  public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

  /// Makes `status` current and yields it to every subscriber, unless it already was current.
  /// Does nothing after ``finish()``.
  public func publish(_ status: PathStatus) {
    state.withLock { state in
      guard !state.finished, state.status != status else { return }
      state.status = status
      // Yielded under the lock so that two publishes cannot reach a subscriber out of order
      // (a yield only enqueues; it never runs the consumer's code here).
      for continuation in state.subscribers.values { continuation.yield(status) }
    }
  }

  /// A new stream: the current status, then each change, until ``finish()`` or until the
  /// consumer stops iterating (its task is cancelled or it drops the stream).
  public func updates() -> AsyncStream<PathStatus> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: PathStatus.self, bufferingPolicy: .bufferingNewest(1))
    let id = state.withLock { state -> Int? in
      guard !state.finished else { return nil }
      let id = state.nextID
      state.nextID += 1
      state.subscribers[id] = continuation
      // Yielded under the lock so that a concurrent publish cannot slip in before it.
      continuation.yield(state.status)
      return id
    }
    guard let id else {
      continuation.yield(status)
      continuation.finish()
      return stream
    }
    continuation.onTermination = { [weak self] _ in
      _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
    }
    return stream
  }

  /// Ends every stream; later subscribers get the last status and an immediate end.
  public func finish() {
    let targets = state.withLock { state -> [AsyncStream<PathStatus>.Continuation] in
      guard !state.finished else { return [] }
      state.finished = true
      defer { state.subscribers = [:] }
      return Array(state.subscribers.values)
    }
    for continuation in targets { continuation.finish() }
  }
}
