import CCourierCurl
import CourierCore
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `curl_global_init` for the whole process, exactly once: a global constant is initialised
/// lazily, on first use, under the runtime's `swift_once` — thread-safe, as libcurl requires.
private let curlGlobalInitResult = Int(courier_curl_global_init().rawValue)

/// One request on its way through a ``CurlEventLoop``: the request, the caller's continuation,
/// and whether it was cancelled. Shared by the caller, the cancellation handler and the loop
/// thread; its state is behind a lock (``PThreadLock``), which is what makes the continuation resume exactly
/// once whoever finishes first (response, error, cancellation, shutdown). That lock is why an
/// `UnsafeContinuation` is enough: a checked one would check the same thing again, at the
/// cost of one more allocation per request.
final class CurlTicket: Sendable {
  let request: Request
  let limits: CurlTransferLimits

  private struct State {
    var continuation: UnsafeContinuation<Response, any Error>?
    var isCancelled = false
    var isFinished = false
  }

  private let state = PThreadLock(State())

  init(request: Request, limits: CurlTransferLimits) {
    self.request = request
    self.limits = limits
  }

  /// Keeps the caller's continuation. When the request was cancelled already, resumes it with
  /// the cancellation at once and returns `false`: the ticket must not be submitted.
  func attach(_ continuation: UnsafeContinuation<Response, any Error>) -> Bool {
    let cancelled = state.withLock { state in
      if state.isCancelled {
        state.isFinished = true
        return true
      }
      state.continuation = continuation
      return false
    }
    if cancelled { continuation.resume(throwing: CurlEventLoop.cancelledError(request)) }
    return !cancelled
  }

  /// Marks the ticket cancelled; `true` the first time, while it has not finished.
  func markCancelled() -> Bool {
    state.withLock { state in
      guard !state.isCancelled, !state.isFinished else { return false }
      state.isCancelled = true
      return true
    }
  }

  /// Whether the request was cancelled.
  var isCancelled: Bool { state.withLock { $0.isCancelled } }

  /// Orders the caller after ``finish(_:)``: takes the lock `finish` released before resuming.
  ///
  /// The response (its headers, body and the lazily read header list) is built on the loop
  /// thread and read by the caller's task. The continuation orders the two, but when the
  /// transfer ends before the task has suspended, Swift's runtime resumes the task straight
  /// from an atomic status (`swift_continuation_await`'s "already resumed" path), in library
  /// code ThreadSanitizer does not see, so it reported a race between building the headers
  /// and reading `Location` (1 run in about 60 of the redirect suite). Taking this
  /// uncontended `pthread` lock once per transfer (tens of nanoseconds) gives ThreadSanitizer
  /// the edge that exists anyway, so its reports on CourierCurl stay real ones.
  func joinFinish() {
    state.withLock { _ in }
  }

  /// Resumes the caller with `result`, unless it was resumed already.
  func finish(_ result: Result<Response, CourierError>) {
    let continuation = state.withLock { state -> UnsafeContinuation<Response, any Error>? in
      guard !state.isFinished else { return nil }
      state.isFinished = true
      defer { state.continuation = nil }
      return state.continuation
    }
    continuation?.resume(with: result.mapError { $0 as any Error })
  }
}

/// The event loop of one ``CurlTransport``: a thread that drives a `CURLM` through libcurl's
/// socket interface (`curl_multi_socket_action`), waiting in one `poll` on the sockets and the
/// timer libcurl asks for (``CurlSocketPoller``).
///
/// Callers append tickets to a queue under a lock (``PThreadLock``) and, when the loop thread
/// is asleep in that `poll`, wake it through an `eventfd` the poll watches too; cancellations
/// travel the same way. The thread owns everything else — the multi
/// handle's transfers, the table of transfers in flight (``CurlLoopCore``), the spare easy
/// handles — so no libcurl handle is ever touched by two threads.
///
/// The `eventfd` replaces `curl_multi_wakeup`, libcurl's own wake-up: that is a `send` on a
/// socket pair, which the loop then drains with two `recv` calls; an `eventfd` is one 8-byte
/// `write` and one `read`, with no socket buffers (measured: 2–4 µs of CPU per request one at a
/// time). A caller wakes the thread only when it sleeps: the loop sets ``isPolling`` and then
/// reads ``hasWork``; a caller sets ``hasWork`` and then reads ``isPolling`` (both sequentially
/// consistent), so either the loop sees the work before it sleeps or the caller sees it
/// asleep and wakes it. The write happens *after* the queue's lock is released: under it, the
/// woken loop thread would find the lock still held (measured: 4–5 % of a request's CPU in the
/// mutex's slow path). A caller that is about to wake counts itself in ``wakers`` while still
/// holding the lock; the loop thread marks the loop stopped under the lock (no new waker can
/// start) and waits for ``wakers`` to reach zero before it closes the descriptor, so no write
/// can reach a closed (or reused) descriptor.
final class CurlEventLoop: Sendable {
  private struct Shared {
    /// The multi handle's address; `nil` once cleaned up (no wake-up may start then).
    var multi: Int?
    var submitted: [CurlTicket] = []
    var cancelled: [CurlTicket] = []
    var isShutDown = false
    var thread: NativeThread?
    /// Why the loop could not start, when it could not.
    var startupFailure: String?
  }

  private let shared: PThreadLock<Shared>
  private let connections = Atomic<Int>(0)
  /// Callers between leaving the lock and returning from ``wake()``.
  private let wakers = Atomic<Int>(0)
  /// Set when a ticket, a cancellation or the shutdown was queued, so the loop thread takes the
  /// lock only when there is something to take. Set after the lock is released and before the
  /// wake-up: set under it, the loop thread would see it and spin on the lock still held.
  private let hasWork = Atomic<Bool>(false)
  /// The loop thread is in (or about to enter) its `poll`: a caller that queued work must
  /// wake it.
  private let isPolling = Atomic<Bool>(false)
  /// The descriptors that wake the loop thread from its `poll` (one `eventfd` on
  /// Linux: both the same); `-1` when they could not be opened (the loop does not start then).
  private let wakeReader: Int32
  private let wakeWriter: Int32
  let configuration: CurlTransport.Configuration

  init(configuration: CurlTransport.Configuration) {
    self.configuration = configuration
    var reader: Int32 = -1
    var writer: Int32 = -1
    let opened = courier_wake_open(&reader, &writer) == 0
    (wakeReader, wakeWriter) = (reader, writer)
    var state = Shared()
    if !opened {
      state.startupFailure = "eventfd failed: \(String(cString: strerror(errno)))"
    } else if curlGlobalInitResult != 0 {
      state.startupFailure = "curl_global_init failed with \(curlGlobalInitResult)"
    } else if let multi = curl_multi_init() {
      let perHost = max(1, configuration.maximumConnectionsPerHost)
      _ = courier_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, perHost)
      // libcurl's own cache size is 4× the transfers in flight *now*: between bursts it
      // shrinks and closes idle connections, which then have to be opened again.
      _ = courier_curl_multi_setopt_long(
        multi, CURLMOPT_MAXCONNECTS,
        max(CurlTransport.Configuration.minimumIdleConnections, 4 * perHost))
      state.multi = Int(bitPattern: multi)
    } else {
      state.startupFailure = "curl_multi_init failed"
    }
    let ready = state.multi != nil
    shared = PThreadLock(state)
    guard ready else {
      if opened { courier_wake_close(wakeReader, wakeWriter) }
      return
    }
    if let thread = NativeThread.spawn(name: "courier-curl", { [self] in run() }) {
      shared.withLock { $0.thread = thread }
    } else {
      let multi = shared.withLock { state -> Int? in
        state.startupFailure = "the event-loop thread could not be created"
        defer { state.multi = nil }
        return state.multi
      }
      if let multi { curl_multi_cleanup(UnsafeMutableRawPointer(bitPattern: multi)) }
      courier_wake_close(wakeReader, wakeWriter)
    }
  }

  // MARK: Callers

  /// Runs one transfer and returns its response; see ``CurlTransport/send(_:)``.
  func perform(_ request: Request, limits: CurlTransferLimits) async throws -> Response {
    if RequestCancellation.isCancelled { throw Self.cancelledError(request) }
    let ticket = CurlTicket(request: request, limits: limits)
    defer { ticket.joinFinish() }
    return try await RequestCancellation.withCancellationHandler {
      try await withUnsafeThrowingContinuation { continuation in
        guard ticket.attach(continuation) else { return }
        submit(ticket)
      }
    } onCancel: { [self] in
      if ticket.markCancelled() { cancel(ticket) }
    }
  }

  private func submit(_ ticket: CurlTicket) {
    let accepted = shared.withLock { state -> Bool in
      guard !state.isShutDown, state.multi != nil else { return false }
      state.submitted.append(ticket)
      // Counted under the lock: the loop cannot close the descriptor before ``wake()`` ends.
      wakers.add(1, ordering: .sequentiallyConsistent)
      return true
    }
    if accepted {
      wake()
      return
    }
    let (kind, refusal) = shared.withLock { state in
      state.isShutDown
        ? (
          CourierError.Kind.invalidRequest,
          "CurlTransport was shut down; create a new transport to send more"
        )
        : (.transport, state.startupFailure ?? "the event loop is not running")
    }
    ticket.finish(
      .failure(
        CourierError(
          kind: kind, debugMessage: refusal, request: ticket.request, attempts: 1,
          stage: "transport")))
  }

  private func cancel(_ ticket: CurlTicket) {
    let queued = shared.withLock { state -> Bool in
      guard state.multi != nil else { return false }
      state.cancelled.append(ticket)
      wakers.add(1, ordering: .sequentiallyConsistent)
      return true
    }
    if queued { wake() }
  }

  /// Tells the loop there is work and wakes it when it sleeps; the caller counted itself in
  /// ``wakers`` under the lock, after queueing the work.
  private func wake() {
    hasWork.store(true, ordering: .sequentiallyConsistent)
    if isPolling.load(ordering: .sequentiallyConsistent) {
      courier_wake_signal(wakeWriter)
    }
    wakers.subtract(1, ordering: .sequentiallyConsistent)
  }

  /// Stops the loop: in-flight and queued transfers fail, connections close, the thread is
  /// joined (detached instead when called on the loop thread itself).
  func shutdown() {
    let (thread, running) = shared.withLock { state -> (NativeThread?, Bool) in
      guard !state.isShutDown else { return (nil, false) }
      state.isShutDown = true
      if state.multi != nil { wakers.add(1, ordering: .sequentiallyConsistent) }
      defer { state.thread = nil }
      return (state.thread, state.multi != nil)
    }
    if running { wake() }
    guard let thread else { return }
    if thread.isCurrent { thread.detach() } else { thread.join() }
  }

  var isShutDown: Bool { shared.withLock { $0.isShutDown } }

  var openedConnections: Int { connections.load(ordering: .relaxed) }

  func addConnections(_ count: Int) {
    if count > 0 { connections.add(count, ordering: .relaxed) }
  }

  static func cancelledError(_ request: Request) -> CourierError {
    CourierError(
      kind: .cancelled, debugMessage: "the request was cancelled; its libcurl transfer was removed",
      request: request, attempts: 1, stage: "transport")
  }

  static func shutdownError(_ request: Request) -> CourierError {
    CourierError(
      kind: .cancelled,
      debugMessage: "CurlTransport was shut down while the request was in flight",
      request: request, attempts: 1, stage: "transport")
  }

  // MARK: The loop thread

  private func run() {
    // All of libcurl's socket I/O happens on this thread: with SIGPIPE blocked here, a write
    // to a socket the peer closed (OpenSSL does not use MSG_NOSIGNAL) returns EPIPE instead of
    // killing the process, without changing the signal disposition of the whole process.
    var signals = sigset_t()
    sigemptyset(&signals)
    sigaddset(&signals, SIGPIPE)
    pthread_sigmask(SIG_BLOCK, &signals, nil)

    guard let address = shared.withLock({ $0.multi }),
      let multi = UnsafeMutableRawPointer(bitPattern: address)
    else { return }
    let core = CurlLoopCore(multi: multi, configuration: configuration, loop: self)
    let poller = CurlSocketPoller(wakeReader: wakeReader)
    poller.install(on: multi)
    var running: Int32 = 0
    while true {
      let (submitted, cancelled, stopping): ([CurlTicket], [CurlTicket], Bool) =
        hasWork.exchange(false, ordering: .sequentiallyConsistent)
        ? shared.withLock { state in
          defer {
            state.submitted = []
            state.cancelled = []
          }
          return (state.submitted, state.cancelled, state.isShutDown)
        } : ([], [], false)
      for ticket in submitted {
        if stopping {
          ticket.finish(.failure(Self.shutdownError(ticket.request)))
        } else {
          core.start(ticket)
        }
      }
      for ticket in cancelled { core.cancel(ticket) }
      if stopping { break }
      // A transfer just added asks for its timeout at once: that starts it.
      if poller.takeDueTimeout() {
        _ = curl_multi_socket_action(multi, courier_curl_socket_timeout, 0, &running)
        core.collectFinished()
      }
      // Asleep from here: a caller that queues work now sees it and wakes the loop; work
      // queued before is seen here, and the loop goes round again instead of sleeping.
      isPolling.store(true, ordering: .sequentiallyConsistent)
      if hasWork.load(ordering: .sequentiallyConsistent) {
        isPolling.store(false, ordering: .sequentiallyConsistent)
        continue
      }
      // Never longer than a second, as a safety net; libcurl's own timeout shortens it.
      poller.wait(limit: 1_000)
      isPolling.store(false, ordering: .sequentiallyConsistent)
      for (socket, events) in poller.ready {
        _ = curl_multi_socket_action(multi, socket, events, &running)
      }
      if !poller.ready.isEmpty { core.collectFinished() }
    }
    core.shutDown()
    // Cleared under the lock: no new waker can start; then wait for those under way (a few
    // instructions each) so none can write to a closed descriptor or wake a freed handle.
    shared.withLock { $0.multi = nil }
    while wakers.load(ordering: .sequentiallyConsistent) > 0 { sched_yield() }
    curl_multi_cleanup(multi)
    // The poller received libcurl's last socket callbacks during the cleanup.
    withExtendedLifetime(poller) {}
    courier_wake_close(wakeReader, wakeWriter)
  }
}

/// What only the loop thread touches: the transfers in flight, owned by this table (never
/// reachable only through `CURLOPT_PRIVATE`, so none can be forgotten with its caller waiting),
/// and the easy handles kept for reuse.
final class CurlLoopCore {
  /// The most easy handles kept for reuse after their transfer ended.
  static let spareHandleLimit = 64

  private let multi: UnsafeMutableRawPointer
  private let configuration: CurlTransport.Configuration
  private let loop: CurlEventLoop
  private var byTicket: [ObjectIdentifier: CurlTransfer] = [:]
  private var byHandle: [UnsafeMutableRawPointer: CurlTransfer] = [:]
  private var spareHandles: [CurlEasyHandle] = []

  init(
    multi: UnsafeMutableRawPointer, configuration: CurlTransport.Configuration, loop: CurlEventLoop
  ) {
    self.multi = multi
    self.configuration = configuration
    self.loop = loop
  }

  /// How many transfers are in flight.
  var count: Int { byTicket.count }

  /// Configures an easy handle for `ticket` and adds it to the multi handle, or fails the
  /// ticket.
  func start(_ ticket: CurlTicket) {
    if ticket.isCancelled {
      ticket.finish(.failure(CurlEventLoop.cancelledError(ticket.request)))
      return
    }
    guard let handle = spareHandles.popLast() ?? CurlEasyHandle() else {
      ticket.finish(.failure(failure("curl_easy_init failed", ticket)))
      return
    }
    let transfer: CurlTransfer
    do {
      transfer = try CurlTransfer(ticket: ticket, handle: handle, configuration: configuration)
    } catch {
      handle.needsReset = true
      recycle(handle)
      ticket.finish(.failure(error))
      return
    }
    let easy = handle.easy
    let added = curl_multi_add_handle(multi, easy)
    guard added == CURLM_OK else {
      transfer.release()
      handle.needsReset = true
      recycle(handle)
      ticket.finish(.failure(failure("curl_multi_add_handle failed: \(added.rawValue)", ticket)))
      return
    }
    byTicket[ObjectIdentifier(ticket)] = transfer
    byHandle[easy] = transfer
  }

  /// Removes a cancelled transfer at once (libcurl closes the connection of a transfer removed
  /// before it completed) and fails its caller with ``CourierError/Kind/cancelled``.
  func cancel(_ ticket: CurlTicket) {
    guard let transfer = byTicket.removeValue(forKey: ObjectIdentifier(ticket)) else { return }
    end(transfer, with: .failure(CurlEventLoop.cancelledError(ticket.request)))
  }

  /// Finishes every transfer libcurl reports done.
  func collectFinished() {
    var left: Int32 = 0
    while let message = curl_multi_info_read(multi, &left) {
      guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else {
        continue
      }
      let code = message.pointee.data.result
      guard let transfer = byHandle[easy] else {
        // Not ours (cannot happen): never leave a handle in the multi.
        curl_multi_remove_handle(multi, easy)
        continue
      }
      byTicket[ObjectIdentifier(transfer.ticket)] = nil
      end(transfer, with: transfer.complete(code))
    }
  }

  /// Fails every transfer in flight with the shutdown error and frees every easy handle.
  func shutDown() {
    for transfer in byTicket.values {
      end(transfer, with: .failure(CurlEventLoop.shutdownError(transfer.ticket.request)))
    }
    byTicket.removeAll()
    spareHandles.removeAll()
  }

  private func end(_ transfer: CurlTransfer, with result: Result<Response, CourierError>) {
    byHandle[transfer.easy] = nil
    curl_multi_remove_handle(multi, transfer.easy)
    loop.addConnections(transfer.connectionsOpened())
    transfer.release()
    if case .failure = result { transfer.handle.needsReset = true }
    recycle(transfer.handle)
    transfer.ticket.finish(result)
  }

  /// Keeps `handle` for another transfer, or frees it (its `deinit`) past the limit.
  private func recycle(_ handle: CurlEasyHandle) {
    guard spareHandles.count < Self.spareHandleLimit else { return }
    handle.prepareForReuse()
    spareHandles.append(handle)
  }

  private func failure(_ message: String, _ ticket: CurlTicket) -> CourierError {
    CourierError(
      kind: .transport, debugMessage: message, request: ticket.request, attempts: 1,
      stage: "transport")
  }
}
