import CourierReachability
import Synchronization

/// A ``PathMonitor`` whose status a test sets, for unit tests of code that reacts to the
/// network path (``ReachabilityMiddleware``, an offline banner).
///
/// Setting ``status`` publishes the new status to every ``updates()`` stream. Wait on
/// ``waitForSubscribers(_:)`` before changing the status when the test must know that the
/// code under test is already waiting, so the test never races it:
///
/// ```swift
/// let monitor = FakePathMonitor(.unsatisfied(reason: .noUsableInterface))
/// let client = Client(
///   baseURL: base, transport: stub,
///   middleware: [ReachabilityMiddleware(monitor: monitor, whenOffline: .wait(upTo: .seconds(10)))])
/// let task = Task { try await client.send(Endpoint<Void>(.get, "ping")) }
/// await monitor.waitForSubscribers(1)  // the request is waiting for the network
/// monitor.status = .satisfied(interfaces: [.wifi])
/// try await task.value
/// ```
///
/// ``route(to:)`` answers from ``routes``, a script of what the system would say per
/// address, and ``unlistedRoute`` (default ``RouteAnswer/unknown``, as a monitor that cannot
/// look routes up) for the rest; ``routeLookups`` records every question:
///
/// ```swift
/// let monitor = FakePathMonitor(.unsatisfied(reason: .noDefaultRoute))
/// let peer = RouteDestination("10.213.0.1")
/// if let peer { monitor.routes[peer] = .routable }
/// monitor.unlistedRoute = .unroutable
/// print(peer.map { monitor.route(to: $0) } ?? .unknown, monitor.routeLookups.count)
/// // "routable 1"
/// ```
public final class FakePathMonitor: PathMonitor {
  private struct Routes {
    var answers: [RouteDestination: RouteAnswer] = [:]
    var unlisted = RouteAnswer.unknown
    var lookups: [RouteDestination] = []
  }

  private let broadcaster: PathStatusBroadcaster
  private let subscriptions = CountEvent()
  // Every access goes through the Mutex, so the class stays Sendable without `@unchecked`.
  private let scriptedRoutes = Mutex(Routes())

  /// Creates a monitor with `status`; default satisfied over Wi-Fi.
  public init(_ status: PathStatus = .satisfied(interfaces: [.wifi])) {
    broadcaster = PathStatusBroadcaster(status)
  }

  /// The current status; setting it publishes the new value to every subscriber.
  public var status: PathStatus {
    get { broadcaster.status }
    set { broadcaster.publish(newValue) }
  }

  /// The current status, then every change, until ``finish()``.
  public func updates() -> AsyncStream<PathStatus> {
    let stream = broadcaster.updates()
    subscriptions.increment()
    return stream
  }

  /// The number of ``updates()`` streams still being listened to.
  public var subscriberCount: Int { broadcaster.subscriberCount }

  /// Returns once ``updates()`` has been called `count` times in all (counting streams that
  /// have ended); cancelling the waiting task ends the wait.
  public func waitForSubscribers(_ count: Int) async {
    await subscriptions.wait(until: count)
  }

  /// Ends every stream, as a stopped monitor does.
  public func finish() { broadcaster.finish() }

  /// What ``route(to:)`` answers, per destination; empty by default.
  public var routes: [RouteDestination: RouteAnswer] {
    get { scriptedRoutes.withLock { $0.answers } }
    set { scriptedRoutes.withLock { $0.answers = newValue } }
  }

  /// What ``route(to:)`` answers for a destination not in ``routes``; default
  /// ``RouteAnswer/unknown``.
  public var unlistedRoute: RouteAnswer {
    get { scriptedRoutes.withLock { $0.unlisted } }
    set { scriptedRoutes.withLock { $0.unlisted = newValue } }
  }

  /// Every destination ``route(to:)`` was asked about, in order.
  public var routeLookups: [RouteDestination] { scriptedRoutes.withLock { $0.lookups } }

  /// The scripted answer for `destination`: its entry in ``routes``, else ``unlistedRoute``.
  public func route(to destination: RouteDestination) -> RouteAnswer {
    scriptedRoutes.withLock { routes in
      routes.lookups.append(destination)
      return routes.answers[destination] ?? routes.unlisted
    }
  }
}
