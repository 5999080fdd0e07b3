import CourierCore
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
  import CCourierLinux
#elseif canImport(Darwin)
  import Darwin
#endif

/// A check that the request's host answers, for the case a path monitor cannot see: the
/// interface is up and a default route exists, but the host (or the network behind the
/// router) is unreachable.
///
/// ``tcpConnect(timeout:)`` opens a TCP connection to the request's host and port (80 or 443
/// by scheme when the URL has none), non-blocking, and closes it at once without sending a
/// byte. Any failure — no address for the name, refused, unreachable, no answer within the
/// timeout — makes ``ReachabilityMiddleware`` fail the request with
/// ``CourierError/Kind/notReachable``. A refused port counts too: the request would fail on
/// it anyway, and the user can do nothing but check the network.
///
/// It costs one extra connection per attempt, so it is off unless you ask for it.
///
/// ```swift
/// let reachability = ReachabilityMiddleware(
///   monitor: try SystemPathMonitor(), probe: .tcpConnect(timeout: .milliseconds(500)))
/// _ = reachability
/// ```
///
/// Name resolution uses the system resolver (`getaddrinfo`), which the timeout cannot
/// interrupt; give the probe a host that resolves quickly (an IP literal or a cached name).
public struct HostProbe: Sendable, Hashable {
  /// How long the connection may take before the host counts as unreachable.
  public var timeout: Duration

  /// 1 s: a TCP handshake to a reachable host takes one round trip — tens of milliseconds,
  /// a few hundred on a poor mobile link — so a second without an answer means the host is
  /// not reachable, while a user barely notices the wait.
  public static let defaultTimeout = Duration.seconds(1)

  /// A TCP connect probe with `timeout` (default ``defaultTimeout``, 1 s).
  public static func tcpConnect(timeout: Duration = HostProbe.defaultTimeout) -> HostProbe {
    HostProbe(timeout: timeout)
  }

  /// Connects to `url`'s host and port; returns `nil` on success, else what failed. Ends at
  /// once, with a failure, when the task or the current request is cancelled.
  func check(_ url: URL) async -> String? {
    guard var host = url.host, !host.isEmpty else { return "the URL has no host" }
    if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
    guard let signal = CancelSignal() else { return "pipe failed: \(errno)" }
    defer { signal.close() }
    let timeout = timeout
    let target = host
    let outcome = await RequestCancellation.withCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
        DispatchQueue.global().async {
          continuation.resume(
            returning: Self.probe(
              host: target, port: port, timeout: timeout, cancelFD: signal.readFD))
        }
      }
    } onCancel: {
      signal.fire()
    }
    return outcome.map { "probe of \(host):\(port): \($0)" }
  }

  /// The blocking connect, run on a Dispatch worker: `nil` when a connection was made.
  private static func probe(
    host: String, port: Int, timeout: Duration, cancelFD: Int32
  )
    -> String?
  {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    #if canImport(Glibc)
      hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    #else
      hints.ai_socktype = SOCK_STREAM
    #endif
    hints.ai_flags = AI_NUMERICSERV
    var list: UnsafeMutablePointer<addrinfo>?
    let resolved = getaddrinfo(host, String(port), &hints, &list)
    guard resolved == 0, let first = list else {
      return "no address: \(String(cString: gai_strerror(resolved)))"
    }
    defer { freeaddrinfo(first) }
    let end = ContinuousClock.now.advanced(by: timeout)
    var failure = "no address to try"
    var cursor: UnsafeMutablePointer<addrinfo>? = first
    while let info = cursor {
      cursor = info.pointee.ai_next
      let remaining = ContinuousClock.now.duration(to: end)
      guard remaining > .zero else { return "no answer within \(timeout)" }
      switch attempt(info.pointee, remaining: remaining, cancelFD: cancelFD) {
      case .connected: return nil
      case .cancelled: return "cancelled"
      case .failed(let reason): failure = reason
      }
    }
    return failure
  }

  private enum Attempt {
    case connected
    case cancelled
    case failed(String)
  }

  /// One non-blocking connect to one address, bounded by `remaining`.
  private static func attempt(_ info: addrinfo, remaining: Duration, cancelFD: Int32) -> Attempt {
    #if canImport(Glibc)
      let type =
        Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        | Int32(SOCK_CLOEXEC.rawValue)
      let fd = socket(info.ai_family, type, 0)
    #else
      let fd = socket(info.ai_family, SOCK_STREAM, 0)
      if fd >= 0 { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
    #endif
    guard fd >= 0 else { return .failed("socket: \(String(cString: strerror(errno)))") }
    defer { _ = close(fd) }
    if connect(fd, info.ai_addr, info.ai_addrlen) == 0 { return .connected }
    guard errno == EINPROGRESS else { return .failed(String(cString: strerror(errno))) }
    var descriptors = [
      pollfd(fd: fd, events: Int16(POLLOUT), revents: 0),
      pollfd(fd: cancelFD, events: Int16(POLLIN), revents: 0),
    ]
    // From the 128-bit count: `components` and `seconds * 1000` trap on a huge duration.
    let milliseconds = Int32(clamping: remaining.attoseconds / 1_000_000_000_000_000 + 1)
    var ready: Int32
    repeat {
      ready = poll(&descriptors, 2, milliseconds)
    } while ready < 0 && errno == EINTR
    if descriptors[1].revents != 0 { return .cancelled }
    guard ready > 0 else { return .failed("no answer within \(remaining)") }
    var error: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 else {
      return .failed(String(cString: strerror(errno)))
    }
    return error == 0 ? .connected : .failed(String(cString: strerror(error)))
  }
}

/// A pipe whose write end wakes a probe's `poll` when the request is cancelled. The write end
/// is used and closed only under the Mutex, so a cancellation handler that runs late never
/// writes to a descriptor number that has been reused.
private final class CancelSignal: Sendable {
  let readFD: Int32
  private let writeFD: Mutex<Int32>

  init?() {
    var fds: [Int32] = [-1, -1]
    #if canImport(Glibc)
      guard ccourier_pipe_cloexec_nonblock(&fds) == 0 else { return nil }
    #else
      guard pipe(&fds) == 0 else { return nil }
    #endif
    readFD = fds[0]
    writeFD = Mutex(fds[1])
  }

  func fire() {
    writeFD.withLock { fd in
      guard fd >= 0 else { return }
      var byte: UInt8 = 1
      _ = write(fd, &byte, 1)
    }
  }

  /// Closes both ends; called once the probe's worker has returned.
  func close() {
    writeFD.withLock { fd in
      if fd >= 0 { _ = closeDescriptor(fd) }
      fd = -1
    }
    _ = closeDescriptor(readFD)
  }
}

/// `close(2)`; a method named `close` hides the global function.
private func closeDescriptor(_ fd: Int32) -> Int32 {
  #if canImport(Glibc)
    Glibc.close(fd)
  #else
    Darwin.close(fd)
  #endif
}
