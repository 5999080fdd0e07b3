/// Watches whether the machine has a usable network path, for ``ReachabilityMiddleware`` and
/// for your own code (an offline banner, pausing a sync).
///
/// ## When to use it
/// Use a monitor when "offline" should be answered before a request is sent: to fail at once
/// with a clear ``CourierError/Kind/notReachable`` instead of a connect timeout, or to wait
/// for the network to come back (Linux has no `waitsForConnectivity`). A monitor says whether
/// a path *leaves the machine*; whether a given host answers is a different question (see
/// the middleware's host probe).
///
/// ## Using the built-in one
/// ``SystemPathMonitor`` is the platform's monitor: ``NetlinkPathMonitor`` on Linux (the
/// kernel's rtnetlink events, no polling), ``NetworkPathMonitor`` over `NWPathMonitor` on Apple
/// platforms. Make one per process and share it; it runs one thread on Linux until
/// ``NetlinkPathMonitor/stop()`` or until it is released.
///
/// - ``status`` is the current ``PathStatus``: `.satisfied(interfaces:)` with the kinds of
///   interface that carry the path, or `.unsatisfied(reason:)`.
/// - ``updates()`` returns a new `AsyncStream` per call — any number of subscribers each get
///   every change — that starts with the status at the moment of subscribing.
///
/// ## Writing your own
/// Conform a `Sendable` type and keep the state in a ``PathStatusBroadcaster``, which does the
/// subscriber bookkeeping. `CourierTesting` has `FakePathMonitor` for tests.
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
}
