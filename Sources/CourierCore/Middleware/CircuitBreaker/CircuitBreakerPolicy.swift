/// When a ``CircuitBreakerMiddleware`` opens a host's circuit, how long it stays open, and how
/// many probes test the host before it closes again.
///
/// A circuit opens on either rule, whichever comes first:
///
/// - **a run**: ``consecutiveFailures`` attempts in a row failed, the first of them no longer
///   ago than ``window``;
/// - **a rate**: over the last ``window``, at least ``minimumRequests`` attempts ended and
///   ``failureRate`` or more of them failed.
///
/// ```swift
/// var policy = CircuitBreakerPolicy.standard
/// policy.consecutiveFailures = 3
/// policy.openDuration = .seconds(5)
/// let breaker = CircuitBreakerMiddleware(policy: policy)
/// ```
public struct CircuitBreakerPolicy: Sendable, Hashable {
  /// How far back both rules look.
  public var window: Duration
  /// The share of failed attempts, from 0 to 1, that opens the circuit once the window holds
  /// at least ``minimumRequests`` of them.
  public var failureRate: Double
  /// The fewest attempts in the window for the rate rule to apply, so that two failures out
  /// of three requests do not open it.
  public var minimumRequests: Int
  /// Failed attempts in a row that open the circuit; 0 turns the rule off.
  public var consecutiveFailures: Int
  /// How long an open circuit fails requests fast before it lets probes through.
  public var openDuration: Duration
  /// How many requests a half-open circuit lets through as probes: it closes when all of them
  /// succeeded and opens again at the first that fails; the requests beyond them fail fast
  /// meanwhile.
  public var probes: Int

  /// 30 s: long enough to hold a rate measured over some traffic, short enough that an old
  /// failure does not open the circuit.
  public static let defaultWindow = Duration.seconds(30)
  /// 0.5: a host failing half of what it is sent is failing, not blipping.
  public static let defaultFailureRate = 0.5
  /// 20: a rate over fewer attempts says little.
  public static let defaultMinimumRequests = 20
  /// 5: as in Envoy's outlier detection, enough to rule out a blip that a retry absorbs.
  public static let defaultConsecutiveFailures = 5
  /// 15 s: a restart or a failover usually takes this long; long enough to let a struggling
  /// host recover, short enough for a user to retry.
  public static let defaultOpenDuration = Duration.seconds(15)
  /// 3: one lucky answer does not close the circuit, and three requests cannot swamp a host
  /// that is only just back.
  public static let defaultProbes = 3

  /// Creates a policy; every parameter defaults to the constant of the same name.
  public init(
    window: Duration = CircuitBreakerPolicy.defaultWindow,
    failureRate: Double = CircuitBreakerPolicy.defaultFailureRate,
    minimumRequests: Int = CircuitBreakerPolicy.defaultMinimumRequests,
    consecutiveFailures: Int = CircuitBreakerPolicy.defaultConsecutiveFailures,
    openDuration: Duration = CircuitBreakerPolicy.defaultOpenDuration,
    probes: Int = CircuitBreakerPolicy.defaultProbes
  ) {
    self.window = window
    self.failureRate = failureRate
    self.minimumRequests = minimumRequests
    self.consecutiveFailures = consecutiveFailures
    self.openDuration = openDuration
    self.probes = probes
  }

  /// The defaults above.
  public static let standard = CircuitBreakerPolicy()
}
