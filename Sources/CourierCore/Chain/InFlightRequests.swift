import Synchronization

/// The cancellation tokens of the requests one ``Client`` has under way, so
/// ``Client/cancelAll()`` can reach them, and the client's shutdown: once it starts, no
/// request is admitted, and ``Client/shutdown(gracePeriod:)`` waits here for the table to
/// empty.
///
/// Owned by a client instance (never global). A `Mutex` guards the table; the class is
/// `Sendable` because its only stored property is that `Mutex`.
final class InFlightRequests: Sendable {
  private struct State {
    var nextID: UInt64 = 0
    var tokens: [UInt64: RequestCancellation] = [:]
    /// Whether the client is shutting down: no request is admitted any more.
    var isShuttingDown = false
    /// The grace period that ran out, once one has: the requests still in flight then were
    /// cancelled by the shutdown.
    var expiredGracePeriod: Duration?
    /// The requests the shutdown cancelled (not those cancelled before, by their callers).
    var cancelledByShutdown: Set<UInt64> = []
    /// The callers of ``waitUntilEmpty()`` once the client is shutting down.
    var waiters: [CheckedContinuation<Void, Never>] = []
  }

  private let state = Mutex(State())

  /// Registers a request's token and returns the ticket to remove it with, or `nil` when the
  /// client is shutting down and admits no request.
  func insert(_ token: RequestCancellation) -> UInt64? {
    state.withLock { state in
      guard !state.isShuttingDown else { return nil }
      let id = state.nextID
      state.nextID &+= 1
      state.tokens[id] = token
      return id
    }
  }

  /// Forgets the request registered under `id`; the last one out of a client that is shutting
  /// down releases the waiters.
  func remove(_ id: UInt64) {
    let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      state.tokens.removeValue(forKey: id)
      guard state.isShuttingDown else { return [] }
      state.cancelledByShutdown.remove(id)
      guard state.tokens.isEmpty else { return [] }
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.resume() }
  }

  /// Cancels every registered request and returns how many there were.
  @discardableResult
  func cancelAll() -> Int {
    let tokens = state.withLock { Array($0.tokens.values) }
    for token in tokens { token.cancel() }
    return tokens.count
  }

  /// How many requests are registered.
  var count: Int { state.withLock { $0.tokens.count } }

  /// Stops admitting requests.
  func beginShutdown() {
    state.withLock { $0.isShuttingDown = true }
  }

  /// Ends the grace period: cancels the requests still in flight, marked as cancelled by the
  /// shutdown (those already cancelled stay their callers'). The first grace period to run out
  /// is the one reported.
  func endGracePeriod(_ gracePeriod: Duration) {
    let tokens = state.withLock { state -> [RequestCancellation] in
      if state.expiredGracePeriod == nil { state.expiredGracePeriod = gracePeriod }
      var tokens: [RequestCancellation] = []
      for (id, token) in state.tokens where !token.isCancelled {
        state.cancelledByShutdown.insert(id)
        tokens.append(token)
      }
      return tokens
    }
    for token in tokens { token.cancel() }
  }

  /// The grace period that ran out, when the shutdown cancelled the request registered under
  /// `id`; `nil` otherwise.
  func shutdownCancellation(of id: UInt64) -> Duration? {
    state.withLock { state in
      state.cancelledByShutdown.contains(id) ? state.expiredGracePeriod : nil
    }
  }

  /// Whether the client is shutting down.
  var isShuttingDown: Bool { state.withLock { $0.isShuttingDown } }

  /// Returns once no request is registered; call it after ``beginShutdown()``, which stops new
  /// ones from coming.
  func waitUntilEmpty() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let done = state.withLock { state -> Bool in
        guard !state.tokens.isEmpty else { return true }
        state.waiters.append(continuation)
        return false
      }
      if done { continuation.resume() }
    }
  }
}
