import CourierCore
import Dispatch
import Synchronization

/// A `TaskExecutor` with one thread of its own, which runs its jobs one at a time in the
/// order they came: for test bodies that compute for seconds without a suspension point (fuzz
/// loops, large round trips).
///
/// On Swift's global executor such a body holds one of the pool's threads, one per core, for
/// its whole run, and every test that waits on a socket or a clock waits for it too. On a
/// thread each (``OwnThreadExecutor``) a dozen of them would share the cores with the pool's
/// threads, leaving the pool a small part of the machine. Here they take turns on one thread:
/// at most one core goes to them, and the pool keeps the rest (test code; the type is
/// `package`, so the documentation check does not compile it):
///
/// ```
/// @Test func mutants() async {
///   await withTaskExecutorPreference(ComputeExecutor.shared) {
///     for seed in 0..<20_000 { check(mutant(seed)) }
///   }
/// }
/// ```
///
/// Not for work that blocks on another thread's progress (an exit test's reads of its child):
/// one such job would hold every job queued behind it.
package final class ComputeExecutor: TaskExecutor {
  /// The one instance; its thread starts with the first job and lives as long as the process.
  package static let shared = ComputeExecutor()

  /// Jobs not started yet, oldest first, and whether the thread runs.
  private let state = Mutex<(jobs: [UnownedJob], started: Bool)>(([], false))
  /// Signalled once per job queued.
  private let queued = DispatchSemaphore(value: 0)

  private init() {}

  /// Queues `job` for the executor's thread, starting the thread with the first job (or, if
  /// no thread can be made, runs what is queued on a global dispatch queue).
  package func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    let start = state.withLock { state -> Bool in
      state.jobs.append(job)
      defer { state.started = true }
      return !state.started
    }
    queued.signal()
    guard start else { return }
    let executor = asUnownedTaskExecutor()
    if let thread = NativeThread.spawn(name: "courier-compute", { [self] in run(on: executor) }) {
      thread.detach()
    } else {
      DispatchQueue.global().async { [self] in drain(on: executor) }
    }
  }

  /// The thread's loop: each job in turn, waiting for the next.
  private func run(on executor: UnownedTaskExecutor) {
    while true {
      queued.wait()
      guard let job = state.withLock({ $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }) else {
        continue
      }
      job.runSynchronously(on: executor)
    }
  }

  /// Without a thread: runs jobs until none is left, and in the same step as it finds the
  /// queue empty lets the next ``enqueue(_:)`` start a consumer again, so that no job queued
  /// meanwhile is left without one.
  private func drain(on executor: UnownedTaskExecutor) {
    while let job = state.withLock({ state -> UnownedJob? in
      guard !state.jobs.isEmpty else {
        state.started = false
        return nil
      }
      return state.jobs.removeFirst()
    }) {
      job.runSynchronously(on: executor)
    }
  }
}
