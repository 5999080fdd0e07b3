import CourierCore
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The machinery behind ``MockServer``: sockets, threads, the response queue and the request
/// log.
///
/// The server's threads retain this object rather than the public ``MockServer``, so that
/// dropping the last reference to the `MockServer` runs its `deinit`, which shuts the server
/// down even while connections are open.
///
/// All mutable state lives in one `Mutex`. Descriptor ownership rules:
/// - A connection's descriptor is registered in `State.connections` from accept until its
///   thread finishes, and is closed *under the lock* as it is deregistered. `shutdown()` calls
///   `shutdown(2)` on registered descriptors under the same lock, so it can never hit a
///   descriptor number that was closed and reused.
/// - The listening socket is closed once the accept thread has exited; the wake pipe once no
///   server thread is left to poll it.
final class ServerCore: Sendable {
  /// How long `shutdown()` waits for the server's threads before giving up on them.
  static let shutdownTimeout: DispatchTimeInterval = .seconds(5)

  /// The listening socket.
  let listenFD: Int32
  /// The read end of the wake pipe. It becomes readable, and stays so, at shutdown; every
  /// blocking wait in the server polls it.
  let wakeReadFD: Int32
  private let wakeWriteFD: Int32
  /// The bound port.
  let port: Int
  /// The host as it appears in URLs.
  let urlHost: String

  private let state = Mutex(State())
  /// Signalled by each server thread that exits once shutdown has begun.
  private let threadExited = DispatchSemaphore(value: 0)

  /// Binds and listens; threads are started by ``start()``.
  init(host: String, port: Int = 0) throws(MockServerError) {
    let listener = try Socket.bindAndListen(host: host, port: port)
    let wake: (read: Int32, write: Int32)
    do {
      wake = try Socket.makeWakePipe()
    } catch {
      _ = close(listener.fd)
      throw error
    }
    listenFD = listener.fd
    self.port = listener.port
    urlHost = listener.urlHost
    wakeReadFD = wake.read
    wakeWriteFD = wake.write
  }

  deinit {
    // Normally shutdown() has closed everything. This covers a failed start() and threads
    // that outlived the shutdown timeout: the last of them releases this object.
    state.withLock { state in
      if !state.listenClosed { _ = close(listenFD) }
      if !state.wakeClosed {
        _ = close(wakeReadFD)
        _ = close(wakeWriteFD)
      }
    }
  }

  // MARK: - State

  private enum Phase {
    case running
    case shuttingDown
    case stopped
  }

  private struct Waiter {
    let id: UInt64
    let continuation: CheckedContinuation<RecordedRequest, any Error>
    let timer: Task<Void, Never>
  }

  private struct LiveConnection {
    let fd: Int32
    let thread: NativeThread
  }

  private struct State {
    var phase = Phase.running
    var responses = FIFO<MockResponse>()
    var dispatcher: (@Sendable (RecordedRequest) -> MockResponse)?
    /// Requests recorded but not yet returned by `takeRequest`.
    var unclaimed = FIFO<RecordedRequest>()
    /// `takeRequest` callers waiting for a request, oldest first.
    var waiters: [Waiter] = []
    var nextWaiterID: UInt64 = 0
    var requestCount = 0
    /// Whether requests nobody is waiting for are kept for later `takeRequest` calls.
    var recordsRequests = true
    /// Where request bodies are written instead of memory, if anywhere.
    var requestBodyDirectory: URL?
    var connectionCount = 0
    var connections: [Int: LiveConnection] = [:]
    /// Connection threads that have finished and wait to be joined.
    var finishedThreads: [NativeThread] = []
    var acceptThread: NativeThread?
    var acceptRunning = false
    var listenClosed = false
    var wakeClosed = false
  }

  // MARK: - Lifecycle

  /// Starts the accept thread.
  func start() throws(MockServerError) {
    try state.withLock { state throws(MockServerError) in
      let name = "MS\(port)a"
      guard let thread = NativeThread.spawn(name: name, { [self] in acceptLoop() }) else {
        throw MockServerError("could not start the accept thread")
      }
      state.acceptThread = thread
      state.acceptRunning = true
    }
  }

  /// Stops accepting, shuts down every connection, fails pending `takeRequest` calls, waits
  /// (bounded) for all threads to exit, joins them and closes every descriptor. Idempotent.
  func shutdown() {
    let waiters: [Waiter]? = state.withLock { state in
      guard state.phase == .running else { return nil }
      state.phase = .shuttingDown
      for connection in state.connections.values {
        Socket.shutdownBothDirections(connection.fd)
      }
      var waiters: [Waiter] = []
      swap(&waiters, &state.waiters)
      return waiters
    }
    guard let waiters else { return }

    let error = MockServerError("the server was shut down")
    for waiter in waiters {
      waiter.timer.cancel()
      waiter.continuation.resume(throwing: error)
    }
    var byte: UInt8 = 1
    _ = write(wakeWriteFD, &byte, 1)

    let deadline = DispatchTime.now() + Self.shutdownTimeout
    while true {
      let outstanding = state.withLock { state in
        // A dispatcher may call shutdown() on a connection thread; don't wait for that one.
        (state.acceptRunning ? 1 : 0)
          + state.connections.values.count { !$0.thread.isCurrent }
      }
      if outstanding == 0 { break }
      if threadExited.wait(timeout: deadline) == .timedOut { break }
    }

    let finished = state.withLock { state -> [NativeThread] in
      state.phase = .stopped
      // Drop scripted responses and the dispatcher, which may capture the server itself.
      state.dispatcher = nil
      state.responses = FIFO()
      var finished: [NativeThread] = []
      swap(&finished, &state.finishedThreads)
      if !state.acceptRunning, let accept = state.acceptThread {
        finished.append(accept)
        state.acceptThread = nil
      }
      closeIdleResources(&state)
      return finished
    }
    for thread in finished {
      if thread.isCurrent { thread.detach() } else { thread.join() }
    }
  }

  /// Closes the listener and wake pipe once no thread can use them any more.
  private func closeIdleResources(_ state: inout State) {
    guard !state.acceptRunning else { return }
    if !state.listenClosed {
      _ = close(listenFD)
      state.listenClosed = true
    }
    if state.connections.isEmpty && !state.wakeClosed {
      _ = close(wakeReadFD)
      _ = close(wakeWriteFD)
      state.wakeClosed = true
    }
  }

  // MARK: - Accepting

  private func acceptLoop() {
    var fds = [
      pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0),
      pollfd(fd: wakeReadFD, events: Int16(POLLIN), revents: 0),
    ]
    while true {
      fds[0].revents = 0
      fds[1].revents = 0
      let ready = poll(&fds, 2, -1)
      if ready < 0 {
        if errno == EINTR { continue }
        break
      }
      if fds[1].revents != 0 { break }
      let events = Int32(fds[0].revents)
      if events & Int32(POLLNVAL) != 0 { break }
      if events != 0 { acceptPendingConnections() }
      reapFinishedThreads()
    }
    acceptFinished()
  }

  /// Accepts until the (non-blocking) listener has no more pending connections.
  private func acceptPendingConnections() {
    while true {
      let fd = Socket.accept(listenFD)
      if fd < 0 {
        switch errno {
        case EINTR, ECONNABORTED:
          continue
        case EMFILE, ENFILE, ENOBUFS, ENOMEM:
          // Out of descriptors or memory: back off instead of spinning on a readable listener.
          Socket.waitForWake(wakeReadFD, atMost: .milliseconds(20))
          return
        default:
          return
        }
      }
      guard Socket.configureAccepted(fd) else {
        _ = close(fd)
        continue
      }
      startConnection(fd)
    }
  }

  private func startConnection(_ fd: Int32) {
    state.withLock { state in
      guard state.phase == .running else {
        _ = close(fd)
        return
      }
      let index = state.connectionCount
      state.connectionCount += 1
      let spawned = NativeThread.spawn(name: "MS\(port)-\(index)") { [self] in
        Connection(core: self, fd: fd, index: index).run()
        connectionFinished(index)
      }
      guard let thread = spawned else {
        _ = close(fd)
        return
      }
      state.connections[index] = LiveConnection(fd: fd, thread: thread)
    }
  }

  /// Deregisters and closes a connection whose thread is about to exit.
  private func connectionFinished(_ index: Int) {
    let notify = state.withLock { state -> Bool in
      guard let connection = state.connections.removeValue(forKey: index) else { return false }
      _ = close(connection.fd)
      if state.phase == .stopped {
        // shutdown() has stopped waiting: nobody will join this thread.
        connection.thread.detach()
        closeIdleResources(&state)
      } else {
        state.finishedThreads.append(connection.thread)
      }
      return state.phase != .running
    }
    if notify { threadExited.signal() }
  }

  private func acceptFinished() {
    let notify = state.withLock { state -> Bool in
      state.acceptRunning = false
      if state.phase == .stopped {
        state.acceptThread?.detach()
        state.acceptThread = nil
        closeIdleResources(&state)
      }
      return state.phase != .running
    }
    if notify { threadExited.signal() }
  }

  /// Joins connection threads that have finished, so they do not accumulate.
  private func reapFinishedThreads() {
    let finished = state.withLock { state -> [NativeThread] in
      var finished: [NativeThread] = []
      swap(&finished, &state.finishedThreads)
      return finished
    }
    for thread in finished { thread.join() }
  }

  // MARK: - Requests and responses

  /// Records a request (waking one `takeRequest` caller, if any) and picks its response:
  /// the next queued one, else the dispatcher's, else `404`.
  func respond(
    to head: RequestHead, body: Data, bodyFile: URL? = nil, connectionIndex: Int
  ) -> MockResponse {
    var request = RecordedRequest(
      method: head.method,
      target: head.target,
      version: head.version,
      headers: head.headers,
      body: body,
      connectionIndex: connectionIndex,
      bodyFile: bodyFile
    )
    let (waiter, queued, dispatcher) = state.withLock { state in
      request.sequenceNumber = state.requestCount
      state.requestCount += 1
      let queued = state.responses.popFirst()
      let waiter: Waiter? = state.waiters.isEmpty ? nil : state.waiters.removeFirst()
      if waiter == nil && state.recordsRequests { state.unclaimed.append(request) }
      return (waiter, queued, queued == nil ? state.dispatcher : nil)
    }
    if let waiter {
      waiter.timer.cancel()
      waiter.continuation.resume(returning: request)
    }
    if let queued { return queued }
    if let dispatcher { return dispatcher(request) }
    return MockResponse(status: 404)
  }

  func enqueue(_ response: MockResponse) {
    state.withLock { $0.responses.append(response) }
  }

  func setDispatcher(_ dispatcher: (@Sendable (RecordedRequest) -> MockResponse)?) {
    state.withLock { $0.dispatcher = dispatcher }
  }

  var requestCount: Int {
    state.withLock { $0.requestCount }
  }

  var requestBodyDirectory: URL? {
    get { state.withLock { $0.requestBodyDirectory } }
    set { state.withLock { $0.requestBodyDirectory = newValue } }
  }

  var recordsRequests: Bool {
    get { state.withLock { $0.recordsRequests } }
    set { state.withLock { $0.recordsRequests = newValue } }
  }

  /// Returns the oldest unclaimed request, waiting up to `timeout` for one to arrive.
  func takeRequest(timeout: Duration) async throws -> RecordedRequest {
    let id = state.withLock { state in
      state.nextWaiterID += 1
      return state.nextWaiterID
    }
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<RecordedRequest, any Error>) in
        let immediate: Result<RecordedRequest, any Error>? = state.withLock { state in
          if let request = state.unclaimed.popFirst() { return .success(request) }
          if state.phase != .running {
            return .failure(MockServerError("the server was shut down"))
          }
          if Task.isCancelled { return .failure(CancellationError()) }
          // The timer fails the waiter only if it is still registered, under the lock, so a
          // request is never handed to a caller that has already timed out.
          let timer = Task { [weak self] in
            do {
              try await Task.sleep(for: timeout)
            } catch {
              return
            }
            self?.removeWaiter(id)?.resume(
              throwing: MockServerError("takeRequest() timed out after \(timeout)"))
          }
          state.waiters.append(Waiter(id: id, continuation: continuation, timer: timer))
          return nil
        }
        if let immediate { continuation.resume(with: immediate) }
      }
    } onCancel: {
      removeWaiter(id)?.resume(throwing: CancellationError())
    }
  }

  /// Deregisters waiter `id` and returns its continuation, or `nil` if it was already resumed.
  private func removeWaiter(_ id: UInt64) -> CheckedContinuation<RecordedRequest, any Error>? {
    let waiter = state.withLock { state -> Waiter? in
      guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
      return state.waiters.remove(at: index)
    }
    waiter?.timer.cancel()
    return waiter?.continuation
  }
}
