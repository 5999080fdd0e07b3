import Synchronization

/// The tasks of the requests one ``Client`` has under way, so ``Client/cancelAll()`` can
/// reach them.
///
/// Owned by a client instance (never global). A `Mutex` guards the table; the class is
/// `Sendable` because its only stored property is that `Mutex`.
final class InFlightRequests: Sendable {
  private struct State {
    var nextID: UInt64 = 0
    var tasks: [UInt64: Task<Response, any Error>] = [:]
  }

  private let state = Mutex(State())

  /// Starts a request's task with `start` and registers it, under the lock, so a request
  /// whose chain has begun is always one that ``cancelAll()`` reaches. Returns the task and
  /// the ticket to remove it with.
  ///
  /// `start` must only create the task (`Task { … }`), never run the request inline: a
  /// request sent from inside the chain to the same client registers here too.
  func start(
    _ start: () -> Task<Response, any Error>
  ) -> (task: Task<Response, any Error>, ticket: UInt64) {
    state.withLock { state in
      let id = state.nextID
      state.nextID &+= 1
      let task = start()
      state.tasks[id] = task
      return (task, id)
    }
  }

  /// Forgets the task registered under `id`.
  func remove(_ id: UInt64) {
    _ = state.withLock { $0.tasks.removeValue(forKey: id) }
  }

  /// Cancels every registered request and returns how many there were.
  @discardableResult
  func cancelAll() -> Int {
    let tasks = state.withLock { Array($0.tasks.values) }
    for task in tasks { task.cancel() }
    return tasks.count
  }

  /// How many requests are registered.
  var count: Int { state.withLock { $0.tasks.count } }
}
