/// What a ``PathMonitor`` knows of the route to a ``RouteDestination``.
public enum RouteAnswer: Hashable, Sendable, CustomStringConvertible {
  /// The system has a route to the destination, through a link that has its carrier: a
  /// connection attempt will leave the machine (whether the host answers is another matter).
  case routable
  /// The system has no usable route: none matches, one matches that is `unreachable`,
  /// `prohibit` or `blackhole`, or its link is down or has lost its carrier. A connection
  /// attempt fails at once or never completes.
  case unroutable
  /// The monitor cannot tell: it does not look routes up (`NWPathMonitor` has no such
  /// question), or the lookup failed.
  case unknown

  /// `"routable"`, `"unroutable"` or `"unknown"`.
  public var description: String {
    switch self {
    case .routable: "routable"
    case .unroutable: "unroutable"
    case .unknown: "unknown"
    }
  }
}
