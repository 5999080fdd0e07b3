#if canImport(Network) && !os(Linux)
  import Dispatch
  import Network

  /// The Apple-platform ``PathMonitor``: an adapter over the Network framework's
  /// `NWPathMonitor`, whose path updates it republishes as ``PathStatus``.
  ///
  /// `NWPath.Status.requiresConnection` (an on-demand VPN not yet up) counts as unsatisfied,
  /// since a request would have to wait for it. Interface kinds are the path's used interface
  /// types. ``init()`` throws nothing but has the same shape as ``NetlinkPathMonitor``'s so
  /// that `try SystemPathMonitor()` works on every platform.
  public final class NetworkPathMonitor: PathMonitor {
    private let monitor: NWPathMonitor
    private let broadcaster: PathStatusBroadcaster
    private let queue = DispatchQueue(label: "Courier.NetworkPathMonitor")

    /// Starts monitoring every interface.
    public init() throws {
      let monitor = NWPathMonitor()
      let broadcaster = PathStatusBroadcaster(Self.status(of: monitor.currentPath))
      monitor.pathUpdateHandler = { path in broadcaster.publish(Self.status(of: path)) }
      monitor.start(queue: queue)
      self.monitor = monitor
      self.broadcaster = broadcaster
    }

    deinit { stop() }

    /// The path as `NWPathMonitor` reported it last.
    public var status: PathStatus { broadcaster.status }

    /// The current status, then every change, until ``stop()``.
    public func updates() -> AsyncStream<PathStatus> { broadcaster.updates() }

    /// Cancels the underlying `NWPathMonitor` and ends every ``updates()`` stream.
    public func stop() {
      monitor.cancel()
      broadcaster.finish()
    }

    private static func status(of path: NWPath) -> PathStatus {
      guard path.status == .satisfied else {
        switch path.unsatisfiedReason {
        case .cellularDenied, .wifiDenied, .localNetworkDenied:
          return .unsatisfied(reason: .deniedBySystem)
        case .notAvailable: return .unsatisfied(reason: .noUsableInterface)
        default: return .unsatisfied(reason: .unknown)
        }
      }
      let kinds: [(NWInterface.InterfaceType, InterfaceKind)] = [
        (.wiredEthernet, .wired), (.wifi, .wifi), (.cellular, .cellular),
        (.loopback, .loopback), (.other, .other),
      ]
      return .satisfied(interfaces: Set(kinds.filter { path.usesInterfaceType($0.0) }.map(\.1)))
    }
  }
#endif
