import CourierCore
import Dispatch

/// A `TaskExecutor` that runs every job on a new thread of its own, for the blocking work of
/// Swift Testing's exit tests.
///
/// `#expect(processExitsWith:)` waits for its child with blocking reads — the child's
/// standard output, standard error and a back channel, each until the end — in child tasks of
/// the calling task. On Swift's global executor those reads hold its threads, one per core,
/// for as long as the child runs; on Linux the pool adds a thread only once its monitor sees
/// workers blocked, and in the meantime every other test waits; in a full `swift test` the
/// exit tests' reads can hold every thread the pool has. Under this executor's
/// preference, which those child tasks inherit, the reads block threads of their own (test
/// code; the type is `package`, so the documentation check does not compile it):
///
/// ```
/// let result = await withTaskExecutorPreference(ExitTestExecutor.shared) {
///   await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
///     try await scenario()
///   }
/// }
/// ```
///
/// An exit test runs a few dozen jobs, so a thread each costs nothing that matters; the
/// threads are detached and end with their job.
package final class ExitTestExecutor: TaskExecutor {
  /// The one instance; it holds no state.
  package static let shared = ExitTestExecutor()

  private init() {}

  /// Runs `job` on a new thread, or on a global dispatch queue if no thread can be made.
  package func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    let executor = asUnownedTaskExecutor()
    if let thread = NativeThread.spawn(
      name: "courier-exit-io", { job.runSynchronously(on: executor) })
    {
      thread.detach()
    } else {
      DispatchQueue.global().async { job.runSynchronously(on: executor) }
    }
  }
}
