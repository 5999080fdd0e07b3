import Foundation
import Synchronization

/// Stops sending requests to a host that keeps failing, for a while, so that a backend that
/// is down is not hammered and callers learn it at once instead of after a timeout.
///
/// Each host (`host:port`) has a circuit of its own:
///
/// - **closed** — requests go through; the outcome of each attempt is counted. The circuit
///   opens after a run of failures or a failure rate over a window
///   (``CircuitBreakerPolicy``).
/// - **open** — every request fails at once with kind ``CourierError/Kind/circuitOpen``,
///   without reaching the transport; its ``CourierError/debugMessage`` names the host, why
///   the circuit opened and when it lets a probe through. After
///   ``CircuitBreakerPolicy/openDuration`` it turns half-open.
/// - **half-open** — ``CircuitBreakerPolicy/probes`` requests go through as probes, the
///   others fail fast; the circuit closes when every probe succeeded and opens again at the
///   first that fails.
///
/// What counts as a failure is ``countsAsFailure``, by default ``isHostFailure(_:)``: the
/// transport's failures (cannot connect, timed out, connection lost, …) and the statuses 5xx
/// and 429; not a 4xx, a business or decoding error. A cancelled request, one ended by the
/// client's shutdown, one never sent (``CourierError/Kind/invalidRequest``), one failed by a
/// middleware's own error, and one that failed because the device is offline
/// (``CourierError/Kind/notReachable``) count neither way.
///
/// ## Where it goes
/// Inside ``RetryMiddleware``, so every attempt counts: a request that fails three times is
/// three failures. `RetryMiddleware` never retries ``CourierError/Kind/circuitOpen`` (it is
/// not among ``RetryPolicy/retryableKinds``), so a request the circuit stops ends at once
/// and takes nothing from the ``RetryBudget``. Outside ``TimeoutMiddleware``, so that a timed
/// out attempt counts, and outside `ReachabilityMiddleware`, so that an attempt failed by
/// an absent network is seen as `notReachable` and not held against the host. In
/// `Client.standard` that is its `circuitBreaker` slot, just inside retry:
///
/// ```swift
/// let client = Client.standard(baseURL: base) {
///   $0.circuitBreaker = CircuitBreakerMiddleware(onStateChange: { host, old, new in
///     print("circuit \(host): \(old) → \(new)")
///   })
/// }
/// ```
///
/// One breaker's circuits are shared by every client built with it. Its state is a locked
/// table; ``state(for:)-(String)`` reads it and `onStateChange` reports every change, in
/// order.
public final class CircuitBreakerMiddleware: Middleware, CustomStringConvertible {
  /// The state of one host's circuit.
  public enum State: String, Sendable, Hashable, CustomStringConvertible {
    /// Requests go through.
    case closed
    /// Requests fail fast with ``CourierError/Kind/circuitOpen``.
    case open
    /// A few probes go through; the rest fail fast.
    case halfOpen

    /// The name: `closed`, `open` or `halfOpen`.
    public var description: String { rawValue }
  }

  /// Called with the host (`host:port`), the old state and the new one, for every change.
  public typealias StateChange = @Sendable (_ host: String, _ old: State, _ new: State) -> Void

  /// When circuits open and close.
  public let policy: CircuitBreakerPolicy
  /// Whether an attempt's outcome — the response, or the error — is a failure of the host.
  public let countsAsFailure: @Sendable (Result<Response, CourierError>) -> Bool

  private let onStateChange: StateChange?
  /// The time since the breaker was made, on its clock.
  private let elapsed: @Sendable () -> Duration
  private let circuits = Mutex([String: HostCircuit]())
  /// Held while a change of state is made and reported, so that reports come in order; taken
  /// before `circuits`, and only when there is an `onStateChange`.
  private let reporting = Mutex(())

  /// The kinds that say nothing about the host: the request was cancelled, ended by the
  /// client's shutdown, stopped by another breaker or by a middleware's own error, never
  /// sent (invalid), or the device is offline.
  static let neutralKinds: Set<CourierError.Kind> = [
    .cancelled, .shutDown, .circuitOpen, .notReachable, .invalidRequest, .middleware,
  ]

  /// Creates a breaker.
  ///
  /// - Parameters:
  ///   - policy: Default ``CircuitBreakerPolicy/standard`` (5 failures in a row or 50 % of
  ///     at least 20 attempts within 30 s; open 15 s; 3 probes).
  ///   - countsAsFailure: Default ``isHostFailure(_:)``.
  ///   - clock: What the window and the open time run on; inject a test clock in tests.
  ///   - onStateChange: Called outside the table's lock for every change of a circuit's
  ///     state, in order; keep it short (it holds up other changes), for example setting a
  ///     gauge.
  public init<C: Clock>(
    policy: CircuitBreakerPolicy = .standard,
    countsAsFailure: @escaping @Sendable (Result<Response, CourierError>) -> Bool =
      CircuitBreakerMiddleware.isHostFailure,
    clock: C = ContinuousClock(),
    onStateChange: StateChange? = nil
  ) where C.Duration == Duration {
    var policy = policy
    policy.window = max(.milliseconds(10), policy.window)
    policy.failureRate = policy.failureRate.isFinite ? min(1, max(0.01, policy.failureRate)) : 1
    policy.minimumRequests = max(1, policy.minimumRequests)
    policy.consecutiveFailures = max(0, policy.consecutiveFailures)
    policy.openDuration = max(.zero, policy.openDuration)
    policy.probes = max(1, policy.probes)
    self.policy = policy
    self.countsAsFailure = countsAsFailure
    self.onStateChange = onStateChange
    let start = clock.now
    elapsed = { start.duration(to: clock.now) }
  }

  /// Whether `outcome` is a failure of the host: an error of a transport kind
  /// (``CourierError/Kind/cannotConnect``, ``CourierError/Kind/cannotFindHost``,
  /// ``CourierError/Kind/timedOut``, ``CourierError/Kind/connectionLost``,
  /// ``CourierError/Kind/badResponse``, ``CourierError/Kind/transport``), or a status 5xx or
  /// 429 (`Too Many Requests`: the host asks for less load), as a response or as an
  /// ``CourierError/Kind/httpStatus`` error.
  ///
  /// Not a failure: any other status (a 4xx is the caller's mistake, answered by a healthy
  /// host), business and decoding errors, a TLS failure (a setting to fix, which waiting does
  /// not mend), a body over a limit.
  @Sendable public static func isHostFailure(_ outcome: Result<Response, CourierError>) -> Bool {
    let status: Int?
    switch outcome {
    case .success(let response):
      status = response.status
    case .failure(let error):
      if hostFailureKinds.contains(error.kind) { return true }
      status = error.kind == .httpStatus ? error.status : nil
    }
    guard let status else { return false }
    return status >= 500 || status == 429
  }

  static let hostFailureKinds: Set<CourierError.Kind> = [
    .cannotConnect, .cannotFindHost, .timedOut, .connectionLost, .badResponse, .transport,
  ]

  /// The circuit's key for `url`: its host, lowercased and without the trailing dot of a
  /// fully qualified name (`api.example.com.` is the same server), and its port (when the
  /// URL names none, 443 for `https` and `wss`, else 80): `api.example.com:443`,
  /// `[::1]:8080`. Control characters in a host given percent-encoded stay percent-encoded.
  public static func hostKey(for url: URL) -> String {
    var host = HostText.host(of: url, lowercased: true) ?? ""
    if host.count > 1, host.hasSuffix(".") { host.removeLast() }
    let port = url.port ?? HostText.defaultPort(ofScheme: url.scheme) ?? 80
    return "\(HostText.bracketed(host)):\(port)"
  }

  /// The state of the circuit of `host` (`host:port`, as ``hostKey(for:)`` makes it):
  /// closed for a host not seen yet. An open circuit whose time is up reads `open` until a
  /// request comes and turns it half-open.
  public func state(for host: String) -> State {
    circuits.withLock { $0[host]?.state ?? .closed }
  }

  /// The state of the circuit for `url`'s host and port.
  public func state(for url: URL) -> State {
    state(for: Self.hostKey(for: url))
  }

  /// The state of every host seen so far, by `host:port`.
  public var states: [String: State] {
    circuits.withLock { $0.mapValues(\.state) }
  }

  /// Sends the request unless its host's circuit is open, and counts how the attempt ended.
  nonisolated(nonsending) public func intercept(
    _ request: Request, next: Next
  ) async throws -> Response {
    let host = Self.hostKey(for: request.url)
    let admitted = changing(host) { circuit, now, changes in
      circuit.admit(now: now, policy: policy, changes: &changes)
    }
    guard let ticket = admitted else { throw refusal(of: request, host: host) }
    let response: Response
    do {
      response = try await next(request)
    } catch {
      let failure = CourierError(error, request: request)
      let outcome: HostCircuit.Outcome =
        Self.neutralKinds.contains(failure.kind)
        ? .neutral
        : countsAsFailure(.failure(failure)) ? .failure(Self.describe(failure)) : .success
      record(outcome, host: host, ticket: ticket)
      throw error
    }
    let failed = countsAsFailure(.success(response))
    record(failed ? .failure("status \(response.status)") : .success, host: host, ticket: ticket)
    return response
  }

  /// `CircuitBreakerMiddleware(5 failures in a row or 50 % of 20 within 30 s; open 15 s;
  /// 3 probes)`.
  public var description: String {
    let run =
      policy.consecutiveFailures > 0 ? "\(policy.consecutiveFailures) failures in a row or " : ""
    return "CircuitBreakerMiddleware(\(run)"
      + "\(DescriptionText.number(policy.failureRate * 100)) % of \(policy.minimumRequests) "
      + "within \(DescriptionText.duration(policy.window)); "
      + "open \(DescriptionText.duration(policy.openDuration)); \(policy.probes) probes)"
  }

  private func record(_ outcome: HostCircuit.Outcome, host: String, ticket: HostCircuit.Ticket) {
    changing(host) { circuit, now, changes in
      circuit.record(outcome, of: ticket, now: now, policy: policy, changes: &changes)
    }
  }

  /// Runs `change` on `host`'s circuit under the lock, then reports the changes of state it
  /// made, in order.
  private func changing<T>(
    _ host: String,
    _ change: (inout HostCircuit, Duration, inout [(State, State)]) -> T
  ) -> T {
    let now = elapsed()
    var changes: [(State, State)] = []
    guard let onStateChange else {
      return circuits.withLock { change(&$0[host, default: HostCircuit()], now, &changes) }
    }
    return reporting.withLock { _ in
      let result = circuits.withLock { change(&$0[host, default: HostCircuit()], now, &changes) }
      for (old, new) in changes { onStateChange(host, old, new) }
      return result
    }
  }

  /// The error of a request the circuit of `host` stopped.
  private func refusal(of request: Request, host: String) -> CourierError {
    let now = elapsed()
    let (state, probeAt, because) = circuits.withLock { circuits in
      let circuit = circuits[host] ?? HostCircuit()
      return (circuit.state, circuit.probeAt, circuit.openedBecause)
    }
    let message: String
    if state == .open {
      let wait = DescriptionText.duration(max(.zero, probeAt - now))
      message =
        "the circuit for \(host) is open (\(because)); the request was not sent; "
        + "the next probe may go in \(wait)"
    } else {
      message =
        "the circuit for \(host) is half-open and its \(policy.probes) probe(s) are under "
        + "way (it opened: \(because)); the request was not sent"
    }
    return CourierError(
      kind: .circuitOpen, debugMessage: message, request: request,
      stage: "middleware CircuitBreakerMiddleware")
  }

  private static func describe(_ error: CourierError) -> String {
    if error.kind == .httpStatus, let status = error.status { return "status \(status)" }
    return "\(error.kind)"
  }
}
