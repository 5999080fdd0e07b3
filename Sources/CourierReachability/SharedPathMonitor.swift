/// The process's one ``SystemPathMonitor``, started on first use and kept for the life of the
/// process, for clients that do not bring a monitor of their own (`Client.standard` uses it).
///
/// A monitor costs a thread and two netlink sockets on Linux; one per process is enough, as
/// every ``PathMonitor`` serves any number of subscribers. Where the system monitor cannot
/// start (a sandbox without netlink), ``system`` is `nil` and ``startFailure`` says why: a
/// client then sends without a path check rather than refusing every request.
///
/// ```swift
/// if let monitor = SharedPathMonitor.system {
///   print(monitor.status)
/// } else if let failure = SharedPathMonitor.startFailure {
///   print("no path monitor: \(failure)")
/// }
/// ```
public enum SharedPathMonitor {
  private static let shared: Result<any PathMonitor, any Error>? = {
    #if os(Linux) || canImport(Network)
      do {
        return .success(try SystemPathMonitor())
      } catch {
        return .failure(error)
      }
    #else
      return nil
    #endif
  }()

  /// The shared monitor, or `nil` when this platform has none or it could not start.
  public static var system: (any PathMonitor)? {
    if case .success(let monitor)? = shared { return monitor }
    return nil
  }

  /// Why ``system`` is `nil`, when it is.
  public static var startFailure: (any Error)? {
    if case .failure(let error)? = shared { return error }
    return nil
  }
}
