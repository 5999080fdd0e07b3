internal import CCourierCurl

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The `pollfd` array of a ``CurlEventLoop``: the wake-up descriptor first, then every socket
/// of ``CurlSocketInterest/watched``. Touched by the loop thread only.
final class PollSet {
  private var descriptors: [pollfd]
  /// The sockets the last ``wait(timeout:)`` found ready, with their `revents`; reused from
  /// wait to wait.
  private(set) var ready: [(socket: Int32, revents: Int16)] = []

  init(wakeReader: Int32) {
    descriptors = [pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0)]
    ready.reserveCapacity(16)
  }

  /// Replaces the sockets with `watched` (called under the engine lock).
  func rebuild(from watched: [Int32: Int16]) {
    descriptors.removeSubrange(1...)
    for (socket, events) in watched {
      descriptors.append(pollfd(fd: socket, events: events, revents: 0))
    }
  }

  /// Empties ``ready`` instead of waiting: the loop has queued work to take first.
  func skipWait() {
    ready.removeAll(keepingCapacity: true)
  }

  /// Waits until a socket is ready, the loop is woken, or `timeout` milliseconds pass, and
  /// fills ``ready``. Drains the wake-up descriptor when it fired. Called outside the lock.
  func wait(timeout: Int32) {
    ready.removeAll(keepingCapacity: true)
    let count = descriptors.withUnsafeMutableBufferPointer {
      poll($0.baseAddress, nfds_t($0.count), timeout)
    }
    guard count > 0 else { return }
    if descriptors[0].revents != 0 { courier_wake_drain(descriptors[0].fd) }
    for index in descriptors.indices.dropFirst() where descriptors[index].revents != 0 {
      ready.append((descriptors[index].fd, descriptors[index].revents))
    }
  }
}
