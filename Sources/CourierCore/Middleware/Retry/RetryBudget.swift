import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Limits retries to a share of recent requests, so a failing backend is not hammered by
/// every client retrying every request at once.
///
/// Over a sliding window (default 10 s), the retries may number at most ``minimumRetries``
/// (default 10) plus ``ratio`` (default 20 %) of the requests that started: the sum, not the
/// larger of the two, so with the defaults 10 retries with no traffic, 30 over 100 requests.
/// The constant part lets a client with little traffic still retry; the share keeps a busy
/// client's retries in proportion. When the budget is spent, a request that would be retried
/// fails with its last error instead, and its debug description says why.
///
/// One budget is shared by every request of one ``RetryMiddleware``: by every client built
/// with that middleware.
public final class RetryBudget: Sendable {
  /// The share of requests that may be retried on top of ``minimumRetries``; default 0.2.
  public let ratio: Double
  /// Retries allowed per window whatever the traffic, before ``ratio``'s share; default 10.
  public let minimumRetries: Int
  /// The window; default 10 s, in one-second buckets.
  public let window: Duration

  private struct Bucket {
    var second: Int64 = -1
    var requests = 0
    var retries = 0
  }

  private let buckets: Mutex<[Bucket]>
  /// The time since the budget was made on an injected clock; `nil` on the system's clock.
  private let elapsed: (@Sendable () -> Duration)?

  /// Creates a budget.
  ///
  /// - Parameters:
  ///   - ratio: Retries per request allowed over the window, on top of `minimumRetries`;
  ///     default 0.2.
  ///   - minimumRetries: Retries allowed per window whatever the traffic; default 10.
  ///   - window: Default 10 s (at least 1 s).
  ///   - clock: The clock the window runs on; inject a test clock in tests.
  public init<C: Clock>(
    ratio: Double = 0.2, minimumRetries: Int = 10, window: Duration = .seconds(10),
    clock: C = ContinuousClock()
  ) where C.Duration == Duration {
    self.ratio = ratio.isFinite ? max(0, ratio) : 0
    self.minimumRetries = max(0, minimumRetries)
    self.window = max(.seconds(1), window)
    let count = Int(min(3600, max(1, self.window.clampedSeconds)))
    buckets = Mutex(Array(repeating: Bucket(), count: count))
    if C.self == ContinuousClock.self {
      elapsed = nil
    } else {
      let start = clock.now
      elapsed = { start.duration(to: clock.now) }
    }
  }

  /// The current second: from the injected clock, or on the system's clock from
  /// `CLOCK_MONOTONIC_COARSE`, which is read without a system call and is exact enough for
  /// buckets of a second. Every request reads it, and reading a generic clock through a
  /// closure goes through the runtime's value witnesses for `ContinuousClock.Instant` (a
  /// resilient type), a large share of `RetryMiddleware`'s own work.
  private func currentSecond() -> Int64 {
    if let elapsed { return elapsed().clampedSeconds }
    var time = timespec()
    #if canImport(Glibc) || canImport(Musl)
      clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
    #else
      clock_gettime(CLOCK_MONOTONIC, &time)
    #endif
    return Int64(time.tv_sec)
  }

  /// Counts a request's first attempt.
  public func recordRequest() {
    update { $0.requests += 1 }
  }

  /// Takes one retry from the budget; `false` when it is spent.
  public func tryRetry() -> Bool {
    let second = currentSecond()
    return buckets.withLock { buckets in
      var requests = 0
      var retries = 0
      for bucket in buckets where bucket.second > second - Int64(buckets.count) {
        requests += bucket.requests
        retries += bucket.retries
      }
      let allowed = Double(minimumRetries) + ratio * Double(requests)
      guard Double(retries) + 1 <= allowed else { return false }
      buckets[Self.index(&buckets, second: second)].retries += 1
      return true
    }
  }

  private func update(_ change: (inout Bucket) -> Void) {
    let second = currentSecond()
    buckets.withLock { buckets in
      change(&buckets[Self.index(&buckets, second: second)])
    }
  }

  /// The index of the bucket for `second`, emptied first when it still holds an older second.
  private static func index(_ buckets: inout [Bucket], second: Int64) -> Int {
    let index = Int(second % Int64(buckets.count))
    if buckets[index].second != second { buckets[index] = Bucket(second: second) }
    return index
  }
}
