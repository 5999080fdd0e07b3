import CourierCore
import Foundation

/// Checks the network path before every attempt: while the ``PathMonitor`` says the path is
/// unsatisfied, it fails at once with ``CourierError/Kind/notReachable`` (the default) or
/// waits for the path to come back and then sends — the `waitsForConnectivity` that
/// URLSession has on Apple platforms and Linux lacks.
///
/// - **Fail fast** (``OfflinePolicy/failFast``, the default): nothing is sent, and the
///   request fails in microseconds with kind `notReachable`, whose reason reads "You seem to
///   be offline. Check your network connection." (您连接的网络不正常，请检查您的网络连接 in
///   `zh-Hans`), instead of a connect timeout many seconds later.
/// - **Wait** (``OfflinePolicy/wait(upTo:)``, default bound 10 s): the attempt waits for the
///   monitor's next satisfied status — an event, not polling — then goes out. The wait ends
///   with `notReachable` at the bound or at the request's ``Deadline`` (``DeadlineAttribute``),
///   whichever comes first, and at once with kind `cancelled` when the task or the request is
///   cancelled (`Client.cancelAll()`).
/// - **Probe** (``HostProbe``, off by default): a TCP connect to the request's host and port
///   before each attempt, for "interface up, host unreachable"; a failure is `notReachable`.
///
/// Requests to loopback (`localhost`, 127.0.0.0/8, `::1`) skip the path check: they never
/// leave the machine. The probe, when set, still runs for them.
///
/// Place it inside ``RetryMiddleware`` and outside ``TimeoutMiddleware``: checked before every
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
    /// How long to wait for the path, or `nil` to fail at once.
    public let maximumWait: Duration?

    /// Fail at once with ``CourierError/Kind/notReachable``.
    public static let failFast = OfflinePolicy(maximumWait: nil)

    /// Wait up to `bound` (default ``ReachabilityMiddleware/defaultMaximumWait``, 10 s) for
    /// the path to come back, then send; `notReachable` if it does not. A zero or negative
    /// bound fails at once.
    public static func wait(
      upTo bound: Duration = ReachabilityMiddleware.defaultMaximumWait
    )
      -> OfflinePolicy
    {
      OfflinePolicy(maximumWait: bound)
    }
  }

  /// 10 s: long enough to ride out a Wi-Fi roam, a DHCP renewal or a tunnel entrance (a few
  /// seconds each), short enough that a user looking at a spinner gets an answer; and well
  /// under ``TimeoutMiddleware``'s 60 s overall deadline, which caps the wait anyway.
  public static let defaultMaximumWait = Duration.seconds(10)

  /// The monitor whose status is checked.
  public let monitor: any PathMonitor
  /// What happens while the path is unsatisfied; default ``OfflinePolicy/failFast``.
  public var whenOffline: OfflinePolicy
  /// The host probe, or `nil` (the default) for none.
  public var probe: HostProbe?
  private let clock: any Clock<Duration>

  /// Creates the middleware.
  ///
  /// - Parameters:
  ///   - monitor: Usually one ``SystemPathMonitor`` shared by the process; a
  ///     `FakePathMonitor` (from `CourierTesting`) in tests.
  ///   - whenOffline: Default ``OfflinePolicy/failFast``: offline is reported at once rather
  ///     than hidden behind a spinner; choose ``OfflinePolicy/wait(upTo:)`` for background
  ///     work that should go out as soon as it can.
  ///   - probe: Default `nil` (off): it costs a connection per attempt.
  ///   - clock: What the wait's bound is measured on; inject a test clock in tests.
  public init(
    monitor: any PathMonitor, whenOffline: OfflinePolicy = .failFast, probe: HostProbe? = nil,
    clock: any Clock<Duration> = ContinuousClock()
  ) {
    self.monitor = monitor
    self.whenOffline = whenOffline
    self.probe = probe
    self.clock = clock
  }

  /// `ReachabilityMiddleware(fail fast; probe: off)` or
  /// `ReachabilityMiddleware(wait up to 10 s; probe: 1 s)`.
  public var description: String {
    let offline = whenOffline.maximumWait.map { "wait up to \(Self.format($0))" } ?? "fail fast"
    let probing = probe.map { Self.format($0.timeout) } ?? "off"
    return "ReachabilityMiddleware(\(offline); probe: \(probing))"
  }

  /// Sends the attempt once the path is satisfied (and the probe, if any, connected).
  nonisolated(nonsending) public func intercept(
    _ request: Request, next: Next
  ) async throws
    -> Response
  {
    if case .unsatisfied(let reason) = monitor.status, !Self.isLoopback(request.url.host) {
      guard let maximumWait = whenOffline.maximumWait else {
        throw notReachable(request, "the path is unsatisfied (\(reason)); failing fast")
      }
      try await waitForPath(request, maximumWait: maximumWait, reason: reason)
    }
    if let probe, let failure = await probe.check(request.url) {
      if RequestCancellation.isCancelled { throw cancelled(request, "during the host probe") }
      throw notReachable(request, failure)
    }
    return try await next(request)
  }

  private enum WaitOutcome: Sendable {
    case satisfied
    case monitorEnded
    case boundReached
  }

  /// Waits for a satisfied status from the monitor's updates, bounded by `maximumWait` and the
  /// request's deadline; throws `notReachable` or `cancelled`.
  private func waitForPath(
    _ request: Request, maximumWait: Duration, reason: PathStatus.UnsatisfiedReason
  ) async throws(CourierError) {
    var limit = maximumWait
    var bound = "the wait of \(Self.format(maximumWait))"
    if let deadline = request.attributes[DeadlineAttribute.self], deadline.remaining < limit {
      limit = deadline.remaining
      bound = "the request's deadline (\(Self.format(deadline.limit)) overall)"
    }
    guard limit > .zero else {
      throw notReachable(request, "the path is unsatisfied (\(reason)); \(bound) left no time")
    }
    let monitor = self.monitor
    let clock = self.clock
    let wait = limit
    // Its own task, so that a RequestCancellation (Client.cancelAll()) can cancel it as well
    // as the caller's task; the hop is paid only while offline.
    let waiter = Task { () async throws -> WaitOutcome in
      try await withThrowingTaskGroup(of: WaitOutcome.self) { group in
        group.addTask {
          // The stream starts with the current status, so a change between the check in
          // intercept and this subscription is not missed.
          for await status in monitor.updates() where status.isSatisfied { return .satisfied }
          return .monitorEnded
        }
        group.addTask {
          try await clock.sleep(for: wait)
          return .boundReached
        }
        defer { group.cancelAll() }
        return try await group.next() ?? .monitorEnded
      }
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
      throw notReachable(request, "the path is unsatisfied (\(reason)) and the monitor stopped")
    case .boundReached?, nil:
      throw notReachable(
        request, "the path stayed unsatisfied (\(reason)) until \(bound) ran out")
    }
  }

  private func notReachable(_ request: Request, _ detail: String) -> CourierError {
    CourierError(
      kind: .notReachable, debugMessage: detail, request: request, stage: "reachability")
  }

  private func cancelled(_ request: Request, _ detail: String) -> CourierError {
    CourierError(
      kind: .cancelled, debugMessage: "cancelled \(detail)", request: request,
      stage: "reachability")
  }

  /// `10 s`, `1.5 s`, `250 ms`.
  static func format(_ duration: Duration) -> String { DescriptionText.duration(duration) }

  /// Whether `host` is this machine's loopback (`localhost`, 127.0.0.0/8, `::1`): reachable
  /// whatever the interfaces and routes say, so the path's status does not apply — an
  /// offline machine still reaches a server on loopback, as the demo's embedded one.
  static func isLoopback(_ host: String?) -> Bool {
    guard var host = host?.lowercased() else { return false }
    if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    if host == "localhost" || host.hasSuffix(".localhost") || host == "::1" { return true }
    let octets = host.split(separator: ".", omittingEmptySubsequences: false)
    return octets.count == 4 && octets[0] == "127"
      && octets.allSatisfy { UInt8($0) != nil }
  }
}
