internal import CCourierCurl
import CourierCore
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One event loop of a ``CurlTransport`` (it has ``CurlTransport/Configuration/eventLoops``
/// of them): a thread that drives a `CURLM` through libcurl's socket interface
/// (`curl_multi_socket_action`), waiting in one `poll` on the sockets and the timer libcurl
/// asks for (``CurlSocketInterest``, ``PollSet``).
///
/// ## Who touches libcurl
/// The multi handle, the table of transfers in flight (``CurlLoopCore``), the spare easy
/// handles and what libcurl asks to watch (``CurlSocketInterest``) live in one ``Engine``
/// behind one lock (``PThreadLock``); libcurl is only ever called with that lock held, so no
/// handle is used by two threads at once (libcurl's rule). The loop thread holds it while it
/// hands ready sockets and due timeouts to libcurl, and lets it go while it waits in `poll`.
///
/// ## Callers start their own transfers
/// A caller takes the lock, adds its transfer and runs libcurl's due timeout itself, which
/// sends the request on a kept-alive connection (or starts connecting) from the caller's own
/// thread, then goes back to waiting for its continuation: the loop thread only hears about the
/// response. It wakes the loop only when the loop sleeps in a `poll` that no longer covers what
/// libcurl now wants (a new connection, a socket to write to, an earlier timeout). One request
/// at a time on a kept-alive connection, the loop thread is woken once per request (by the
/// response) instead of twice. A caller does this only when no other transfer is in flight
/// (``startHere(_:)`` says why); ``Configuration/startsTransfersOnCallingThread`` turns it off.
///
/// This needs libcurl 7.88 or later, checked at run time: since then every socket write,
/// OpenSSL's included (libcurl's own BIO, "OpenSSL CF BIO"), is a `send` with `MSG_NOSIGNAL`,
/// so a caller's thread, where `SIGPIPE` is not blocked, can never receive one. With an older
/// libcurl, or with the option off, callers queue their tickets for the loop thread.
///
/// ## Queued work
/// Tickets queued for the loop thread, cancellations and the shutdown go through a queue under
/// a second lock and, when the loop thread is asleep in its `poll`, an `eventfd` the poll
/// watches too. A caller wakes the thread only when it sleeps: the loop sets ``isPolling`` and
/// then reads ``hasWork``; a caller sets ``hasWork`` and then reads ``isPolling`` (both
/// sequentially consistent), so either the loop sees the work before it sleeps or the caller
/// sees it asleep and wakes it. The write happens *after* the queue's lock is released: under
/// it, the woken loop thread would find the lock still held and wait for it in the mutex's
/// slow path. A caller that is about to wake counts itself in ``wakers``
/// while still holding a lock the loop takes to stop; the loop thread marks the loop stopped
/// under both locks (no new waker can start) and waits for ``wakers`` to reach zero before it
/// closes the descriptor, so no write can reach a closed (or reused) descriptor.
///
/// The wake-up descriptor is the loop's own (`courier_wake_open`), not libcurl's
/// `curl_multi_wakeup`: that one wakes only `curl_multi_poll`, which reads the multi handle's
/// transfers and timers to build what it waits on, so the loop could not wait in it while a
/// caller starts a transfer under the engine lock. An `eventfd` is also one 8-byte `write` and
/// one `read` per wake-up, where libcurl's socket pair is a `send` and two `recv` calls.
///
/// ## Resuming callers
/// A finished transfer's caller is resumed after the lock is released (``Engine/completions``),
/// so the woken caller, whose next request takes the same lock, does not find it held.
final class CurlEventLoop: Sendable {
  private struct Shared {
    /// The multi handle is alive; `false` once cleaned up (no wake-up may start then).
    var running = false
    var submitted: [CurlTicket] = []
    var cancelled: [CurlTicket] = []
    /// Streamed bodies whose reader made room: their paused transfers go on.
    var resumed: [CurlTicket] = []
    /// Stream request bodies with bytes (or their end) ready: their paused transfers go on.
    var uploads: [CurlTicket] = []
    var isShutDown = false
    var thread: NativeThread?
    /// Why the loop could not start, when it could not.
    var startupFailure: String?
  }

  private let shared: PThreadLock<Shared>
  /// `nil` before the loop could start and after it stopped.
  private let engine: PThreadLock<Engine?>
  /// The core's connection count, readable without the lock.
  private let connections: CurlConnectionCounter
  /// How the loop's connections stand, readable without the lock.
  private let gauge: CurlPoolGauge
  /// Callers between leaving a lock and returning from a wake-up.
  private let wakers = Atomic<Int>(0)
  /// Set when a ticket, a cancellation or the shutdown was queued, so the loop thread takes the
  /// lock only when there is something to take. Set after the lock is released and before the
  /// wake-up: set under it, the loop thread would see it and spin on the lock still held.
  private let hasWork = Atomic<Bool>(false)
  /// The loop thread is in (or about to enter) its `poll`: a caller that queued work must
  /// wake it.
  private let isPolling = Atomic<Bool>(false)
  /// How often a caller woke the loop thread through the `eventfd`, and how many turns the
  /// loop has made: what the tests read to see that a request started on its caller's thread
  /// wakes nothing, and that an idle connection the server closed does not keep `poll` busy.
  let wakeUps = Atomic<Int>(0)
  let turns = Atomic<Int>(0)
  /// How often a streamed body's reader asked for a paused transfer to go on: what the tests
  /// read to see that a full buffer did pause it.
  let streamResumes = Atomic<Int>(0)
  /// The callers inside ``perform(_:limits:)``: one that finds itself alone may start its own
  /// transfer. Counted per call, not per transfer in flight: with 16 requests at once a
  /// caller whose response was just handed back is still inside until its task runs again,
  /// so the count stays high even when the loop has momentarily finished every transfer.
  private let callers = Atomic<Int>(0)
  /// Callers may start their own transfers (see the type's documentation).
  private let callersStartTransfers: Bool
  /// The descriptors that wake the loop thread from its `poll` (one `eventfd` on
  /// Linux: both the same); `-1` when they could not be opened (the loop does not start then).
  private let wakeReader: Int32
  private let wakeWriter: Int32
  let configuration: CurlTransport.Configuration

  /// The first libcurl whose every socket write, OpenSSL's included, is a `send` with
  /// `MSG_NOSIGNAL` (7.88.0).
  static let versionWithoutSIGPIPE: UInt32 = 0x07_58_00

  /// Creates the loop and starts its thread; `hostLimit` is the transport's whole
  /// ``CurlTransport/Configuration/maximumConnectionsPerHost`` when `configuration` holds this
  /// loop's share of it (for the messages of requests that waited too long).
  init(configuration: CurlTransport.Configuration, hostLimit: Int? = nil) {
    self.configuration = configuration
    var reader: Int32 = -1
    var writer: Int32 = -1
    let opened = courier_wake_open(&reader, &writer) == 0
    (wakeReader, wakeWriter) = (reader, writer)
    var state = Shared()
    var engine: Engine?
    var gauge = CurlPoolGauge()
    if !opened {
      state.startupFailure = "eventfd failed: \(String(cString: strerror(errno)))"
    } else if let failure = courier_curl_load_failure() {
      state.startupFailure = "CurlTransport cannot start: " + String(cString: failure)
    } else if let multi = courier_curl_multi_init() {
      let perHost = configuration.connectionLimit
      _ = courier_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, perHost)
      // libcurl's own cache size is 4× the transfers in flight *now*: between bursts it
      // shrinks and closes idle connections, which then have to be opened again.
      _ = courier_curl_multi_setopt_long(
        multi, CURLMOPT_MAXCONNECTS,
        max(CurlTransport.Configuration.minimumIdleConnections, 4 * perHost))
      let interest = CurlSocketInterest()
      interest.install(on: multi)
      gauge = interest.gauge
      engine = Engine(
        multi: multi,
        core: CurlLoopCore(
          multi: multi, configuration: configuration, sockets: interest, hostLimit: hostLimit),
        interest: interest)
      state.running = true
    } else {
      state.startupFailure = "curl_multi_init failed"
    }
    connections = engine?.core.connections ?? CurlConnectionCounter()
    self.gauge = gauge
    callersStartTransfers =
      configuration.startsTransfersOnCallingThread
      && courier_curl_version_num() >= Self.versionWithoutSIGPIPE
    shared = PThreadLock(state)
    self.engine = PThreadLock(engine)
    guard let engine else {
      if opened { courier_wake_close(wakeReader, wakeWriter) }
      return
    }
    if let thread = NativeThread.spawn(name: "courier-curl", { [self] in run() }) {
      shared.withLock { $0.thread = thread }
    } else {
      shared.withLock { state in
        state.startupFailure = "the event-loop thread could not be created"
        state.running = false
      }
      self.engine.withLock { $0 = nil }
      courier_curl_multi_cleanup(engine.multi)
      withExtendedLifetime(engine.interest) {}
      courier_wake_close(wakeReader, wakeWriter)
    }
  }

  // MARK: Callers

  /// Runs one transfer and returns its response; see ``CurlTransport/send(_:)``. `origin`:
  /// the request's, as ``CurlOriginQueue/originAndScheme(of:)`` reads it.
  func perform(
    _ request: Request, limits: CurlTransferLimits, origin: (origin: String, secure: Bool)
  ) async throws -> Response {
    if RequestCancellation.isCancelled { throw Self.cancelledError(request) }
    // A streamed response or request body asks this loop to resume its transfer.
    let streams =
      (!request.attributes.isEmpty && request.attributes[ResponseStreamAttribute.self] != nil)
      || request.body.isStream
    let ticket = CurlTicket(
      request: request, limits: limits, origin: origin, loop: streams ? self : nil)
    let alone = callers.wrappingAdd(1, ordering: .relaxed).newValue == 1
    defer {
      callers.wrappingSubtract(1, ordering: .relaxed)
      ticket.joinFinish()
    }
    return try await RequestCancellation.withCancellationHandler {
      try await withUnsafeThrowingContinuation { continuation in
        guard ticket.attach(continuation) else { return }
        if !callersStartTransfers || !alone || !startHere(ticket) { submit(ticket) }
      }
    } onCancel: { [self] in
      if ticket.markCancelled() { cancel(ticket) }
    }
  }

  /// Starts `ticket`'s transfer on the calling thread when no other transfer is in flight (its
  /// caller found itself alone in ``perform(_:limits:)``); `false` otherwise, when the engine
  /// lock is busy (the loop thread is handing ready sockets to libcurl, or another caller is
  /// starting its transfer) or when the loop has stopped: the ticket then goes through the
  /// queue, which needs no wake-up while the loop is busy (and gives the refusal when it has
  /// stopped).
  ///
  /// Only with nothing in flight, because that is where it pays. One request at a time, the
  /// loop thread sleeps between requests, and starting here saves its wake-up. With many
  /// requests at once the loop thread is awake handing responses to libcurl anyway and starts
  /// queued transfers in the same turn, while starting them on the callers' threads would move
  /// libcurl's state between cores and make the callers contend for the lock. For the same
  /// reason the lock is tried, not waited for, and "alone" counts the callers inside
  /// ``perform(_:limits:)``, not the transfers in flight: with many requests at once those
  /// drop to none whenever the loop finishes a burst before the callers' tasks have run again.
  /// The figures are in Docs/Benchmarks.md.
  private func startHere(_ ticket: CurlTicket) -> Bool {
    var completions: [CurlLoopCore.Completion] = []
    let outcome = engine.withLockIfAvailable { engine -> Bool? in
      guard engine != nil, engine!.core.count == 0 else { return nil }
      engine!.core.start(ticket, completions: &engine!.completions)
      engine!.runDueTimeout()
      if !engine!.completions.isEmpty { swap(&completions, &engine!.completions) }
      guard engine!.loopIsPolling,
        engine!.interest.isDirty || (engine!.interest.deadline ?? .max) < engine!.pollEnds
      else { return false }
      // Counted under the lock: the loop cannot close the descriptor before the write.
      wakers.add(1, ordering: .sequentiallyConsistent)
      return true
    }
    guard let wakes = outcome ?? nil else { return false }
    if wakes {
      wakeUps.add(1, ordering: .relaxed)
      courier_wake_signal(wakeWriter)
      wakers.subtract(1, ordering: .sequentiallyConsistent)
    }
    resume(&completions)
    return true
  }

  private func submit(_ ticket: CurlTicket) {
    let accepted = shared.withLock { state -> Bool in
      guard !state.isShutDown, state.running else { return false }
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

  /// Removes `ticket`'s transfer (or takes it out of the waiting line) and fails its caller or
  /// its streamed body with ``CourierError/Kind/cancelled``.
  func cancel(_ ticket: CurlTicket) {
    queue(ticket, in: \.cancelled)
  }

  /// Lets `ticket`'s transfer, paused because its streamed body's buffer was full, go on.
  func resumeStream(_ ticket: CurlTicket) {
    streamResumes.add(1, ordering: .relaxed)
    queue(ticket, in: \.resumed)
  }

  /// Lets `ticket`'s transfer, paused because its stream request body had no bytes ready,
  /// go on: the body's producer has some now, or has ended.
  func resumeUpload(_ ticket: CurlTicket) {
    queue(ticket, in: \.uploads)
  }

  /// Appends `ticket` to one of the loop's queues and wakes the loop, while it runs.
  private func queue(_ ticket: CurlTicket, in list: WritableKeyPath<Shared, [CurlTicket]>) {
    let queued = shared.withLock { state -> Bool in
      guard state.running else { return false }
      state[keyPath: list].append(ticket)
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
      wakeUps.add(1, ordering: .relaxed)
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
      if state.running { wakers.add(1, ordering: .sequentiallyConsistent) }
      defer { state.thread = nil }
      return (state.thread, state.running)
    }
    if running { wake() }
    guard let thread else { return }
    if thread.isCurrent { thread.detach() } else { thread.join() }
  }

  var isShutDown: Bool { shared.withLock { $0.isShutDown } }

  /// How many callers are inside ``perform(_:limits:)``.
  var callersInside: Int { callers.load(ordering: .relaxed) }

  var openedConnections: Int { connections.count }

  /// How this loop's connections stand, as last published under the engine lock; read
  /// without it.
  var poolFigures: ConnectionPoolFigures { gauge.figures }

  /// How many transfers are in libcurl (not counting those waiting their turn).
  var transfersInFlight: Int { engine.withLock { $0?.core.count ?? 0 } }

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

  /// The loop thread: takes queued work, hands libcurl its due timeout and the sockets `poll`
  /// found ready, resumes the callers of finished transfers, and sleeps in `poll` between
  /// turns, until the shutdown.
  private func run() {
    Self.blockSIGPIPE()
    let pollSet = PollSet(wakeReader: wakeReader)
    // The completions taken out of the engine, kept between rounds for their capacity.
    var completions: [CurlLoopCore.Completion] = []
    while true {
      turns.add(1, ordering: .relaxed)
      let work = takeQueuedWork()
      let timeout = engine.withLock { engine -> Int32? in
        guard engine != nil else { return nil }
        engine!.take(
          submitted: work.submitted, cancelled: work.cancelled, resumed: work.resumed,
          uploads: work.uploads, stopping: work.stopping)
        if work.stopping {
          engine!.stop()
          swap(&completions, &engine!.completions)
          engine = nil
          return nil
        }
        let timeout = engine!.prepareWait(in: pollSet)
        swap(&completions, &engine!.completions)
        return timeout
      }
      resume(&completions)
      guard let timeout else { break }
      waitForEvents(in: pollSet, timeout: timeout)
      engine.withLock { engine in
        guard engine != nil else { return }
        engine!.handReadySockets(pollSet.ready)
        swap(&completions, &engine!.completions)
      }
      resume(&completions)
    }
    closeWakeUp()
  }

  /// Blocks `SIGPIPE` on the calling thread (the loop's): libcurl's socket I/O there then gets
  /// `EPIPE` from a socket the peer closed instead of a signal that kills the process, whatever
  /// libcurl's version, without changing the signal disposition of the whole process.
  private static func blockSIGPIPE() {
    var signals = sigset_t()
    sigemptyset(&signals)
    sigaddset(&signals, SIGPIPE)
    pthread_sigmask(SIG_BLOCK, &signals, nil)
  }

  /// Takes what callers queued since the last turn (tickets, cancellations, streams and
  /// uploads to resume, the shutdown),
  /// taking the queue's lock only when ``hasWork`` says there is something.
  private func takeQueuedWork() -> (
    submitted: [CurlTicket], cancelled: [CurlTicket], resumed: [CurlTicket],
    uploads: [CurlTicket], stopping: Bool
  ) {
    guard hasWork.exchange(false, ordering: .sequentiallyConsistent) else {
      return ([], [], [], [], false)
    }
    return shared.withLock { state in
      defer {
        state.submitted = []
        state.cancelled = []
        state.resumed = []
        state.uploads = []
      }
      return (
        state.submitted, state.cancelled, state.resumed, state.uploads, state.isShutDown
      )
    }
  }

  /// Waits in `poll` until a socket is ready, a caller wakes the loop or `timeout`
  /// milliseconds pass; does not wait when work was queued meanwhile. Asleep from setting
  /// ``isPolling``: a caller that queues work from then on wakes the loop, and work queued
  /// before is seen here, so the loop goes round again instead of sleeping.
  private func waitForEvents(in pollSet: PollSet, timeout: Int32) {
    isPolling.store(true, ordering: .sequentiallyConsistent)
    if hasWork.load(ordering: .sequentiallyConsistent) {
      pollSet.skipWait()
    } else {
      pollSet.wait(timeout: timeout)
    }
    isPolling.store(false, ordering: .sequentiallyConsistent)
  }

  /// Marks the loop stopped, waits for the callers still waking it, and closes the wake-up
  /// descriptors. Stopped under both locks, no new waker can start; those under way take a
  /// few instructions each, and none can then write to a closed descriptor.
  private func closeWakeUp() {
    shared.withLock { $0.running = false }
    while wakers.load(ordering: .sequentiallyConsistent) > 0 { sched_yield() }
    courier_wake_close(wakeReader, wakeWriter)
  }

  /// Resumes the callers of `completions` (outside the engine lock) and empties it, keeping
  /// its capacity.
  private func resume(_ completions: inout [CurlLoopCore.Completion]) {
    guard !completions.isEmpty else { return }
    // Moved out one by one (in the order they finished), not copied and then destroyed with
    // the list: a copy of a response is a dozen retains and as many releases.
    completions.reverse()
    while let (ticket, result) = completions.popLast() { ticket.finish(result) }
  }
}
