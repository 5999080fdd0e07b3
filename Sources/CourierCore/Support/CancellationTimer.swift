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
/// Arming costs a lock and a heap insertion — no task, no sleeping child, no dispatch
/// source — and the thread is not one of the cooperative pool's, so a pool kept
/// busy by blocking work cannot make a timeout late. The thread waits on a condition
/// variable until the earliest deadline (`CLOCK_MONOTONIC` on Linux), so it uses no CPU
/// while nothing is due, and starts with the first entry armed.
///
/// `@unchecked Sendable`: every mutable property is read and written only while `mutex` is
/// held; `mutex` and `condition` are allocated once and never freed (the shared instance
/// lives as long as the process).
package final class CancellationTimer: @unchecked Sendable {
  /// The process's timer thread.
  package static let shared = CancellationTimer()

  /// An armed token and the monotonic instant, in nanoseconds, at which it is cancelled.
  private struct Entry {
    var deadline: UInt64
    var token: RequestCancellation
  }

  private let mutex: UnsafeMutablePointer<pthread_mutex_t>
  private let condition: UnsafeMutablePointer<pthread_cond_t>
  /// The armed tokens, a binary min-heap on their deadlines.
  private var heap: [Entry] = []
  /// Each armed token's place in ``heap``, so that disarming finds it without a search. Keyed
  /// by identity: ``heap`` holds every armed token, so no other object can take its
  /// identifier while it is here.
  private var positions: [ObjectIdentifier: Int] = [:]
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
    if let index = positions[ObjectIdentifier(token)] { remove(at: index) }
    positions[ObjectIdentifier(token)] = heap.count
    heap.append(Entry(deadline: deadline, token: token))
    siftUp(heap.count - 1)
    if deadline < waitingUntil { pthread_cond_signal(condition) }
    pthread_mutex_unlock(mutex)
  }

  /// Removes `token`'s deadline if it has not fired yet; harmless when it has, or twice.
  package func disarm(_ token: RequestCancellation) {
    pthread_mutex_lock(mutex)
    if let index = positions[ObjectIdentifier(token)] { remove(at: index) }
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
      let deadline = first.deadline
      if deadline <= now {
        remove(at: 0)
        // Handlers run outside the lock: they may arm or disarm tokens.
        pthread_mutex_unlock(mutex)
        first.token.cancel()
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
    positions[ObjectIdentifier(heap[index].token)] = nil
    let last = heap.removeLast()
    guard index < heap.count else { return }
    heap[index] = last
    positions[ObjectIdentifier(last.token)] = index
    siftUp(siftDown(index))
  }

  /// Moves the entry at `start` up while it is due before its parent.
  private func siftUp(_ start: Int) {
    var child = start
    while child > 0 {
      let parent = (child - 1) / 2
      guard heap[child].deadline < heap[parent].deadline else { return }
      swapAt(child, parent)
      child = parent
    }
  }

  /// Moves the entry at `start` down while a child is due before it; returns where it ends.
  private func siftDown(_ start: Int) -> Int {
    var parent = start
    while true {
      let left = 2 * parent + 1
      guard left < heap.count else { return parent }
      let right = left + 1
      var smallest = left
      if right < heap.count, heap[right].deadline < heap[left].deadline {
        smallest = right
      }
      guard heap[smallest].deadline < heap[parent].deadline else { return parent }
      swapAt(parent, smallest)
      parent = smallest
    }
  }

  private func swapAt(_ a: Int, _ b: Int) {
    heap.swapAt(a, b)
    positions[ObjectIdentifier(heap[a].token)] = a
    positions[ObjectIdentifier(heap[b].token)] = b
  }
}
