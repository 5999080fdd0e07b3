import Synchronization

/// The requests one ``Client`` has under way, so ``Client/cancelAll()`` can reach them.
///
/// Owned by a client instance (never global). A `Mutex` guards the table; the class is
/// `Sendable` because its only stored property is that `Mutex`.
final class InFlightRequests: Sendable {
  private struct State {
    var nextID: UInt64 = 0
    var tasks: [UInt64: Task<Response, any Error>] = [:]
  }

  private let state = Mutex(State())

  /// Registers `task` and returns the ticket to remove it with.
  func insert(_ task: Task<Response, any Error>) -> UInt64 {
    state.withLock { state in
      let id = state.nextID
      state.nextID &+= 1
      state.tasks[id] = task
      return id
    }
  }

  /// Forgets the task registered under `id`.
  func remove(_ id: UInt64) {
    _ = state.withLock { $0.tasks.removeValue(forKey: id) }
  }

  /// Cancels every registered task and returns how many there were.
  @discardableResult
  func cancelAll() -> Int {
    let tasks = state.withLock { Array($0.tasks.values) }
    for task in tasks { task.cancel() }
    return tasks.count
  }

  /// How many tasks are registered.
  var count: Int { state.withLock { $0.tasks.count } }
}
