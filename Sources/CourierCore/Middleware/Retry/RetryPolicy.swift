/// When and how ``RetryMiddleware`` tries a request again.
///
/// Every default is a public static constant with the reason for its value. Change what you
/// need on a copy:
///
/// ```swift
/// var policy = RetryPolicy.standard
/// policy.maximumAttempts = 5
/// policy.retryableStatuses.remove(500)   // this API's 500s are never transient
/// let retry = RetryMiddleware(policy: policy)
/// ```
public struct RetryPolicy: Sendable, Hashable {
  /// Attempts in total, the first included; 1 turns retrying off.
  public var maximumAttempts: Int
  /// The backoff before the first retry, before jitter.
  public var baseDelay: Duration
  /// How much the backoff grows with each retry.
  public var multiplier: Double
  /// The longest backoff, before jitter.
  public var maximumDelay: Duration
  /// The longest `Retry-After` the client honours; a server that asks for more fails the
  /// request at once, with the wait in ``CourierError/retryAfter``.
  public var maximumRetryAfter: Duration
  /// Statuses that are retried.
  public var retryableStatuses: Set<Int> {
    get { statuses.all }
    set { statuses = RetryableStatuses(newValue) }
  }
  /// ``retryableStatuses`` with a bit mask of the 4xx and 5xx ones beside it.
  private var statuses: RetryableStatuses
  /// Error kinds that are retried.
  public var retryableKinds: Set<CourierError.Kind>

  /// 3 attempts: one retry rarely suffices for a blip, and more than two retries mostly adds
  /// load to a backend that is down.
  public static let defaultMaximumAttempts = 3
  /// 0.5 s: long enough for a restarted connection or a failed-over backend, short enough
  /// for an interactive app.
  public static let defaultBaseDelay = Duration.milliseconds(500)
  /// 2: the classic exponential backoff (0.5 s, 1 s, 2 s, …).
  public static let defaultMultiplier = 2.0
  /// 30 s: no single wait longer than a user would tolerate.
  public static let defaultMaximumDelay = Duration.seconds(30)
  /// 60 s: a server asking for a longer pause is better reported to the caller than waited
  /// for in a request.
  public static let defaultMaximumRetryAfter = Duration.seconds(60)
  /// The statuses that say "try again":
  /// - 408 Request Timeout: the server gave up waiting for the request;
  /// - 429 Too Many Requests: rate limited, usually with `Retry-After`;
  /// - 500 Internal Server Error: often a transient fault on one instance;
  /// - 502 Bad Gateway and 504 Gateway Timeout: a proxy could not reach a healthy upstream;
  /// - 503 Service Unavailable: overloaded or restarting, usually with `Retry-After`.
  public static let defaultRetryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]
  /// The failures that say "try again":
  /// - ``CourierError/Kind/timedOut``: the attempt ran out of time;
  /// - ``CourierError/Kind/cannotConnect``: refused, typically during a restart;
  /// - ``CourierError/Kind/connectionLost``: a kept-alive connection the server had closed;
  /// - ``CourierError/Kind/cannotFindHost``: a DNS blip.
  public static let defaultRetryableKinds: Set<CourierError.Kind> = [
    .timedOut, .cannotConnect, .connectionLost, .cannotFindHost,
  ]

  /// Creates a policy; every parameter defaults to the constant of the same name.
  public init(
    maximumAttempts: Int = RetryPolicy.defaultMaximumAttempts,
    baseDelay: Duration = RetryPolicy.defaultBaseDelay,
    multiplier: Double = RetryPolicy.defaultMultiplier,
    maximumDelay: Duration = RetryPolicy.defaultMaximumDelay,
    maximumRetryAfter: Duration = RetryPolicy.defaultMaximumRetryAfter,
    retryableStatuses: Set<Int> = RetryPolicy.defaultRetryableStatuses,
    retryableKinds: Set<CourierError.Kind> = RetryPolicy.defaultRetryableKinds
  ) {
    self.maximumAttempts = max(1, maximumAttempts)
    self.baseDelay = max(.zero, baseDelay)
    self.multiplier = multiplier.isFinite ? max(1, multiplier) : 1
    self.maximumDelay = max(.zero, maximumDelay)
    self.maximumRetryAfter = max(.zero, maximumRetryAfter)
    self.statuses = RetryableStatuses(retryableStatuses)
    self.retryableKinds = retryableKinds
  }

  /// Whether `status` is one of ``retryableStatuses``. Checked on every response a retrying
  /// client receives: a mask test rather than the set's hashing, which runs cold code of the
  /// standard library.
  package func retries(status: Int) -> Bool {
    statuses.contains(status)
  }

  /// The defaults above.
  public static let standard = RetryPolicy()

  /// One attempt: no retry.
  public static let disabled = RetryPolicy(maximumAttempts: 1)

  /// The backoff before retry number `retry` (1 for the first), before jitter:
  /// `baseDelay × multiplier^(retry − 1)`, at most ``maximumDelay``.
  public func backoff(beforeRetry retry: Int) -> Duration {
    let base = Self.seconds(baseDelay)
    let exponent = Double(max(0, retry - 1))
    let seconds = min(Self.seconds(maximumDelay), base * pow2(multiplier, exponent))
    return .milliseconds(Int64(max(0, min(seconds, 86_400)) * 1000))
  }

  private func pow2(_ base: Double, _ exponent: Double) -> Double {
    var result = 1.0
    var step = 0.0
    while step < exponent && result < 1e12 {
      result *= base
      step += 1
    }
    return result
  }

  static func seconds(_ duration: Duration) -> Double { duration.inSeconds }
}
