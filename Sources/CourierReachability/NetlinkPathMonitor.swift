#if os(Linux)
  import CCourierNetlink
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
  /// ## Life cycle
  /// ``init()`` starts the thread and returns once the first status is known (a few
  /// milliseconds). ``stop()`` — or releasing the monitor — wakes the thread, joins it and
  /// closes every descriptor it opened: two netlink sockets and a pipe. Make one per process
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
      if let failure = startup.wait() {
        thread.join()
        _ = close(stopRead)
        _ = close(stopWrite)
        throw failure
      }
      self.broadcaster = broadcaster
      control = Mutex(Control(thread: thread, stopWrite: stopWrite, stopRead: stopRead))
    }

    deinit { stop() }

    /// The path as the kernel reported it last.
    public var status: PathStatus { broadcaster.status }

    /// The current status, then every change, until ``stop()``.
    public func updates() -> AsyncStream<PathStatus> { broadcaster.updates() }

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

  /// The hand-over between the monitor thread's start-up and ``NetlinkPathMonitor/init()``.
  private final class Startup: Sendable {
    private let outcome = Mutex<PathMonitorError?>(nil)
    private let ready = DispatchSemaphore(value: 0)

    func succeed() { ready.signal() }

    func fail(_ error: PathMonitorError) {
      outcome.withLock { $0 = error }
      ready.signal()
    }

    func wait() -> PathMonitorError? {
      ready.wait()
      return outcome.withLock { $0 }
    }
  }

  /// What the monitor thread runs. Immutable; everything it mutates is local to ``run(_:)``.
  private struct EventLoop: Sendable {
    let broadcaster: PathStatusBroadcaster
    let stopRead: Int32
    let networkNamespace: String?
    let readsSysfs: Bool

    func run(_ startup: Startup) {
      if let networkNamespace {
        let fd = open("/run/netns/\(networkNamespace)", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
          return startup.fail(PathMonitorError(operation: "open /run/netns", code: errno))
        }
        let entered = ccourier_enter_network_namespace(fd)
        let code = errno
        _ = close(fd)
        guard entered == 0 else {
          return startup.fail(PathMonitorError(operation: "setns", code: code))
        }
      }
      let events: Int32
      let queries: Int32
      do throws(PathMonitorError) {
        events = try openNetlink(groups: ccourier_path_groups())
        do throws(PathMonitorError) {
          queries = try openNetlink(groups: 0)
        } catch {
          _ = close(events)
          throw error
        }
      } catch {
        return startup.fail(error)
      }
      defer {
        _ = close(events)
        _ = close(queries)
      }
      var snapshot = Snapshot(queries: queries, readsSysfs: readsSysfs)
      broadcaster.publish(snapshot.status())
      startup.succeed()

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
        while true {
          let count = buffer.withUnsafeMutableBytes {
            recv(events, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
          }
          if count > 0 { continue }
          if count < 0, errno == EINTR || errno == ENOBUFS { continue }
          break
        }
        broadcaster.publish(snapshot.status())
      }
    }
  }

  /// Opens a `NETLINK_ROUTE` socket bound to `groups` (0 for a socket used only for dumps).
  private func openNetlink(groups: UInt32) throws(PathMonitorError) -> Int32 {
    let fd = socket(
      AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), NETLINK_ROUTE)
    guard fd >= 0 else { throw PathMonitorError(operation: "socket", code: errno) }
    if groups == 0 {
      // The dump socket: the kernel answers a dump at once, but a thread blocked forever in
      // recv could never be stopped, so a dump that has not answered in 2 s counts as failed.
      var timeout = timeval(tv_sec: 2, tv_usec: 0)
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
