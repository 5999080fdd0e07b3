#if os(Linux)
  import CCourierLinux
  import CourierCore
  import Dispatch
  import Glibc
  import Synchronization

  /// The Linux ``PathMonitor``: the kernel's rtnetlink events, read by one thread that blocks
  /// on them. No polling loop: the thread sleeps in `poll(2)` until the kernel reports a change
  /// or ``stop()`` wakes it.
  ///
  /// ## How it decides
  /// A `NETLINK_ROUTE` socket subscribes to link, IPv4/IPv6 address and IPv4/IPv6 route
  /// changes (`RTMGRP_LINK`, `RTMGRP_IPV4_IFADDR`, `RTMGRP_IPV6_IFADDR`, `RTMGRP_IPV4_ROUTE`,
  /// `RTMGRP_IPV6_ROUTE`). On every batch of events the thread recomputes the status:
  ///
  /// 1. `getifaddrs`: the interfaces that are up **and** running (`IFF_UP`, `IFF_RUNNING`:
  ///    carrier present), not loopback, with an IPv4 address or an IPv6 address that is not
  ///    link-local;
  /// 2. an `RTM_GETROUTE` dump: the default routes (`0.0.0.0/0`, `::/0`, unicast, any table
  ///    but `local`) and the interfaces they leave through;
  /// 3. satisfied when a default route leaves through a usable interface; the kinds of those
  ///    interfaces are the status's `interfaces`.
  ///
  /// Interface kinds come from the link's hardware type (`ifi_type`, which `getifaddrs`
  /// reports as the packet address's `sll_hatype`), then `/sys/class/net/<name>/wireless`,
  /// then the name: `wwan*`, `rmnet*`, `ccmni*` are cellular, `wl*` Wi-Fi.
  ///
  /// The subscription is made before the first dump, so no change is lost between the two.
  /// The kernel drops events when the socket's buffer overflows (`ENOBUFS`); the monitor then
  /// simply recomputes, since it never relies on the content of an event.
  ///
  /// ## Routes to one address
  /// ``route(to:)`` asks the kernel what `ip route get fibmatch <address>` asks: an
  /// `RTM_GETROUTE` request with the address as `RTA_DST`, on a third netlink socket that the
  /// thread opens at start (so in the monitor's network namespace) and that callers share
  /// under a lock. The answer is ``RouteAnswer/unroutable`` when the kernel answers
  /// `ENETUNREACH` (no route), `EHOSTUNREACH` (an `unreachable` route), `EACCES` (`prohibit`)
  /// or `EINVAL` (`blackhole`), or a route of one of those types, or a route whose link is
  /// down or has lost its carrier (`RTNH_F_LINKDOWN`, `RTNH_F_DEAD`, for every next hop);
  /// ``RouteAnswer/routable`` for any other route; ``RouteAnswer/unknown`` when the socket
  /// fails or the kernel does not answer within 1 s. The unspecified address (`0.0.0.0`, `::`),
  /// which a connection reaches as loopback but for which the kernel's lookup has no table
  /// entry to answer with (`EHOSTUNREACH`), is answered as loopback is. A lookup costs one
  /// system call each way (microseconds) and is made by the calling thread.
  ///
  /// ## Life cycle
  /// ``init()`` starts the thread and returns once the first status is known (a few
  /// milliseconds). ``stop()`` — or releasing the monitor — wakes the thread, joins it and
  /// closes every descriptor it opened: three netlink sockets and a pipe. Make one per process
  /// and share it.
  ///
  /// ```swift
  /// let monitor = try NetlinkPathMonitor()
  /// defer { monitor.stop() }
  /// print(monitor.status)  // "satisfied (wired)"
  /// ```
  public final class NetlinkPathMonitor: PathMonitor {
    private struct Control {
      var thread: NativeThread?
      var stopWrite: Int32
      var stopRead: Int32
    }

    private let broadcaster: PathStatusBroadcaster
    // Taken only to start and stop; every field is read and written under the Mutex.
    private let control: Mutex<Control>
    // The route-lookup socket, opened in the monitor's namespace; `nil` once stopped. Held for
    // the whole of a lookup, so that answers are never read by the wrong caller.
    private let routes: Mutex<RouteLookups?>

    /// The name of the monitor thread (`/proc/self/task/*/comm`), for leak checks.
    package static let threadName = "CourierPathMon"
    /// The name of a thread that watches another namespace (tests): leak checks then do not
    /// count the process's own monitor, which `SharedPathMonitor` keeps for good.
    package static let namespaceThreadName = "CourierPathNS"

    /// Starts monitoring the network namespace of the calling thread (the process's, unless
    /// that thread has joined another), and returns once the first status is known.
    ///
    /// - Throws: ``PathMonitorError`` when the netlink socket cannot be opened or bound, or the
    ///   thread cannot be started.
    public convenience init() throws(PathMonitorError) {
      try self.init(networkNamespace: nil)
    }

    /// Starts monitoring the network namespace `/run/netns/<networkNamespace>` (as made by
    /// `ip netns add`), or the process's own when `nil`. For tests: the monitor's thread joins
    /// the namespace before opening its sockets, and only that thread does. Interface kinds
    /// inside another namespace come from the hardware type and the name only, because
    /// `/sys/class/net` shows the namespace that mounted it.
    package init(networkNamespace: String?) throws(PathMonitorError) {
      var pipeFDs: [Int32] = [-1, -1]
      guard ccourier_pipe_cloexec_nonblock(&pipeFDs) == 0 else {
        throw PathMonitorError(operation: "pipe2", code: errno)
      }
      let (stopRead, stopWrite) = (pipeFDs[0], pipeFDs[1])
      let broadcaster = PathStatusBroadcaster(.unsatisfied(reason: .unknown))
      let startup = Startup()
      let loop = EventLoop(
        broadcaster: broadcaster, stopRead: stopRead, networkNamespace: networkNamespace,
        readsSysfs: networkNamespace == nil)
      let name = networkNamespace == nil ? Self.threadName : Self.namespaceThreadName
      guard let thread = NativeThread.spawn(name: name, { loop.run(startup) }) else {
        _ = close(stopRead)
        _ = close(stopWrite)
        throw PathMonitorError(operation: "pthread_create", code: EAGAIN)
      }
      let routeSocket: Int32
      switch startup.wait() {
      case .failure(let failure):
        thread.join()
        _ = close(stopRead)
        _ = close(stopWrite)
        throw failure
      case .success(let socket):
        routeSocket = socket
      }
      self.broadcaster = broadcaster
      control = Mutex(Control(thread: thread, stopWrite: stopWrite, stopRead: stopRead))
      routes = Mutex(RouteLookups(socket: routeSocket))
    }

    deinit { stop() }

    /// The path as the kernel reported it last.
    public var status: PathStatus { broadcaster.status }

    /// The current status, then every change, until ``stop()``.
    public func updates() -> AsyncStream<PathStatus> { broadcaster.updates() }

    /// The kernel's answer for `destination` in the monitor's network namespace (see "Routes
    /// to one address" above); ``RouteAnswer/unknown`` after ``stop()``.
    public func route(to destination: RouteDestination) -> RouteAnswer {
      // connect(2) sends to the unspecified address over loopback; RTM_F_FIB_MATCH finds no
      // table entry for it and answers EHOSTUNREACH, which would read as "no route".
      let asked =
        destination.bytes.allSatisfy({ $0 == 0 })
        ? RouteDestination(destination.family == .ipv4 ? "127.0.0.1" : "::1") ?? destination
        : destination
      return routes.withLock { lookups in
        guard var current = lookups else { return .unknown }
        defer { lookups = current }
        return current.answer(for: asked)
      }
    }

    /// Stops the thread, waits for it to exit, closes the monitor's descriptors and ends every
    /// ``updates()`` stream. ``status`` keeps its last value. Calling it again does nothing.
    public func stop() {
      let stopped = control.withLock { control -> (NativeThread, Int32, Int32)? in
        guard let thread = control.thread else { return nil }
        control.thread = nil
        return (thread, control.stopRead, control.stopWrite)
      }
      guard let (thread, stopRead, stopWrite) = stopped else { return }
      var byte: UInt8 = 1
      _ = write(stopWrite, &byte, 1)
      if thread.isCurrent {
        // Cannot happen with Courier's code (the thread holds no reference to the monitor and
        // runs no user code), but joining oneself would deadlock: detach instead, and leave
        // the pipe's read end open rather than close a descriptor the thread still polls.
        thread.detach()
      } else {
        thread.join()
        _ = close(stopRead)
      }
      _ = close(stopWrite)
      routes.withLock { lookups in
        if let socket = lookups?.socket { _ = close(socket) }
        lookups = nil
      }
      broadcaster.finish()
    }
  }

  /// Why a ``NetlinkPathMonitor`` could not start.
  public struct PathMonitorError: Error, Sendable, CustomStringConvertible {
    /// The call that failed (`"socket"`, `"bind"`, `"setns"`, …).
    public let operation: String
    /// The `errno` it failed with.
    public let code: Int32

    /// Creates an error.
    public init(operation: String, code: Int32) {
      self.operation = operation
      self.code = code
    }

    /// `"<operation> failed: <strerror>"`.
    public var description: String {
      "\(operation) failed: \(String(cString: strerror(code)))"
    }
  }

  /// The hand-over between the monitor thread's start-up and ``NetlinkPathMonitor/init()``:
  /// the route-lookup socket the thread opened, or why it could not start.
  private final class Startup: Sendable {
    private let outcome = Mutex<Result<Int32, PathMonitorError>?>(nil)
    private let ready = DispatchSemaphore(value: 0)

    func succeed(routeSocket: Int32) {
      outcome.withLock { $0 = .success(routeSocket) }
      ready.signal()
    }

    func fail(_ error: PathMonitorError) {
      outcome.withLock { $0 = .failure(error) }
      ready.signal()
    }

    func wait() -> Result<Int32, PathMonitorError> {
      ready.wait()
      return outcome.withLock { $0 } ?? .failure(PathMonitorError(operation: "start", code: EIO))
    }
  }

  /// What the monitor thread runs. Immutable; everything it mutates is local to ``run(_:)``.
  private struct EventLoop: Sendable {
    let broadcaster: PathStatusBroadcaster
    let stopRead: Int32
    let networkNamespace: String?
    let readsSysfs: Bool

    func run(_ startup: Startup) {
      let sockets: (events: Int32, queries: Int32, routes: Int32)
      do throws(PathMonitorError) {
        try enterNetworkNamespace()
        sockets = try Self.openSockets()
      } catch {
        return startup.fail(error)
      }
      let (events, queries, routeSocket) = sockets
      defer {
        _ = close(events)
        _ = close(queries)
      }
      var snapshot = Snapshot(queries: queries, readsSysfs: readsSysfs)
      broadcaster.publish(snapshot.status())
      startup.succeed(routeSocket: routeSocket)
      watch(events, snapshot: &snapshot)
    }

    /// Moves this thread into the network namespace named `networkNamespace`, if any.
    private func enterNetworkNamespace() throws(PathMonitorError) {
      guard let networkNamespace else { return }
      let fd = open("/run/netns/\(networkNamespace)", O_RDONLY | O_CLOEXEC)
      guard fd >= 0 else {
        throw PathMonitorError(operation: "open /run/netns", code: errno)
      }
      let entered = ccourier_enter_network_namespace(fd)
      let code = errno
      _ = close(fd)
      guard entered == 0 else {
        throw PathMonitorError(operation: "setns", code: code)
      }
    }

    /// The three netlink sockets, all open or none: events, dumps and route lookups.
    private static func openSockets() throws(PathMonitorError) -> (
      events: Int32, queries: Int32, routes: Int32
    ) {
      var opened: [Int32] = []
      do throws(PathMonitorError) {
        // Events; dumps (2 s to answer); route lookups, handed to the monitor, which closes it
        // (1 s: a request is waiting on it).
        opened.append(try openNetlink(groups: ccourier_path_groups()))
        opened.append(try openNetlink(groups: 0, answersWithin: 2))
        opened.append(try openNetlink(groups: 0, answersWithin: 1))
      } catch {
        for fd in opened { _ = close(fd) }
        throw error
      }
      return (opened[0], opened[1], opened[2])
    }

    /// Publishes the status again after each burst of events, until `stopRead` is readable.
    private func watch(_ events: Int32, snapshot: inout Snapshot) {
      var descriptors = [
        pollfd(fd: events, events: Int16(POLLIN), revents: 0),
        pollfd(fd: stopRead, events: Int16(POLLIN), revents: 0),
      ]
      var buffer = [UInt8](repeating: 0, count: 16_384)
      while true {
        descriptors[0].revents = 0
        descriptors[1].revents = 0
        let ready = poll(&descriptors, 2, -1)
        if ready < 0 {
          if errno == EINTR { continue }
          return
        }
        if descriptors[1].revents != 0 { return }
        guard descriptors[0].revents & Int16(POLLIN) != 0 else {
          // POLLERR without data (an overrun is reported on the next recv): recompute anyway.
          if descriptors[0].revents != 0 { broadcaster.publish(snapshot.status()) }
          continue
        }
        // The events' content is not needed: any change means "recompute". Drain the socket so
        // that a burst (a link going down removes addresses and routes too) costs one dump.
        Self.drain(events, into: &buffer)
        broadcaster.publish(snapshot.status())
      }
    }

    /// Reads `events` until nothing is left to read without waiting.
    private static func drain(_ events: Int32, into buffer: inout [UInt8]) {
      while true {
        let count = buffer.withUnsafeMutableBytes {
          recv(events, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
        }
        if count > 0 { continue }
        if count < 0, errno == EINTR || errno == ENOBUFS { continue }
        break
      }
    }
  }

  /// The route-lookup socket of a ``NetlinkPathMonitor`` and the sequence numbers of its
  /// requests; used under the monitor's lock.
  private struct RouteLookups {
    let socket: Int32
    private var sequence: UInt32 = 0

    init(socket: Int32) { self.socket = socket }

    /// 8 KiB: an answer is one route message or one error (with the request echoed), a few
    /// hundred bytes.
    private static let capacity = 8_192

    /// Sends an `RTM_GETROUTE` for `destination` and reads the answer with the same sequence
    /// number; an answer to an earlier lookup that gave up waiting is skipped.
    mutating func answer(for destination: RouteDestination) -> RouteAnswer {
      sequence &+= 1
      let family = UInt8(destination.family == .ipv4 ? AF_INET : AF_INET6)
      var request = destination.bytes.withUnsafeBufferPointer {
        ccourier_route_lookup_request(sequence, family, $0.baseAddress, UInt32($0.count))
      }
      let length = Int(request.header.nlmsg_len)
      let sent = withUnsafeBytes(of: &request) { send(socket, $0.baseAddress, length, 0) }
      guard sent == length else { return .unknown }
      let buffer = UnsafeMutableRawPointer.allocate(byteCount: Self.capacity, alignment: 8)
      defer { buffer.deallocate() }
      while true {
        // The socket's receive timeout (openNetlink) bounds the wait.
        let received = recv(socket, buffer, Self.capacity, 0)
        if received < 0 && errno == EINTR { continue }
        guard received > 0 else { return .unknown }
        var remaining = Int32(received)
        var message: UnsafeMutablePointer<nlmsghdr>? = buffer.assumingMemoryBound(to: nlmsghdr.self)
        while let header = message, ccourier_nlmsg_ok(header, remaining) != 0 {
          defer { message = ccourier_nlmsg_next(header, &remaining) }
          guard header.pointee.nlmsg_seq == sequence else { continue }
          switch Int32(header.pointee.nlmsg_type) {
          case NLMSG_ERROR: return Self.answer(forError: ccourier_nlmsg_error_code(header))
          case Int32(RTM_NEWROUTE): return Self.answer(forRoute: header)
          default: return .unknown
          }
        }
      }
    }

    /// The kernel refuses the lookup with `-ENETUNREACH` when no route matches, and with the
    /// error a matching route of type `unreachable` (`-EHOSTUNREACH`), `prohibit` (`-EACCES`)
    /// or `blackhole` (`-EINVAL`) gives a connection.
    private static func answer(forError code: Int32) -> RouteAnswer {
      switch -code {
      case ENETUNREACH, EHOSTUNREACH, EACCES, EINVAL: .unroutable
      default: .unknown
      }
    }

    /// A route of a type that drops or refuses packets, or whose next hops are all down
    /// (link down or no carrier), is no route.
    private static func answer(forRoute header: UnsafeMutablePointer<nlmsghdr>) -> RouteAnswer {
      guard
        header.pointee.nlmsg_len >= ccourier_nlmsg_length(UInt32(MemoryLayout<rtmsg>.size)),
        let payload = ccourier_nlmsg_data(header)
      else { return .unknown }
      let route = payload.assumingMemoryBound(to: rtmsg.self)
      switch Int(route.pointee.rtm_type) {
      case RTN_UNREACHABLE, RTN_PROHIBIT, RTN_BLACKHOLE, RTN_THROW: return .unroutable
      default: break
      }
      if route.pointee.rtm_flags & ccourier_next_hop_down_flags() != 0 { return .unroutable }
      var length = ccourier_rtm_payload(header)
      var attribute = ccourier_rtm_rta(route)
      while let current = attribute, ccourier_rta_ok(current, length) != 0 {
        if UInt32(current.pointee.rta_type) == RTA_MULTIPATH.rawValue,
          let data = ccourier_rta_data(current),
          ccourier_multipath_all_down(data, ccourier_rta_payload(current)) != 0
        {
          return .unroutable
        }
        attribute = ccourier_rta_next(current, &length)
      }
      return .routable
    }
  }

  /// Opens a `NETLINK_ROUTE` socket bound to `groups` (0 for a socket used only for requests,
  /// whose answers must come within `answersWithin` seconds).
  private func openNetlink(
    groups: UInt32, answersWithin seconds: Int = 2
  ) throws(PathMonitorError)
    -> Int32
  {
    let fd = socket(
      AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), NETLINK_ROUTE)
    guard fd >= 0 else { throw PathMonitorError(operation: "socket", code: errno) }
    if groups == 0 {
      // A request socket: the kernel answers at once, but a thread blocked forever in recv
      // could never be stopped, so a request that has not been answered in time counts as
      // failed.
      var timeout = timeval(tv_sec: seconds, tv_usec: 0)
      _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    } else {
      // A larger buffer makes overruns during bursts (many routes changing at once) rarer;
      // an overrun is harmless anyway (see NetlinkPathMonitor).
      var size: Int32 = 1 << 20
      _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }
    var address = sockaddr_nl()
    address.nl_family = sa_family_t(AF_NETLINK)
    address.nl_groups = groups
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_nl>.size))
      }
    }
    guard bound == 0 else {
      let code = errno
      _ = close(fd)
      throw PathMonitorError(operation: "bind", code: code)
    }
    return fd
  }
#endif
