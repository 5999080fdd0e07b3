#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A value behind a `pthread_mutex_t`, for state that ThreadSanitizer must see ordered: what
/// CourierCurl's callers and its loop thread share.
///
/// `Synchronization.Mutex` would do the same job, but its contended unlock runs in
/// uninstrumented library code, so ThreadSanitizer misses the release and reports races
/// between accesses that are in fact ordered by the lock (`.ci/tsan-suppressions.txt`,
/// entry 1, silences those for `Mutex`). ThreadSanitizer intercepts
/// `pthread_mutex_lock`/`unlock`, so with this lock a report is a real one.
///
/// `@unchecked Sendable` because ``value`` is only ever read or written inside
/// ``withLock(_:)`` or ``withLockIfAvailable(_:)``, between the locking and the
/// `pthread_mutex_unlock` of the one mutex this object owns; the mutex itself lives at a stable heap address for the object's whole
/// life.
package final class PThreadLock<Value>: @unchecked Sendable {
  @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
  @usableFromInline var value: Value

  /// Creates the lock around `value`.
  package init(_ value: Value) {
    self.value = value
    mutex = .allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    pthread_mutex_init(mutex, nil)
  }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deinitialize(count: 1)
    mutex.deallocate()
  }

  /// Runs `body` with the value while holding the lock. `@inlinable`, so CourierCurl's calls
  /// from another module are specialized as they were when the lock lived there.
  @inlinable
  package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return try body(&value)
  }

  /// Runs `body` with the value while holding the lock, if the lock can be taken without
  /// waiting (`pthread_mutex_trylock`); `nil` when another thread holds it.
  @inlinable
  package func withLockIfAvailable<Result>(
    _ body: (inout Value) throws -> Result
  ) rethrows
    -> Result?
  {
    guard pthread_mutex_trylock(mutex) == 0 else { return nil }
    defer { pthread_mutex_unlock(mutex) }
    return try body(&value)
  }
}
