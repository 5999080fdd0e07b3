internal import CCourierCurl
import CourierCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The sockets and the timer libcurl asks a ``CurlEventLoop`` to watch, through the multi
/// handle's socket interface (`CURLMOPT_SOCKETFUNCTION`, `CURLMOPT_TIMERFUNCTION`), and the one
/// `poll` that waits for them and for the loop's wake-up descriptor.
///
/// Why the socket interface and not `curl_multi_perform` + `curl_multi_poll`: told which socket
/// is ready (`curl_multi_socket_action` with `CURL_CSELECT_IN`), libcurl works on that
/// transfer alone and trusts the readiness; `curl_multi_perform` visits every transfer in
/// flight, and each one it visits checks its socket with a `poll` of its own, asking again
/// what the loop's `poll` has just answered. A plain `poll` array, not
/// `epoll`: libcurl switches a socket between reading and writing on every request, which is
/// a free array update here and would be an `epoll_ctl` system call each time.
///
/// ## Two sides
/// What libcurl asks for (``wanted``, ``watched``, the timer) is changed by libcurl's callbacks,
/// which run inside whichever thread calls into the multi handle: the loop thread, or a caller
/// that starts its own transfer (``CurlEventLoop``). Those properties are touched only under the
/// loop's engine lock. The `pollfd` array the kernel reads (``PollSet``) belongs to the loop
/// thread alone, which rebuilds it from ``watched`` under the lock when ``isDirty`` says the
/// two differ, and then waits on it outside the lock. A caller that changed ``watched`` while
/// the loop waits sees ``isDirty`` and wakes the loop so that it waits on the new set.
///
/// ## Idle connections stay watched
/// When a transfer ends, libcurl stops watching its socket (`CURL_POLL_REMOVE`) and keeps the
/// connection for the next request. The socket stays in ``watched`` for reading: the next
/// request on that connection then asks for exactly what the array already has, so a caller
/// that sends it needs no wake-up of the loop (which would be one `eventfd` write and one
/// context switch of the loop thread per request). A socket that becomes
/// readable while libcurl wants nothing of it is passed to nobody: it leaves the set, so it
/// cannot make `poll` return again and again; a closed descriptor (`POLLNVAL`) leaves it too.
/// That is also what happens when a caller's thread runs a whole transfer itself (the answer
/// arrives while libcurl is still sending from that thread, and libcurl reads it there): the
/// answer woke the loop for a socket idle again by the time the loop looks, and with the
/// socket out of the set the next such transfer wakes nobody.
///
/// ## Input on an idle HTTP/1 connection drops it
/// Over HTTP/1 nothing ties a response to its request but the order, and libcurl 7.88 takes a
/// kept connection again when its socket has unread input (it notices only a closed one). Bytes
/// a server sends once a transfer has ended — a response nobody asked for, the tail of a body
/// longer than its `Content-Length`, a body after a `HEAD` or a `204` — would be read by the
/// next request on that connection as its answer, and every later answer there would be one
/// behind. So the socket of an HTTP/1 connection libcurl keeps after a transfer is ``idle``
/// until a transfer asks for it again, and an idle socket with input is dropped
/// (``drop(_:)``: shut down in both directions and drained, so that libcurl finds it dead and
/// opens a new connection, as later libcurl versions do themselves). Before libcurl may pick a
/// connection for a new transfer, every idle socket is checked (``dropIdleWithInput()``, one
/// `poll` with no wait): that is the guarantee, whether or not the loop still watches the
/// socket. The loop also drops one as soon as its `poll` sees it readable while it watches it
/// (``readiness(_:revents:)``), which closes it for the server early. Bytes that arrive after
/// the check, in the microseconds before the request goes out or after it, cannot be told
/// from its response: no HTTP/1 client can. What arrives with the end of a
/// response, in the same read, libcurl handles itself: it closes the connection after a body
/// longer than its `Content-Length`, and discards what follows the head of a `HEAD` or `204`
/// response or the last chunk of a chunked body. HTTP/2 connections are never idle in this
/// sense: their frames carry stream numbers, and a server may send `PING` or `SETTINGS` at any
/// time.
///
/// libcurl tells ``closed(_:)`` of every socket it closes (`CURLOPT_CLOSESOCKETFUNCTION`), so a
/// number in ``idle`` is always libcurl's own connection, never a descriptor of the
/// application's that took a freed number: only such a number is ever shut down.
final class CurlSocketInterest {
  /// What libcurl wants to hear about each socket of a transfer in flight, in `pollfd` events.
  private(set) var wanted: [Int32: Int16] = [:]
  /// What the next `poll` must watch: ``wanted`` plus idle connections, for reading.
  private(set) var watched: [Int32: Int16] = [:]
  /// The sockets of HTTP/1 connections libcurl keeps with no transfer on them: input on one
  /// is no answer to anything (see the type's documentation). Never in ``wanted``.
  private(set) var idle: Set<Int32> = []
  /// The sockets libcurl opened for connections (`CURLOPT_OPENSOCKETFUNCTION`) and has not
  /// closed yet: not the ones it makes for itself, such as its resolver's socket pair. A
  /// connection ``drop(_:)`` ended leaves it at once: libcurl keeps the dead socket until it
  /// next looks for a connection, which may be long after.
  private var connectionSockets: Set<Int32> = []
  /// How the connections stand, for readers without the engine lock (``publish()``).
  let gauge = CurlPoolGauge()
  /// How many idle connections were dropped because input (or the end of the stream) arrived
  /// on them.
  private(set) var droppedConnections = 0
  /// The `pollfd` array of ``dropIdleWithInput()``, kept for its capacity.
  private var idleProbe: [pollfd] = []
  /// ``watched`` changed since the loop last built its `pollfd` array from it.
  private(set) var isDirty = false
  /// When libcurl wants `curl_multi_socket_action(CURL_SOCKET_TIMEOUT)` called, in
  /// milliseconds of the monotonic clock; `nil` when it has no timeout pending.
  private(set) var deadline: Int64?
  /// Whether a descriptor number is open now; `fcntl(F_GETFD)` unless a test gives another.
  private let isOpen: (Int32) -> Bool

  /// An empty set that asks `isOpen` whether a descriptor `poll` called invalid is open now.
  init(isOpen: @escaping (Int32) -> Bool = CurlSocketInterest.isOpenDescriptor) {
    self.isOpen = isOpen
  }

  /// Whether `descriptor` is open in this process now.
  static func isOpenDescriptor(_ descriptor: Int32) -> Bool {
    fcntl(descriptor, F_GETFD) != -1
  }

  /// Makes this object the multi handle's socket and timer callbacks' target; it must
  /// outlive the multi handle's last call (its cleanup included).
  func install(on multi: UnsafeMutableRawPointer) {
    let context = Unmanaged.passUnretained(self).toOpaque()
    _ = courier_curl_multi_setopt_socket_callback(multi) { _, socket, what, context, _ in
      guard let context else { return 0 }
      Unmanaged<CurlSocketInterest>.fromOpaque(context).takeUnretainedValue()
        .watch(socket, what: what)
      return 0
    }
    _ = courier_curl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, context)
    _ = courier_curl_multi_setopt_timer_callback(multi) { _, milliseconds, context in
      guard let context else { return 0 }
      Unmanaged<CurlSocketInterest>.fromOpaque(context).takeUnretainedValue()
        .setTimer(milliseconds)
      return 0
    }
    _ = courier_curl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, context)
  }

  /// Makes this object the target of `easy`'s `CURLOPT_OPENSOCKETFUNCTION` and
  /// `CURLOPT_CLOSESOCKETFUNCTION`, which open and close every socket of the connections the
  /// handle's transfers make (libcurl keeps the callbacks with each connection); it must
  /// outlive the multi handle's last call.
  ///
  /// The socket is the one libcurl would open (`socket(family, socktype, protocol)`, which
  /// libcurl 7.88 does without close-on-exec), opened close-on-exec so that a process the
  /// application spawns never inherits a connection. Both callbacks also keep
  /// `connectionSockets`, which ``gauge`` counts.
  func installSocketCallbacks(on easy: UnsafeMutableRawPointer) -> CURLcode {
    let context = Unmanaged.passUnretained(self).toOpaque()
    let setOpen = courier_curl_easy_setopt_opensocket_callback(easy, CURLOPT_OPENSOCKETFUNCTION) {
      context, _, address in
      guard let address else { return -1 }
      let socket = CurlSocketInterest.openClosedOnExec(address.pointee)
      if socket >= 0, let context {
        Unmanaged<CurlSocketInterest>.fromOpaque(context).takeUnretainedValue().opened(socket)
      }
      return socket
    }
    guard setOpen == CURLE_OK else { return setOpen }
    let setOpenData = courier_curl_easy_setopt_pointer(easy, CURLOPT_OPENSOCKETDATA, context)
    guard setOpenData == CURLE_OK else { return setOpenData }
    let setClose = courier_curl_easy_setopt_closesocket_callback(
      easy, CURLOPT_CLOSESOCKETFUNCTION
    ) { context, socket in
      if let context {
        Unmanaged<CurlSocketInterest>.fromOpaque(context).takeUnretainedValue().closed(socket)
      }
      return close(socket)
    }
    guard setClose == CURLE_OK else { return setClose }
    return courier_curl_easy_setopt_pointer(easy, CURLOPT_CLOSESOCKETDATA, context)
  }

  /// A socket for `address`'s family, type and protocol, close-on-exec from the start where
  /// the system can (`SOCK_CLOEXEC`), else right after; -1 when `socket` fails.
  private static func openClosedOnExec(_ address: courier_curl_sockaddr) -> Int32 {
    #if canImport(Glibc)
      return socket(
        address.family, address.socktype | Int32(bitPattern: SOCK_CLOEXEC.rawValue),
        address.protocol)
    #else
      let descriptor = socket(address.family, address.socktype, address.protocol)
      if descriptor >= 0 { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
      return descriptor
    #endif
  }

  /// `CURLOPT_OPENSOCKETFUNCTION` opened `socket` for a connection.
  private func opened(_ socket: Int32) {
    connectionSockets.insert(socket)
    publish()
  }

  /// Publishes how the connections stand to ``gauge``: every socket libcurl opened for a
  /// connection and has not closed is open, unless ``drop(_:)`` ended it (the server closed
  /// it, or sent what nobody asked for) or the loop saw its server close it between
  /// transfers; of those, the HTTP/1 connections libcurl keeps between transfers are idle
  /// (``idle``). An HTTP/2 connection counts as in use while it is open: its streams come and
  /// go, and libcurl does not say when none is left. Called after each change of either set.
  private func publish() {
    let idle = self.idle.reduce(0) { connectionSockets.contains($1) ? $0 + 1 : $0 }
    gauge.publish(open: connectionSockets.count, idle: idle)
  }

  /// `CURLMOPT_SOCKETFUNCTION`: start, change or stop watching `socket`.
  func watch(_ socket: curl_socket_t, what: Int32) {
    var events = Int16(POLLIN)
    if what == CURL_POLL_REMOVE {
      wanted[socket] = nil
    } else {
      // A transfer uses the connection: what arrives now is its answer.
      if idle.remove(socket) != nil { publish() }
      events = 0
      if what & CURL_POLL_IN != 0 { events |= Int16(POLLIN) }
      if what & CURL_POLL_OUT != 0 { events |= Int16(POLLOUT) }
      wanted[socket] = events
    }
    if watched[socket] != events {
      watched[socket] = events
      isDirty = true
    }
  }

  /// A transfer ended and libcurl kept its HTTP/1 connection, whose socket is `socket`: from
  /// now on, until a transfer asks for it again, input on it is dropped with the connection.
  /// What ``watched`` holds is left as it is: adding a socket a stale readiness removed would
  /// wake the loop for every request a caller's thread runs from start to end.
  func becameIdle(_ socket: Int32) {
    guard socket >= 0, wanted[socket] == nil else { return }
    idle.insert(socket)
    publish()
  }

  /// `CURLOPT_CLOSESOCKETFUNCTION`: libcurl is closing `socket`; its number may be anyone's
  /// after this.
  func closed(_ socket: Int32) {
    connectionSockets.remove(socket)
    idle.remove(socket)
    publish()
    wanted[socket] = nil
    forget(socket)
  }

  /// Drops every idle connection that has input waiting (one `poll` of the idle sockets, with
  /// no wait): called before libcurl may pick a connection for a new transfer, so that input
  /// the loop has not seen yet is never read as that transfer's answer.
  func dropIdleWithInput() {
    guard !idle.isEmpty else { return }
    idleProbe.removeAll(keepingCapacity: true)
    for socket in idle { idleProbe.append(pollfd(fd: socket, events: Int16(POLLIN), revents: 0)) }
    let ready = idleProbe.withUnsafeMutableBufferPointer {
      poll($0.baseAddress, nfds_t($0.count), 0)
    }
    guard ready > 0 else { return }
    for probe in idleProbe where probe.revents != 0 && probe.revents & Int16(POLLNVAL) == 0 {
      drop(probe.fd)
      forget(probe.fd)
    }
  }

  /// Whether `socket` has input (or the end of its stream, or an error) now, without waiting.
  private static func hasInput(_ socket: Int32) -> Bool {
    var probe = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
    return poll(&probe, 1, 0) > 0 && probe.revents & Int16(POLLNVAL) == 0
  }

  /// Whether the peer of `socket` has closed its side (or the connection failed), without
  /// waiting and whatever input is still unread: a multiplexed connection has frames at any
  /// time, so input alone says nothing of its end. Only where `poll` reports a half-closed
  /// peer (`POLLRDHUP`, Linux); elsewhere only a connection closed both ways.
  private static func peerClosed(_ socket: Int32) -> Bool {
    #if os(Linux)
      // `POLLRDHUP` (0x2000 in asm-generic/poll.h): Glibc declares it for `_GNU_SOURCE` only,
      // which the Swift module does not see.
      let peerHalfClosed: Int16 = 0x2000
      let ended = peerHalfClosed | Int16(POLLHUP | POLLERR)
      var probe = pollfd(fd: socket, events: peerHalfClosed, revents: 0)
    #else
      let ended = Int16(POLLHUP | POLLERR)
      var probe = pollfd(fd: socket, events: 0, revents: 0)
    #endif
    return poll(&probe, 1, 0) > 0 && probe.revents & ended != 0
  }

  /// Ends the idle connection of `socket`, which has input: shut down in both directions (the
  /// server sees it closed) and its input read and discarded, so that libcurl's check before
  /// reuse finds the end of the stream and closes it. Input that keeps coming past the bytes
  /// drained here leaves libcurl a socket it may still take, but any request it sends there
  /// fails at once (the socket no longer writes), and libcurl then sends it again on a new
  /// connection.
  private func drop(_ socket: Int32) {
    idle.remove(socket)
    connectionSockets.remove(socket)
    publish()
    droppedConnections += 1
    _ = shutdown(socket, Int32(SHUT_RDWR))
    withUnsafeTemporaryAllocation(byteCount: 16 * 1024, alignment: 1) { buffer in
      for _ in 0..<Self.drainedReads {
        guard recv(socket, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT)) > 0 else {
          return
        }
      }
    }
  }

  /// The most 16 KiB reads ``drop(_:)`` makes of a dropped connection's input.
  static let drainedReads = 64

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

  /// The `CURL_CSELECT_*` bits for a socket `poll` found ready, or `nil` when libcurl does not
  /// want it (that socket leaves the watched set, and an ``idle`` one is dropped: input on it is
  /// no answer to anything) or when what `poll` saw is no longer about the socket of that
  /// number.
  func readiness(_ socket: Int32, revents: Int16) -> Int32? {
    guard wanted[socket] != nil else {
      // What `poll` saw may be gone: a caller's thread may have run a whole transfer on this
      // connection since, reading the answer `poll` saw arrive, and left it idle again. Then
      // it stays idle (the next start checks it) but leaves the set like any other.
      if idle.contains(socket) {
        if Self.hasInput(socket) { drop(socket) }
      } else if connectionSockets.contains(socket), Self.peerClosed(socket) {
        // A connection between transfers that is not ``idle`` (HTTP/2) and that its server
        // closed (its idle timeout: `GOAWAY`, then the end of the stream): libcurl closes it
        // only when it next looks for a connection, so it stops counting as open now.
        connectionSockets.remove(socket)
        publish()
      }
      forget(socket)
      return nil
    }
    // `POLLNVAL` says the descriptor was not open when `poll` looked. If it is open now, a
    // caller's thread (callers start transfers while the loop polls) had libcurl close it
    // and open a new socket that took its number: `poll` said nothing about that one, and
    // passing the error on would fail its transfer ("select/poll returned error", libcurl
    // error 55). It stays watched, so the next `poll` looks at it.
    if revents & Int16(POLLNVAL) != 0, isOpen(socket) { return nil }
    let revents = Int32(revents)
    var events: Int32 = 0
    if revents & Int32(POLLIN | POLLHUP) != 0 { events |= CURL_CSELECT_IN }
    if revents & Int32(POLLOUT) != 0 { events |= CURL_CSELECT_OUT }
    if revents & Int32(POLLERR | POLLNVAL) != 0 { events |= CURL_CSELECT_ERR }
    // A descriptor closed without libcurl saying so would make every poll return at once.
    if revents & Int32(POLLNVAL) != 0 { forget(socket) }
    return events
  }

  /// Stops watching `socket` until libcurl asks for it again.
  private func forget(_ socket: Int32) {
    if watched.removeValue(forKey: socket) != nil { isDirty = true }
  }

  /// Marks ``watched`` as built into the loop's array.
  func markBuilt() { isDirty = false }

  /// How long the loop may wait, at most `limit` milliseconds, and the monotonic millisecond
  /// at which that wait ends.
  func waitTime(limit: Int32) -> (timeout: Int32, ends: Int64) {
    let now = Self.now()
    var timeout = limit
    if let deadline { timeout = Int32(clamping: max(0, min(Int64(limit), deadline - now))) }
    return (timeout, now + Int64(timeout))
  }

  /// The monotonic clock in milliseconds.
  static func now() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000 + Int64(time.tv_nsec) / 1_000_000
  }
}
