#if canImport(Glibc)
  import CCourierLinux
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Thin wrappers over the POSIX socket calls the mock server needs.
///
/// Everything here works on raw file descriptors; ownership (who closes what, and when) is
/// managed by `ServerCore`, which never closes a connection descriptor while another thread
/// could still call `shutdown(2)` on it. `package` for the test targets' raw servers, which
/// open their listening sockets here too.
package enum Socket {
  // MARK: - Platform constants

  #if canImport(Glibc)
    static let streamType = Int32(SOCK_STREAM.rawValue)
    /// Opens sockets close-on-exec in the same call, so no process spawned meanwhile
    /// inherits them.
    static let closeOnExecType = Int32(SOCK_CLOEXEC.rawValue)
    static let sendFlags = Int32(MSG_NOSIGNAL)
    static let peekFlags = Int32(MSG_PEEK) | Int32(MSG_DONTWAIT)
    static let shutdownBoth = Int32(SHUT_RDWR)
    static let shutdownWrite = Int32(SHUT_WR)
    static let tcpLevel = Int32(IPPROTO_TCP)
  #else
    static let streamType = SOCK_STREAM
    static let closeOnExecType: Int32 = 0  // Set with fcntl right after socket(2) instead.
    static let sendFlags: Int32 = 0  // SO_NOSIGPIPE is set on every socket instead.
    static let peekFlags = MSG_PEEK | MSG_DONTWAIT
    static let shutdownBoth = SHUT_RDWR
    static let shutdownWrite = SHUT_WR
    static let tcpLevel = IPPROTO_TCP
  #endif

  /// The current `errno`, rendered for error messages.
  static func lastError(_ operation: String) -> String {
    let code = errno
    return "\(operation) failed: \(String(cString: strerror(code))) (errno \(code))"
  }

  // MARK: - Listening socket

  /// A bound, listening, non-blocking TCP socket.
  package struct Listener {
    /// The listening descriptor.
    package var fd: Int32
    /// The port the kernel picked.
    package var port: Int
    /// The host as it must appear in a URL (`[::1]` for IPv6).
    package var urlHost: String
  }

  /// Binds `host` (a numeric IPv4 or IPv6 address) on `port` (0: an ephemeral one) and starts
  /// listening.
  package static func bindAndListen(
    host: String, port: Int = 0
  ) throws(MockServerError)
    -> Listener
  {
    try boundSocket(host: host, port: port, listening: true)
  }

  /// Binds `host` on `port` and, when `listening`, starts listening. A socket bound without
  /// listening (and without `SO_REUSEADDR`) holds its port: connections to it are refused and
  /// the kernel gives the port to no other socket meanwhile (``RefusingPort``).
  package static func boundSocket(
    host: String, port: Int, listening: Bool
  ) throws(MockServerError)
    -> Listener
  {
    guard (0...65535).contains(port) else { throw MockServerError("port \(port) is out of range") }
    var v4 = in_addr()
    var v6 = in6_addr()
    if inet_pton(AF_INET, host, &v4) == 1 {
      var address = sockaddr_in()
      #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
      #endif
      address.sin_family = sa_family_t(AF_INET)
      address.sin_port = UInt16(port).bigEndian
      address.sin_addr = v4
      let fd = try openSocket(family: AF_INET, address: address, listening: listening)
      return Listener(fd: fd, port: try boundPort(fd), urlHost: host)
    }
    if inet_pton(AF_INET6, host, &v6) == 1 {
      var address = sockaddr_in6()
      #if canImport(Darwin)
        address.sin6_len = UInt8(MemoryLayout<sockaddr_in6>.size)
      #endif
      address.sin6_family = sa_family_t(AF_INET6)
      address.sin6_port = UInt16(port).bigEndian
      address.sin6_addr = v6
      let fd = try openSocket(family: AF_INET6, address: address, listening: listening)
      return Listener(fd: fd, port: try boundPort(fd), urlHost: "[\(host)]")
    }
    throw MockServerError("'\(host)' is not a numeric IPv4 or IPv6 address")
  }

  private static func openSocket<Address>(
    family: Int32,
    address: Address,
    listening: Bool
  ) throws(MockServerError) -> Int32 {
    let fd = socket(family, streamType | closeOnExecType, 0)
    guard fd >= 0 else { throw MockServerError(lastError("socket()")) }
    do throws(MockServerError) {
      #if !canImport(Glibc)
        try setCloseOnExec(fd)  // On Linux, SOCK_CLOEXEC set it in socket(2).
      #endif
      if listening {
        // So that a test server can take a port in TIME_WAIT again. A socket that never
        // listens goes without it: then no other socket can share its port.
        var one: Int32 = 1
        let reuse = setsockopt(
          fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard reuse == 0 else { throw MockServerError(lastError("setsockopt(SO_REUSEADDR)")) }
      }
      var address = address
      let bound = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          bind(fd, $0, socklen_t(MemoryLayout<Address>.size))
        }
      }
      guard bound == 0 else { throw MockServerError(lastError("bind()")) }
      guard listening else { return fd }
      guard listen(fd, 128) == 0 else {
        throw MockServerError(lastError("listen()"))
      }
      try setNonBlocking(fd, true)
      return fd
    } catch {
      _ = close(fd)
      throw error
    }
  }

  private static func boundPort(_ fd: Int32) throws(MockServerError) -> Int {
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let result = withUnsafeMutablePointer(to: &storage) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        getsockname(fd, $0, &length)
      }
    }
    guard result == 0 else {
      let message = lastError("getsockname()")
      _ = close(fd)
      throw MockServerError(message)
    }
    let family = Int32(storage.ss_family)
    let port: UInt16 = withUnsafePointer(to: &storage) { pointer in
      if family == AF_INET6 {
        return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
          $0.pointee.sin6_port
        }
      }
      return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
        $0.pointee.sin_port
      }
    }
    return Int(UInt16(bigEndian: port))
  }

  // MARK: - Descriptor flags

  static func setCloseOnExec(_ fd: Int32) throws(MockServerError) {
    let flags = fcntl(fd, F_GETFD)
    guard flags >= 0, fcntl(fd, F_SETFD, flags | FD_CLOEXEC) == 0 else {
      throw MockServerError(lastError("fcntl(FD_CLOEXEC)"))
    }
  }

  package static func setNonBlocking(_ fd: Int32, _ enabled: Bool) throws(MockServerError) {
    let flags = fcntl(fd, F_GETFL)
    let updated = enabled ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
    guard flags >= 0, fcntl(fd, F_SETFL, updated) == 0 else {
      throw MockServerError(lastError("fcntl(O_NONBLOCK)"))
    }
  }

  /// Accepts a connection from the listener `fd`; on Linux close-on-exec from the start
  /// (`accept4`), elsewhere set by ``configureAccepted(_:)`` right after.
  static func accept(_ fd: Int32) -> Int32 {
    #if canImport(Glibc)
      ccourier_accept_cloexec(fd)
    #else
      Darwin.accept(fd, nil, nil)
    #endif
  }

  /// Prepares an accepted connection: blocking mode, close-on-exec (on Linux already set by
  /// ``accept(_:)``), no Nagle delay, no SIGPIPE.
  static func configureAccepted(_ fd: Int32) -> Bool {
    do {
      #if !canImport(Glibc)
        try setCloseOnExec(fd)
      #endif
      // Accepted sockets inherit O_NONBLOCK from the listener on BSD-derived systems.
      try setNonBlocking(fd, false)
    } catch {
      return false
    }
    var one: Int32 = 1
    let size = socklen_t(MemoryLayout<Int32>.size)
    _ = setsockopt(fd, tcpLevel, TCP_NODELAY, &one, size)
    #if canImport(Darwin)
      _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, size)
    #endif
    return true
  }

  /// Creates the server-wide wake pipe: `[read end, write end]`, both close-on-exec.
  static func makeWakePipe() throws(MockServerError) -> (read: Int32, write: Int32) {
    var fds: [Int32] = [-1, -1]
    #if canImport(Glibc)
      // pipe2(O_CLOEXEC | O_NONBLOCK): the read end is only ever polled, never read.
      guard ccourier_pipe_cloexec_nonblock(&fds) == 0 else {
        throw MockServerError(lastError("pipe2()"))
      }
    #else
      guard pipe(&fds) == 0 else { throw MockServerError(lastError("pipe()")) }
      do throws(MockServerError) {
        try setCloseOnExec(fds[0])
        try setCloseOnExec(fds[1])
        try setNonBlocking(fds[1], true)
      } catch {
        _ = close(fds[0])
        _ = close(fds[1])
        throw error
      }
    #endif
    return (fds[0], fds[1])
  }

  // MARK: - I/O

  /// Receives up to `count` bytes into `destination`. Returns the byte count, or 0 on end of
  /// stream or any error (the caller treats both as "the connection is gone").
  static func receive(_ fd: Int32, into destination: UnsafeMutableRawPointer, count: Int) -> Int {
    while true {
      let received = recv(fd, destination, count, 0)
      if received >= 0 { return received }
      if errno != EINTR { return 0 }
    }
  }

  /// Sends every byte of `bytes`, retrying on partial writes. Returns `false` if the peer went
  /// away or the socket was shut down. Never raises SIGPIPE.
  static func sendAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    guard var cursor = bytes.baseAddress else { return true }
    var remaining = bytes.count
    while remaining > 0 {
      let sent = send(fd, cursor, remaining, sendFlags)
      if sent > 0 {
        cursor += sent
        remaining -= sent
      } else if sent < 0 && errno == EINTR {
        continue
      } else {
        return false
      }
    }
    return true
  }

  /// Sends every byte of `bytes`, as the raw-buffer overload does.
  static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { sendAll(fd, $0) }
  }

  // MARK: - Waiting

  /// Why ``waitForInterruption(fd:wakeFD:until:)`` returned.
  enum WaitOutcome {
    /// The deadline passed with nothing happening.
    case deadlineReached
    /// The peer closed (or reset) the connection.
    case peerClosed
    /// The server is shutting down (the wake pipe became readable).
    case shutdown
  }

  /// Blocks until `deadline` (forever if `nil`), the peer closes `fd`, or the wake pipe fires.
  ///
  /// Uses `poll(2)`; never sleeps. If the peer sends data instead of closing, closure can no
  /// longer be detected without consuming that data, so from then on only the deadline and the
  /// wake pipe are watched.
  static func waitForInterruption(
    fd: Int32,
    wakeFD: Int32,
    until deadline: ContinuousClock.Instant?
  ) -> WaitOutcome {
    var watchPeer = true
    while true {
      var timeout: Int32 = -1
      if let deadline {
        let remaining = ContinuousClock.now.duration(to: deadline)
        if remaining <= .zero { return .deadlineReached }
        timeout = milliseconds(roundingUp: remaining)
      }
      var fds = [
        pollfd(fd: watchPeer ? fd : -1, events: Int16(POLLIN), revents: 0),
        pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
      ]
      let ready = poll(&fds, 2, timeout)
      if ready < 0 {
        if errno == EINTR { continue }
        return .peerClosed
      }
      if ready == 0 { continue }
      if fds[1].revents != 0 { return .shutdown }
      let events = Int32(fds[0].revents)
      if events == 0 { continue }
      if events & (Int32(POLLHUP) | Int32(POLLERR) | Int32(POLLNVAL)) != 0 {
        return .peerClosed
      }
      var byte: UInt8 = 0
      let peeked = recv(fd, &byte, 1, peekFlags)
      if peeked == 0 { return .peerClosed }
      if peeked < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
        return .peerClosed
      }
      if peeked > 0 { watchPeer = false }
    }
  }

  /// Waits for the wake pipe for at most `duration`; used to back off after transient errors.
  static func waitForWake(_ wakeFD: Int32, atMost duration: Duration) {
    var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
    _ = poll(&fds, 1, milliseconds(roundingUp: duration))
  }

  /// Shuts down both directions of `fd`, waking any thread blocked on it.
  static func shutdownBothDirections(_ fd: Int32) {
    _ = shutdown(fd, shutdownBoth)
  }

  /// Makes the coming `close(2)` of `fd` abortive: `SO_LINGER` `{on, 0 s}`, so the kernel
  /// sends RST and drops unsent data instead of closing with FIN.
  static func setAbortiveClose(_ fd: Int32) {
    var option = linger(l_onoff: 1, l_linger: 0)
    _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
  }

  /// Half-closes `fd` and discards whatever the peer still sends (bounded in time and bytes),
  /// so that the final close does not turn into a reset that destroys the response in flight.
  static func lingeringClose(_ fd: Int32, wakeFD: Int32) {
    _ = shutdown(fd, shutdownWrite)
    let deadline = ContinuousClock.now.advanced(by: .seconds(1))
    var discarded = 0
    var scratch = [UInt8](repeating: 0, count: 4096)
    while discarded < 1 << 20 {
      let remaining = ContinuousClock.now.duration(to: deadline)
      if remaining <= .zero { return }
      var fds = [
        pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
        pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
      ]
      let ready = poll(&fds, 2, milliseconds(roundingUp: remaining))
      if ready < 0 && errno == EINTR { continue }
      if ready <= 0 || fds[1].revents != 0 { return }
      let received = scratch.withUnsafeMutableBytes { buffer -> Int in
        guard let base = buffer.baseAddress else { return 0 }
        return receive(fd, into: base, count: buffer.count)
      }
      if received <= 0 { return }
      discarded += received
    }
  }

  /// Converts a duration to a `poll(2)` timeout, rounding up and clamping to `Int32.max`.
  static func milliseconds(roundingUp duration: Duration) -> Int32 {
    // From the 128-bit count: `components` traps past `Int64.max` seconds.
    let attoseconds = duration.attoseconds
    if attoseconds <= 0 { return 0 }
    return Int32(clamping: (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
  }
}
