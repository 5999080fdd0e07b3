import CourierCore
import Dispatch

/// A `TaskExecutor` that runs every job on a new thread of its own, for test work that blocks
/// its thread for long: the reads of Swift Testing's exit tests.
///
/// Swift's global executor on Linux has one thread per core and does not add threads when
/// they block. A full `swift test` starts hundreds of tests at once; while a few of them hold
/// those threads — `#expect(processExitsWith:)` reads its child's output and a back channel
/// with blocking reads until the child ends — every other test waits, and tests that wait on
/// the network or a clock see seconds pass for milliseconds of work. Under this executor's
/// preference, which child tasks inherit, the reads block threads of their own. (Work that
/// computes rather than blocks goes to ``ComputeExecutor``, which runs it one job at a time.)
/// Test code; the type is `package`, so the documentation check does not compile it:
///
/// ```
/// let result = await withTaskExecutorPreference(OwnThreadExecutor.shared) {
///   await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
///     try await scenario()
///   }
/// }
/// ```
///
/// Such work runs a few dozen jobs, so a thread each costs nothing that matters; the threads
/// are detached and end with their job.
package final class OwnThreadExecutor: TaskExecutor {
  /// The one instance; it holds no state.
  package static let shared = OwnThreadExecutor()

  private init() {}

  /// Runs `job` on a new thread, or on a global dispatch queue if no thread can be made.
  package func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    let executor = asUnownedTaskExecutor()
    if let thread = NativeThread.spawn(
      name: "courier-own-thread", { job.runSynchronously(on: executor) })
    {
      thread.detach()
    } else {
      DispatchQueue.global().async { job.runSynchronously(on: executor) }
    }
  }
}
