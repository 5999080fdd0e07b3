import Synchronization

/// A clock whose time moves only when a test says so, for middleware that waits (retry
/// backoff, timeouts, deadlines).
///
/// Sleepers wake when ``advance(by:)`` moves time past their deadline, and end at once with
/// `CancellationError` when their task is cancelled. ``waitForSleepers(_:)`` is the event to
/// wait on before advancing, so a test never races the code it drives:
///
/// ```swift
/// let clock = TestClock()
/// let retry = RetryMiddleware(policy: .standard, clock: clock)
/// let task = Task { try await client.send(Endpoint<Void>(.get, "flaky")) }
/// await clock.waitForSleepers(1)       // the first backoff has started
/// clock.advance(by: .seconds(1))
/// ```
public final class TestClock: Clock, Sendable {
  /// A point on the test clock: the time since it was made.
  public struct Instant: InstantProtocol, CustomStringConvertible {
    /// The time since the clock was made.
    public var offset: Duration

    /// The instant `duration` later.
    public func advanced(by duration: Duration) -> Instant {
      Instant(offset: offset + duration)
    }

    /// The duration from this instant to `other`.
    public func duration(to other: Instant) -> Duration { other.offset - offset }

    /// Orders instants.
    public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }

    /// The offset.
    public var description: String { "\(offset)" }
  }

  private struct Sleeper {
    let deadline: Instant
    let continuation: CheckedContinuation<Void, any Error>
  }

  private struct State {
    var now = Instant(offset: .zero)
    var nextID = 0
    var sleepers: [Int: Sleeper] = [:]
    var cancelled: Set<Int> = []
  }

  private let state = Mutex(State())
  private let started = CountEvent()

  /// Creates a clock at offset zero.
  public init() {}

  /// The current instant.
  public var now: Instant { state.withLock { $0.now } }

  /// Zero: the clock moves only in the steps a test takes.
  public var minimumResolution: Duration { .zero }

  /// How many sleeps are waiting now.
  public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

  /// Suspends until ``advance(by:)`` reaches `deadline`, or throws `CancellationError` when the
  /// task is cancelled.
  public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    let id = state.withLock { state in
      defer { state.nextID += 1 }
      return state.nextID
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<Void, any Error>) in
        enum Outcome { case wait, resume, cancel }
        let outcome = state.withLock { state -> Outcome in
          if state.cancelled.remove(id) != nil { return .cancel }
          if deadline <= state.now { return .resume }
          state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
          return .wait
        }
        // Counted once registered, so a test that saw the count can advance past it.
        started.increment()
        switch outcome {
        case .wait: break
        case .resume: continuation.resume()
        case .cancel: continuation.resume(throwing: CancellationError())
        }
      }
    } onCancel: {
      let sleeper = state.withLock { state -> Sleeper? in
        if let sleeper = state.sleepers.removeValue(forKey: id) { return sleeper }
        state.cancelled.insert(id)
        return nil
      }
      sleeper?.continuation.resume(throwing: CancellationError())
    }
  }

  /// Moves time forward and wakes every sleeper whose deadline has come, earliest first.
  public func advance(by duration: Duration) {
    let woken = state.withLock { state -> [Sleeper] in
      state.now = state.now.advanced(by: duration)
      let now = state.now
      let due = state.sleepers.filter { $0.value.deadline <= now }
      for id in due.keys { state.sleepers[id] = nil }
      return due.values.sorted { $0.deadline < $1.deadline }
    }
    for sleeper in woken { sleeper.continuation.resume() }
  }

  /// Returns once `count` sleeps in all have started on this clock (counting those already
  /// over): the event to wait on before ``advance(by:)``.
  public func waitForSleepers(_ count: Int) async {
    await started.wait(until: count)
  }
}
