import CourierReachability

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
public final class FakePathMonitor: PathMonitor {
  private let broadcaster: PathStatusBroadcaster
  private let subscriptions = CountEvent()

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
}
