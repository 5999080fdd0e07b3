#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Cancels ``RequestCancellation`` tokens when their deadlines pass, from one thread of its
/// own.
///
/// ``TimeoutMiddleware`` arms the attempt's token and disarms it when the attempt ends.
/// Arming costs a lock and a heap insertion — no allocation (the heap's bookkeeping lives in
/// the token, ``RequestCancellation/timerSlot``), no task, no sleeping child, no dispatch
/// source — and the thread is not one of the cooperative pool's, so a pool kept
/// busy by blocking work cannot make a timeout late. The thread waits on a condition
/// variable until the earliest deadline (`CLOCK_MONOTONIC` on Linux), so it uses no CPU
/// while nothing is due, and starts with the first entry armed.
///
/// `@unchecked Sendable`: every mutable property, the tokens' ``RequestCancellation/timerSlot``
/// included, is read and written only while `mutex` is held; `mutex` and `condition` are allocated once and never freed
/// (the shared instance lives as long as the process).
package final class CancellationTimer: @unchecked Sendable {
  /// The process's timer thread.
  package static let shared = CancellationTimer()

  /// An armed deadline; pass it to ``disarm(_:)`` when the attempt ends.
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>
  private let condition: UnsafeMutablePointer<pthread_cond_t>
  private var heap: [RequestCancellation] = []
  private var started = false
  /// The deadline the thread sleeps until: `.max` while it waits for a first entry, `0`
  /// while it is awake (it looks at the heap before it sleeps again). Arming signals the
  /// condition only for an earlier deadline than this one, so requests that arm and disarm
  /// the usual 30 s limit one after another never wake the thread (a wake-up is a futex call
  /// and a context switch, several microseconds).
  private var waitingUntil: UInt64 = .max

  private init() {
    mutex = .allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    pthread_mutex_init(mutex, nil)
    condition = .allocate(capacity: 1)
    condition.initialize(to: pthread_cond_t())
    #if canImport(Darwin)
      pthread_cond_init(condition, nil)
    #else
      var attributes = pthread_condattr_t()
      pthread_condattr_init(&attributes)
      pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
      pthread_cond_init(condition, &attributes)
      pthread_condattr_destroy(&attributes)
    #endif
  }

  /// Cancels `token` once `duration` has passed, unless it is disarmed first. A token is
  /// armed at most once at a time: arming an armed token moves its deadline.
  package func arm(after duration: Duration, cancelling token: RequestCancellation) {
    let deadline = Self.now() &+ Self.nanoseconds(duration)
    pthread_mutex_lock(mutex)
    if !started { started = startThread() }
    if token.timerSlot.index >= 0 { remove(at: token.timerSlot.index) }
    token.timerSlot = .init(deadline: deadline, index: heap.count)
    heap.append(token)
    siftUp(heap.count - 1)
    if deadline < waitingUntil { pthread_cond_signal(condition) }
    pthread_mutex_unlock(mutex)
  }

  /// Removes `token`'s deadline if it has not fired yet; harmless when it has, or twice.
  package func disarm(_ token: RequestCancellation) {
    pthread_mutex_lock(mutex)
    if token.timerSlot.index >= 0 { remove(at: token.timerSlot.index) }
    pthread_mutex_unlock(mutex)
  }

  package var armedCount: Int {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return heap.count
  }

  // MARK: The thread

  private func startThread() -> Bool {
    guard let thread = NativeThread.spawn(name: "CourierTimeouts", { [self] in run() }) else {
      return false
    }
    thread.detach()
    return true
  }

  private func run() {
    pthread_mutex_lock(mutex)
    while true {
      guard let first = heap.first else {
        waitingUntil = .max
        pthread_cond_wait(condition, mutex)
        waitingUntil = 0
        continue
      }
      let now = Self.now()
      let deadline = first.timerSlot.deadline
      if deadline <= now {
        remove(at: 0)
        // Handlers run outside the lock: they may arm or disarm tokens.
        pthread_mutex_unlock(mutex)
        first.cancel()
        pthread_mutex_lock(mutex)
        continue
      }
      waitingUntil = deadline
      wait(nanoseconds: deadline - now, until: deadline)
      waitingUntil = 0
    }
  }

  private func wait(nanoseconds: UInt64, until deadline: UInt64) {
    #if canImport(Darwin)
      var interval = timespec(
        tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
      pthread_cond_timedwait_relative_np(condition, mutex, &interval)
    #else
      var absolute = timespec(
        tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
      pthread_cond_timedwait(condition, mutex, &absolute)
    #endif
  }

  // MARK: Time

  /// Nanoseconds on the monotonic clock the condition variable waits on.
  private static func now() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
  }

  /// `duration` in nanoseconds, 0 for a negative one and at most about 292 years.
  private static func nanoseconds(_ duration: Duration) -> UInt64 {
    UInt64(max(0, duration.clampedNanoseconds))
  }

  // MARK: The heap (called with the lock held)

  private func remove(at index: Int) {
    heap[index].timerSlot.index = -1
    let last = heap.removeLast()
    guard index < heap.count else { return }
    heap[index] = last
    last.timerSlot.index = index
    siftDown(index)
    siftUp(last.timerSlot.index)
  }

  private func siftUp(_ start: Int) {
    var child = start
    while child > 0 {
      let parent = (child - 1) / 2
      guard heap[child].timerSlot.deadline < heap[parent].timerSlot.deadline else { return }
      swapAt(child, parent)
      child = parent
    }
  }

  private func siftDown(_ start: Int) {
    var parent = start
    while true {
      let left = 2 * parent + 1
      guard left < heap.count else { return }
      let right = left + 1
      var smallest = left
      if right < heap.count, heap[right].timerSlot.deadline < heap[left].timerSlot.deadline {
        smallest = right
      }
      guard heap[smallest].timerSlot.deadline < heap[parent].timerSlot.deadline else { return }
      swapAt(parent, smallest)
      parent = smallest
    }
  }

  private func swapAt(_ a: Int, _ b: Int) {
    heap.swapAt(a, b)
    heap[a].timerSlot.index = a
    heap[b].timerSlot.index = b
  }
}
