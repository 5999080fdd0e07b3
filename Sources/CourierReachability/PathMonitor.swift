/// Watches whether the machine has a usable network path, for ``ReachabilityMiddleware`` and
/// for your own code (an offline banner, pausing a sync).
///
/// ## When to use it
/// Use a monitor to tell users they are offline (an offline banner, a
/// ``CourierError/Kind/notReachable`` instead of a bare connection error), to pause work while
/// the link is down, or to wait for the network to come back (Linux has no
/// `waitsForConnectivity`). A monitor says whether a *default* path leaves the machine;
/// whether a given destination can be reached is a different question, which the status
/// alone answers wrongly on many real networks (a subnet without a default route, policy
/// routing, a split-tunnel VPN, a network namespace, a proxy): ask ``route(to:)`` for an
/// address, and see the middleware's host probe for whether a host answers.
///
/// ## Using the built-in one
/// ``SystemPathMonitor`` is the platform's monitor: ``NetlinkPathMonitor`` on Linux (the
/// kernel's rtnetlink events, no polling), `NetworkPathMonitor` over `NWPathMonitor` on Apple
/// platforms. Make one per process and share it; it runs one thread on Linux until
/// ``NetlinkPathMonitor/stop()`` or until it is released.
///
/// - ``status`` is the current ``PathStatus``: `.satisfied(interfaces:)` with the kinds of
///   interface that carry the path, or `.unsatisfied(reason:)`.
/// - ``updates()`` returns a new `AsyncStream` per call — any number of subscribers each get
///   every change — that starts with the status at the moment of subscribing.
/// - ``route(to:)`` says whether the system has a route to one IP address: the kernel's answer
///   to an `RTM_GETROUTE` (what `ip route get` asks) on Linux, ``RouteAnswer/unknown`` on
///   Apple platforms, where `NWPathMonitor` has no such question.
///
/// ## Writing your own
/// Conform a `Sendable` type and keep the state in a ``PathStatusBroadcaster``, which does the
/// subscriber bookkeeping. ``route(to:)`` has a default that answers ``RouteAnswer/unknown``,
/// which leaves the decision to the status. `CourierTesting` has `FakePathMonitor` for tests,
/// with scripted routes.
///
/// ```swift
/// /// Reports offline while a flag in the app's settings says so.
/// final class AirplaneModeMonitor: PathMonitor {
///   private let broadcaster = PathStatusBroadcaster(.satisfied(interfaces: [.wifi]))
///
///   var status: PathStatus { broadcaster.status }
///   func updates() -> AsyncStream<PathStatus> { broadcaster.updates() }
///
///   func airplaneModeChanged(isOn: Bool) {
///     broadcaster.publish(
///       isOn ? .unsatisfied(reason: .init("airplaneMode")) : .satisfied(interfaces: [.wifi]))
///   }
/// }
///
/// let monitor = AirplaneModeMonitor()
/// let client = Client(
///   baseURL: base, transport: transport,
///   middleware: [ReachabilityMiddleware(monitor: monitor, whenOffline: .wait(upTo: .seconds(5)))])
/// for await status in monitor.updates() {
///   print("path:", status)  // "path: satisfied (wifi)"
///   break
/// }
/// _ = client
/// ```
public protocol PathMonitor: Sendable {
  /// The path as the monitor sees it now.
  var status: PathStatus { get }

  /// A new stream that yields the current status at once and then every change. Each call
  /// makes an independent stream, so any number of subscribers each see every change. The
  /// stream ends when the monitor stops.
  func updates() -> AsyncStream<PathStatus>

  /// Whether the system has a usable route to `destination` now: ``RouteAnswer/routable``,
  /// ``RouteAnswer/unroutable``, or ``RouteAnswer/unknown`` when the monitor cannot tell.
  ///
  /// ``ReachabilityMiddleware`` asks it only while ``status`` is unsatisfied and only for a
  /// request to an IP literal, so a monitor may answer with a system call; it must not block
  /// for long. The default answers ``RouteAnswer/unknown``.
  func route(to destination: RouteDestination) -> RouteAnswer
}

extension PathMonitor {
  /// ``RouteAnswer/unknown``: a monitor that does not look routes up leaves the decision to
  /// its ``status``.
  public func route(to destination: RouteDestination) -> RouteAnswer { .unknown }
}
