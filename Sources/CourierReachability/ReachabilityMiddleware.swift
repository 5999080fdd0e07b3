import CourierCore
import Foundation

/// Tells a request that the machine is offline: by default it names the cause of a failure
/// (``OfflinePolicy/inform``); asked to, it refuses or holds back requests to destinations
/// the system has no route to (``OfflinePolicy/failFast``, ``OfflinePolicy/wait(upTo:)``).
///
/// A ``PathMonitor``'s status says whether a *default* path leaves the machine. That is a
/// heuristic, and on real networks it is wrong often enough that deciding from it whether to
/// send causes the outage it means to report: a subnet without a default route (an isolated
/// service network, a VPC subnet without a gateway), policy routing, a split-tunnel VPN, a
/// network namespace, a proxy, or a test over a stub in an offline sandbox. Alamofire's
/// guide gives the same advice: do not use reachability to decide whether to send a request.
/// So the default sends every request and only explains the failures the status explains.
///
/// - **Inform** (``OfflinePolicy/inform``, the default, and `Client.standard`'s): every
///   request is sent. When an attempt fails in a way an absent network explains — kind
///   `cannotFindHost`, `cannotConnect`, `connectionLost`, or `timedOut` before the connection
///   opened (see ``isExplainedByAbsentNetwork(_:)``) — while the monitor says unsatisfied and
///   the destination is not known to be routable (``PathMonitor/route(to:)``; for a host
///   name, whose address is not known, while the reason is more than "no default route":
///   interfaces that are up still reach their own networks without one), the error
///   becomes kind ``CourierError/Kind/notReachable``, whose reason reads "You seem to be
///   offline. Check your network connection." (您连接的网络不正常，请检查您的网络连接 in
///   `zh-Hans`), with the attempt's error as its ``CourierError/underlying``. Being
///   `notReachable`, it is not retried: attempts are not spent on a missing network. A
///   success, an HTTP status, a business error, a cancellation, and a failure without a
///   network stack's error underneath (a `StubTransport` or `ReplayTransport` answer) are
///   never touched. Costs nothing while requests succeed.
/// - **Fail fast** (``OfflinePolicy/failFast``): while the path is unsatisfied, a request to
///   an IP address the system has no route to fails at once with `notReachable`, nothing
///   sent, instead of a connect timeout later. A request to a routable address is sent; one
///   whose route is unknown (a monitor that cannot look routes up, as on Apple platforms) is
///   refused on the status alone. A host name is never refused on the status: it is sent, and
///   a failure is reported as in inform. For an app on a device, whose user should hear
///   "offline" at once and where the platform's status is trustworthy.
/// - **Wait** (``OfflinePolicy/wait(upTo:)``, default bound 10 s): where fail fast would
///   refuse, the attempt waits for the monitor's next satisfied status, or for a change of
///   status after which the system has a route to the address again (a link back on a
///   network without a default route) — an event, not polling — then goes out; an attempt
///   that failed before reaching the server (cannot find host, cannot connect, timed out
///   before connecting: a host name's failure while offline) waits the same way and is then
///   tried once more, if its body can be sent again; a connection lost is reported as in
///   inform. The wait ends with `notReachable` at the bound or at the request's ``Deadline``
///   (``DeadlineAttribute``), whichever comes first, and at once with kind `cancelled` when
///   the task or the request is cancelled (`Client.cancelAll()`). The `waitsForConnectivity`
///   that URLSession has on Apple platforms and Linux lacks; for a batch job or a sync that
///   should pause while the link is down.
/// - **Probe** (``HostProbe``, off by default): a TCP connect to the request's host and port
///   before each attempt, for "interface up, host unreachable"; a failure is `notReachable`.
///
/// Requests to this machine (`localhost`, 127.0.0.0/8, `::1`, and `0.0.0.0` or `::`, which
/// connect to loopback; in any spelling libcurl reads, as `127.1`) are never refused, held
/// back or reported offline: they never leave the machine. The probe, when set, still runs
/// for them.
///
/// While the status is satisfied, fail fast and wait read it once per attempt and do nothing
/// else; inform reads nothing until an attempt fails.
///
/// Place it inside ``RetryMiddleware`` and outside ``TimeoutMiddleware``: checked on every
/// attempt, and a wait for the network does not use up an attempt's timeout.
///
/// ```swift
/// let monitor = try SystemPathMonitor()
/// let client = Client(
///   baseURL: base, transport: URLSessionTransport(),
///   middleware: [
///     RetryMiddleware(),
///     ReachabilityMiddleware(monitor: monitor, whenOffline: .wait(upTo: .seconds(5))),
///     TimeoutMiddleware(),
///   ])
/// print(client)
/// ```
public struct ReachabilityMiddleware: Middleware, CustomStringConvertible {
  /// What to do with an attempt while the path is unsatisfied.
  public struct OfflinePolicy: Sendable, Hashable {
    enum Mode: Sendable, Hashable {
      case inform
      case failFast
      case wait(Duration)
    }

    let mode: Mode

    /// How long ``wait(upTo:)`` waits for the path; `nil` for ``inform`` and ``failFast``.
    public var maximumWait: Duration? {
      if case .wait(let bound) = mode { return bound }
      return nil
    }

    /// Send every request; report a failure that an absent network explains as
    /// ``CourierError/Kind/notReachable`` (the default: see ``ReachabilityMiddleware``).
    public static let inform = OfflinePolicy(mode: .inform)

    /// Fail at once with ``CourierError/Kind/notReachable`` for a destination without a
    /// route; send to the rest, reporting as ``inform`` does.
    public static let failFast = OfflinePolicy(mode: .failFast)

    /// Wait up to `bound` (default ``ReachabilityMiddleware/defaultMaximumWait``, 10 s) for
    /// the path to come back before sending to a destination without a route, or before
    /// trying an attempt once more that failed offline before reaching the server (a host
    /// name's); `notReachable` if it does not come back. A zero or negative bound fails at
    /// once.
    public static func wait(
      upTo bound: Duration = ReachabilityMiddleware.defaultMaximumWait
    )
      -> OfflinePolicy
    {
      OfflinePolicy(mode: .wait(bound))
    }
  }

  /// 10 s: long enough to ride out a Wi-Fi roam, a DHCP renewal or a tunnel entrance (a few
  /// seconds each), short enough that a user looking at a spinner gets an answer; and well
  /// under ``TimeoutMiddleware``'s 60 s overall deadline, which caps the wait anyway.
  public static let defaultMaximumWait = Duration.seconds(10)

  /// The monitor whose status is checked.
  public let monitor: any PathMonitor
  /// What happens while the path is unsatisfied; default ``OfflinePolicy/inform``.
  public var whenOffline: OfflinePolicy
  /// The host probe, or `nil` (the default) for none.
  public var probe: HostProbe?
  private let clock: any Clock<Duration>

  /// Creates the middleware.
  ///
  /// - Parameters:
  ///   - monitor: Usually one ``SystemPathMonitor`` shared by the process; a
  ///     `FakePathMonitor` (from `CourierTesting`) in tests.
  ///   - whenOffline: Default ``OfflinePolicy/inform``: every request is sent, and a failure
  ///     an absent network explains is reported as offline — safe wherever the status is
  ///     wrong. Choose ``OfflinePolicy/failFast`` for an app on a device that should say
  ///     "offline" at once, ``OfflinePolicy/wait(upTo:)`` for background work that should
  ///     pause while the link is down.
  ///   - probe: Default `nil` (off): it costs a connection per attempt.
  ///   - clock: What the wait's bound is measured on; inject a test clock in tests.
  public init(
    monitor: any PathMonitor, whenOffline: OfflinePolicy = .inform, probe: HostProbe? = nil,
    clock: any Clock<Duration> = ContinuousClock()
  ) {
    self.monitor = monitor
    self.whenOffline = whenOffline
    self.probe = probe
    self.clock = clock
  }

  /// `ReachabilityMiddleware(inform; probe: off)`, `ReachabilityMiddleware(fail fast; probe:
  /// off)` or `ReachabilityMiddleware(wait up to 10 s; probe: 1 s)`.
  public var description: String {
    let offline =
      switch whenOffline.mode {
      case .inform: "inform"
      case .failFast: "fail fast"
      case .wait(let bound): "wait up to \(Self.format(bound))"
      }
    let probing = probe.map { Self.format($0.timeout) } ?? "off"
    return "ReachabilityMiddleware(\(offline); probe: \(probing))"
  }

  /// Sends the attempt — once the path allows it under fail fast and wait, and the probe, if
  /// any, connected — and reports a failure an absent network explains as `notReachable`.
  nonisolated(nonsending) public func intercept(
    _ request: Request, next: Next
  ) async throws
    -> Response
  {
    if whenOffline.mode != .inform, case .unsatisfied(let reason) = monitor.status {
      try await holdBack(request, reason: reason)
    }
    if let probe, let failure = await probe.check(request.url) {
      if RequestCancellation.isCancelled { throw cancelled(request, "during the host probe") }
      throw notReachable(request, failure)
    }
    do {
      return try await next(request)
    } catch let failure as CourierError {
      return try await afterFailure(failure, of: request, next: next)
    }
  }

  /// After an attempt failed with `failure`: reports a failure the path explains, and under
  /// wait tries once more when the path is back. An async function of its own, so that its
  /// frame is allocated only after a failure, not for every request in flight. On the
  /// caller's executor, as ``intercept(_:next:)`` is: no hop before the second attempt.
  @inline(never)
  nonisolated(nonsending) private func afterFailure(
    _ failure: CourierError, of request: Request, next: Next
  ) async throws -> Response {
    guard let offline = offlineCause(of: failure, request) else { throw failure }
    // Tried again only when nothing reached the server (a connection lost may have carried
    // the request) and the body can be sent twice.
    guard case .wait(let bound) = whenOffline.mode, failure.kind != .connectionLost,
      request.body.isReplayable
    else { throw reported(failure, request, offline) }
    // The wait and the second try run under the deadline the attempt carried back (set by
    // a TimeoutMiddleware inside), so they do not outlast the logical request.
    var again = request
    if let deadline = failure.request?.attributes[DeadlineAttribute.self] {
      again.attributes[DeadlineAttribute.self] = deadline
    }
    try await waitForPath(
      again, maximumWait: bound, reason: offline.reason,
      destination: again.url.host.flatMap(RouteDestination.init), after: failure)
    do {
      return try await next(again)
    } catch let second as CourierError {
      guard let offline = offlineCause(of: second, again) else { throw second }
      throw reported(second, again, offline)
    }
  }

  /// Under fail fast and wait, while the path is unsatisfied: returns when `request` may go
  /// (loopback, a host name, a routable address), else fails or waits as the policy says.
  private func holdBack(
    _ request: Request, reason: PathStatus.UnsatisfiedReason
  ) async throws(CourierError) {
    guard let host = request.url.host, !Self.isLoopback(host),
      let destination = RouteDestination(host)
    else { return }
    let route = monitor.route(to: destination)
    if route == .routable { return }
    let why =
      route == .unroutable
      ? "the path is unsatisfied (\(reason)) and there is no route to \(destination)"
      : "the path is unsatisfied (\(reason))"
    guard let maximumWait = whenOffline.maximumWait else {
      throw notReachable(request, "\(why); failing fast")
    }
    try await waitForPath(
      request, maximumWait: maximumWait, reason: reason, destination: destination)
  }

  /// Why `failure`, an attempt's error for `request`, is the network's absence: the kind and
  /// detail say so (``isExplainedByAbsentNetwork(_:)``), the path is unsatisfied now, and the
  /// destination is not loopback and not known to be routable — for a host name, whose
  /// address is not known, the status must say more than "no default route"
  /// (``explainsNameFailures(_:)``). `nil` when any of that fails.
  private func offlineCause(
    of failure: CourierError, _ request: Request
  ) -> (reason: PathStatus.UnsatisfiedReason, route: String)? {
    guard Self.isExplainedByAbsentNetwork(failure),
      case .unsatisfied(let reason) = monitor.status
    else { return nil }
    let host = request.url.host ?? ""
    guard !Self.isLoopback(host) else { return nil }
    guard let destination = RouteDestination(host) else {
      return Self.explainsNameFailures(reason) ? (reason, "") : nil
    }
    switch monitor.route(to: destination) {
    case .routable: return nil
    case .unroutable: return (reason, " and there is no route to \(destination)")
    case .unknown: return (reason, "")
    }
  }

  /// `failure` reported as the network's absence: kind `notReachable`, `failure` underneath,
  /// the same request (with what the attempt added: its deadline) and attempts.
  private func reported(
    _ failure: CourierError, _ request: Request,
    _ offline: (reason: PathStatus.UnsatisfiedReason, route: String)
  ) -> CourierError {
    CourierError(
      kind: .notReachable,
      debugMessage:
        "the attempt failed with \(failure.kind) while the path is unsatisfied "
        + "(\(offline.reason))\(offline.route)",
      underlying: failure, request: failure.request ?? request, attempts: failure.attempts,
      stage: "reachability")
  }

  /// Whether an unsatisfied status with `reason` explains why a host name could not be
  /// reached. Not ``PathStatus/UnsatisfiedReason/noDefaultRoute``: interfaces are then up and
  /// addressed, and the networks they reach can be reached without a default route — a name
  /// on one of them (a service network's DNS, `/etc/hosts`) that fails, fails for its own
  /// reasons: a server restarting, a name that does not exist.
  static func explainsNameFailures(_ reason: PathStatus.UnsatisfiedReason) -> Bool {
    reason != .noDefaultRoute
  }

  /// Whether `error` is a failure that an absent network explains, as a network stack
  /// reports it: kind `cannotFindHost`, `cannotConnect` or `connectionLost`, or `timedOut`
  /// when the stack's words say the connection never opened (libcurl's "Resolving timed out
  /// after", "Connection timed out after", "Failed to connect to", which `CurlTransport` and
  /// URLSession on Linux pass on). A timeout that does not say — Courier's own timer,
  /// URLSession on Apple platforms — may have come after the server had the request, and is
  /// left as it is. The error must come from the transport (``CourierError/stage``
  /// `"transport"`) and carry the stack's own error underneath (``CourierError/underlying``):
  /// a replayed failure, which has none, and a `StubTransport`'s scripted one (stage `"stub"`,
  /// whatever it carries underneath) are never the network's.
  public static func isExplainedByAbsentNetwork(_ error: CourierError) -> Bool {
    guard error.stage == "transport", let underlying = error.underlying,
      !(underlying is CourierError)
    else { return false }
    switch error.kind {
    case .cannotFindHost, .cannotConnect, .connectionLost:
      return true
    case .timedOut:
      let words = detail(of: underlying)
      return words.contains("Resolving timed out after")
        || words.contains("Connection timed out after") || words.contains("Failed to connect to")
    default:
      return false
    }
  }

  /// An underlying error's words: a Foundation error's message (URLSession on Linux puts
  /// libcurl's there), a Swift error's description (`CurlError`'s holds libcurl's).
  private static func detail(of error: any Error) -> String {
    let isFoundation =
      error is URLError || error is CocoaError || type(of: error) is NSError.Type
    return isFoundation ? (error as NSError).localizedDescription : String(describing: error)
  }

  private enum WaitOutcome: Sendable {
    case satisfied
    case monitorEnded
    case boundReached
  }

  /// Waits for a satisfied status from the monitor's updates — or, for an IP `destination`, a
  /// change of status after which the system has a route to it, and for a host name (`nil`)
  /// one to a status that no longer explains its failure (``explainsNameFailures(_:)``): a
  /// link back on a network without a default route, whose status stays unsatisfied —
  /// bounded by `maximumWait` and the request's deadline; throws `notReachable` (with
  /// `failure`, the attempt that failed before the wait, underneath) or `cancelled`.
  private func waitForPath(
    _ request: Request, maximumWait: Duration, reason: PathStatus.UnsatisfiedReason,
    destination: RouteDestination?, after failure: CourierError? = nil
  ) async throws(CourierError) {
    let (limit, bound) = Self.waitBound(request, maximumWait: maximumWait)
    guard limit > .zero else {
      throw notReachable(
        request, "the path is unsatisfied (\(reason)); \(bound) left no time", after: failure)
    }
    let monitor = self.monitor
    let clock = self.clock
    // Its own task, so that a RequestCancellation (Client.cancelAll()) can cancel it as well
    // as the caller's task; the hop is paid only while offline.
    let waiter = Task { () async throws -> WaitOutcome in
      try await Self.firstOutcome(
        monitor: monitor, clock: clock, limit: limit, destination: destination)
    }
    let outcome: WaitOutcome?
    do {
      outcome = try await RequestCancellation.withCancellationHandler {
        try await waiter.value
      } onCancel: {
        waiter.cancel()
      }
    } catch {
      outcome = nil
    }
    if RequestCancellation.isCancelled || outcome == nil {
      throw cancelled(request, "while waiting for the network path")
    }
    switch outcome {
    case .satisfied?: return
    case .monitorEnded?:
      throw notReachable(
        request, "the path is unsatisfied (\(reason)) and the monitor stopped", after: failure)
    case .boundReached?, nil:
      throw notReachable(
        request, "the path stayed unsatisfied (\(reason)) until \(bound) ran out",
        after: failure)
    }
  }

  /// The shorter of `maximumWait` and the time left before the request's deadline, named.
  private static func waitBound(
    _ request: Request, maximumWait: Duration
  ) -> (limit: Duration, bound: String) {
    guard let deadline = request.attributes[DeadlineAttribute.self],
      deadline.remaining < maximumWait
    else { return (maximumWait, "the wait of \(format(maximumWait))") }
    return (deadline.remaining, "the request's deadline (\(format(deadline.limit)) overall)")
  }

  /// What ends the wait first: a status that lets the request go, the monitor's end, `limit`.
  private static func firstOutcome(
    monitor: any PathMonitor, clock: any Clock<Duration>, limit: Duration,
    destination: RouteDestination?
  ) async throws -> WaitOutcome {
    try await withThrowingTaskGroup(of: WaitOutcome.self) { group in
      group.addTask {
        // The stream starts with the current status, so a change between the check in
        // intercept and this subscription is not missed.
        for await status in monitor.updates() {
          guard case .unsatisfied(let reason) = status else { return .satisfied }
          if let destination {
            if monitor.route(to: destination) == .routable { return .satisfied }
          } else if !Self.explainsNameFailures(reason) {
            return .satisfied
          }
        }
        return .monitorEnded
      }
      group.addTask {
        try await clock.sleep(for: limit)
        return .boundReached
      }
      defer { group.cancelAll() }
      return try await group.next() ?? .monitorEnded
    }
  }

  private func notReachable(
    _ request: Request, _ detail: String, after failure: CourierError? = nil
  ) -> CourierError {
    CourierError(
      kind: .notReachable,
      debugMessage: failure.map { "the attempt failed with \($0.kind); \(detail)" } ?? detail,
      underlying: failure, request: request, attempts: failure?.attempts ?? 0,
      stage: "reachability")
  }

  private func cancelled(_ request: Request, _ detail: String) -> CourierError {
    CourierError(
      kind: .cancelled, debugMessage: "cancelled \(detail)", request: request,
      stage: "reachability")
  }

  /// `10 s`, `1.5 s`, `250 ms`.
  static func format(_ duration: Duration) -> String { DescriptionText.duration(duration) }

  /// Whether `host` is this machine (`localhost`, 127.0.0.0/8, `::1`, or the unspecified
  /// `0.0.0.0` or `::`, which connect to loopback; an address in any spelling libcurl reads,
  /// as `127.1` or `[0:0:0:0:0:0:0:1]`): reachable whatever the interfaces and routes say, so
  /// the path's status does not apply — an offline machine still reaches a server on
  /// loopback, as the demo's embedded one.
  static func isLoopback(_ host: String?) -> Bool {
    guard let host = host?.lowercased() else { return false }
    if host == "localhost" || host.hasSuffix(".localhost") { return true }
    return RouteDestination(host)?.isThisMachine ?? false
  }
}
