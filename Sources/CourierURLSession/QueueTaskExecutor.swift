import Dispatch

/// A `TaskExecutor` that runs jobs on a serial `DispatchQueue`.
///
/// ``URLSessionTransport`` runs URLSession's async calls on a caller's session
/// (`data(for:delegate:)`, `upload(for:…)`) under this executor's preference, on its control
/// queue: those calls create and resume their task synchronously before they suspend, and on
/// Linux both wait for the session's work queue. Run on Swift's executor — one thread per
/// core — a busy session would hold every thread of the process's concurrency pool (see
/// `UserSessionTests`).
final class QueueTaskExecutor: TaskExecutor {
  /// Where every job runs.
  let queue: DispatchQueue

  /// An executor over `queue`, which should be serial and used for short or blocking work.
  init(queue: DispatchQueue) {
    self.queue = queue
  }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
  }
}
