import Synchronization

/// A count that a test can wait on: the code under test calls ``increment()``, the test
/// awaits ``wait(until:)``. Backs ``StubTransport/waitForRequests(_:)`` and
/// ``TestClock/waitForSleepers(_:)``.
///
/// Cancelling a waiting task ends its wait, so a Swift Testing `.timeLimit` fails a count
/// that is never reached instead of hanging the run. `Sendable` through its `Mutex`.
final class CountEvent: Sendable {
  private struct Waiter {
    let id: Int
    let target: Int
    let continuation: CheckedContinuation<Void, Never>
  }

  private struct State {
    var count = 0
    var nextID = 0
    var waiters: [Waiter] = []
    var cancelled: Set<Int> = []
  }

  private let state = Mutex(State())

  /// Adds one and wakes every waiter whose target is reached.
  func increment() {
    let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      state.count += 1
      let count = state.count
      let ready = state.waiters.filter { $0.target <= count }.map(\.continuation)
      state.waiters.removeAll { $0.target <= count }
      return ready
    }
    for waiter in ready { waiter.resume() }
  }

  /// Returns once the count is at least `target`, or the task is cancelled.
  func wait(until target: Int) async {
    let id = state.withLock { state in
      defer { state.nextID += 1 }
      return state.nextID
    }
    await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        let ready = state.withLock { state in
          guard state.count < target, state.cancelled.remove(id) == nil else { return true }
          state.waiters.append(Waiter(id: id, target: target, continuation: continuation))
          return false
        }
        if ready { continuation.resume() }
      }
    } onCancel: {
      let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
        guard let index = state.waiters.firstIndex(where: { $0.id == id }) else {
          state.cancelled.insert(id)
          return nil
        }
        return state.waiters.remove(at: index).continuation
      }
      waiter?.resume()
    }
  }
}
