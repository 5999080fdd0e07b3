#if os(Linux)
  /// The platform's ``PathMonitor``: ``NetlinkPathMonitor`` on Linux.
  ///
  /// ```swift
  /// let monitor = try SystemPathMonitor()
  /// let reachability = ReachabilityMiddleware(monitor: monitor)
  /// _ = reachability
  /// ```
  public typealias SystemPathMonitor = NetlinkPathMonitor
#elseif canImport(Network)
  /// The platform's ``PathMonitor``: ``NetworkPathMonitor`` (`NWPathMonitor`) on Apple
  /// platforms.
  public typealias SystemPathMonitor = NetworkPathMonitor
#endif
