import Synchronization

/// The cancellation tokens of the requests one ``Client`` has under way, so
/// ``Client/cancelAll()`` can reach them.
///
/// Owned by a client instance (never global). A `Mutex` guards the table; the class is
/// `Sendable` because its only stored property is that `Mutex`.
final class InFlightRequests: Sendable {
  private struct State {
    var nextID: UInt64 = 0
    var tokens: [UInt64: RequestCancellation] = [:]
  }

  private let state = Mutex(State())

  /// Registers a request's token and returns the ticket to remove it with.
  func insert(_ token: RequestCancellation) -> UInt64 {
    state.withLock { state in
      let id = state.nextID
      state.nextID &+= 1
      state.tokens[id] = token
      return id
    }
  }

  /// Forgets the task registered under `id`.
  func remove(_ id: UInt64) {
    _ = state.withLock { $0.tokens.removeValue(forKey: id) }
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
}
