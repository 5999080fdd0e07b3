import CCourierCurl

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The sockets and the timer libcurl asks a ``CurlEventLoop`` to watch, through the multi
/// handle's socket interface (`CURLMOPT_SOCKETFUNCTION`, `CURLMOPT_TIMERFUNCTION`), and the one
/// `poll` that waits for them and for the loop's wake-up descriptor. Used on the loop thread
/// only: libcurl calls the callbacks from inside the multi functions the loop calls.
///
/// Why the socket interface and not `curl_multi_perform` + `curl_multi_poll`: told which socket
/// is ready (`curl_multi_socket_action` with `CURL_CSELECT_IN`), libcurl works on that
/// transfer alone and trusts the readiness; `curl_multi_perform` visits every transfer in
/// flight, and each one it visits checks its socket with a `poll` of its own (measured: four
/// `poll` calls per request one at a time, two of them only to ask libcurl's own question
/// again; with 16 in flight, one per transfer on every wake-up). A plain `poll` array, not
/// `epoll`: libcurl switches a socket between reading and writing on every request, which is
/// a free array update here and would be an `epoll_ctl` system call each time.
final class CurlSocketPoller {
  /// What `poll` watches: the wake-up descriptor first, then libcurl's sockets.
  private var descriptors: [pollfd]
  /// Where each socket is in ``descriptors``.
  private var positions: [Int32: Int] = [:]
  /// When libcurl wants `curl_multi_socket_action(CURL_SOCKET_TIMEOUT)` called, in
  /// milliseconds of the monotonic clock; `nil` when it has no timeout pending.
  private var deadline: Int64?
  /// The sockets the last ``wait(limit:)`` found ready, with libcurl's `CURL_CSELECT_*`
  /// bits; reused from wait to wait.
  private(set) var ready: [(socket: curl_socket_t, events: Int32)] = []

  init(wakeReader: Int32) {
    descriptors = [pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0)]
    ready.reserveCapacity(16)
  }

  /// Makes this object the multi handle's socket and timer callbacks' target; it must
  /// outlive the multi handle's last call (its cleanup included).
  func install(on multi: UnsafeMutableRawPointer) {
    let context = Unmanaged.passUnretained(self).toOpaque()
    _ = courier_curl_multi_setopt_socket_callback(multi) { _, socket, what, context, _ in
      guard let context else { return 0 }
      Unmanaged<CurlSocketPoller>.fromOpaque(context).takeUnretainedValue()
        .watch(socket, what: what)
      return 0
    }
    _ = courier_curl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, context)
    _ = courier_curl_multi_setopt_timer_callback(multi) { _, milliseconds, context in
      guard let context else { return 0 }
      Unmanaged<CurlSocketPoller>.fromOpaque(context).takeUnretainedValue()
        .setTimer(milliseconds)
      return 0
    }
    _ = courier_curl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, context)
  }

  /// `CURLMOPT_SOCKETFUNCTION`: start, change or stop watching `socket`.
  private func watch(_ socket: curl_socket_t, what: Int32) {
    if what == courier_curl_poll_remove {
      forget(socket)
      return
    }
    var events: Int16 = 0
    if what & courier_curl_poll_in != 0 { events |= Int16(POLLIN) }
    if what & courier_curl_poll_out != 0 { events |= Int16(POLLOUT) }
    if let position = positions[socket] {
      descriptors[position].events = events
    } else {
      positions[socket] = descriptors.count
      descriptors.append(pollfd(fd: socket, events: events, revents: 0))
    }
  }

  private func forget(_ socket: curl_socket_t) {
    guard let position = positions.removeValue(forKey: socket) else { return }
    let last = descriptors.count - 1
    if position != last {
      descriptors[position] = descriptors[last]
      positions[descriptors[position].fd] = position
    }
    descriptors.removeLast()
  }

  /// `CURLMOPT_TIMERFUNCTION`: `-1` removes the timeout, `0` asks for it at once.
  private func setTimer(_ milliseconds: Int) {
    deadline = milliseconds < 0 ? nil : Self.now() + Int64(milliseconds)
  }

  /// Whether libcurl's timeout is due; clears it when it is (the caller then runs
  /// `curl_multi_socket_action(CURL_SOCKET_TIMEOUT)`, which sets the next one).
  func takeDueTimeout() -> Bool {
    guard let deadline, deadline <= Self.now() else { return false }
    self.deadline = nil
    return true
  }

  /// Waits until a socket is ready, the loop is woken, or libcurl's timeout is due — at most
  /// `limit` milliseconds — and fills ``ready``. Drains the wake-up descriptor when it fired.
  func wait(limit: Int32) {
    var timeout = limit
    if let deadline {
      timeout = Int32(clamping: max(0, min(Int64(limit), deadline - Self.now())))
    }
    ready.removeAll(keepingCapacity: true)
    let count = descriptors.withUnsafeMutableBufferPointer {
      poll($0.baseAddress, nfds_t($0.count), timeout)
    }
    guard count > 0 else { return }
    if descriptors[0].revents != 0 { courier_wake_drain(descriptors[0].fd) }
    var closed: [curl_socket_t] = []
    for index in descriptors.indices.dropFirst() {
      let revents = Int32(descriptors[index].revents)
      guard revents != 0 else { continue }
      var events: Int32 = 0
      if revents & Int32(POLLIN | POLLHUP) != 0 { events |= courier_curl_cselect_in }
      if revents & Int32(POLLOUT) != 0 { events |= courier_curl_cselect_out }
      if revents & Int32(POLLERR | POLLNVAL) != 0 { events |= courier_curl_cselect_err }
      ready.append((descriptors[index].fd, events))
      // A descriptor closed without libcurl saying so would make every poll return at once.
      if revents & Int32(POLLNVAL) != 0 { closed.append(descriptors[index].fd) }
    }
    for socket in closed { forget(socket) }
  }

  /// The monotonic clock in milliseconds.
  private static func now() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000 + Int64(time.tv_nsec) / 1_000_000
  }
}
