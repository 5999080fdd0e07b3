import Courier
import CourierTesting
import Foundation
import Synchronization
import Testing

@testable import CourierURLSession

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A session passed to `URLSessionTransport(session:)`: its URLSession calls must not hold
/// Swift's executor threads while URLSession's queue is busy.
@Suite("URLSessionTransport over a caller's session", .timeLimit(.minutes(5)))
struct UserSessionTests {
  /// On Linux, creating a URLSession task waits for the session's work queue
  /// (`workQueue.sync` for the task identifier). Here a `URLProtocol` holds that queue in
  /// `startLoading()`; sends made meanwhile, twice as many as there are executor threads,
  /// must leave the executor free to run other tasks. Before the transport created those
  /// tasks on its own queue, every executor thread waited in `dataTask(with:)` and nothing
  /// else in the process could run: a watchdog thread then reports the stall after 20 s (it
  /// exists so that a regression fails instead of hanging, since the time limit needs an
  /// executor thread too).
  ///
  /// In a child process: URLSession on Linux does every session's work on one queue, so
  /// holding it here would stall every other URLSession test running beside this one.
  @Test("sends on a session whose queue is busy leave the executor threads free")
  func busySessionLeavesExecutorFree() async {
    let result = await withTaskExecutorPreference(OwnThreadExecutor.shared) {
      await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
        try await UserSessionTests.busySessionScenario()
      }
    }
    Self.recordFailures(of: result)
  }

  /// The child's side of ``busySessionLeavesExecutorFree()``.
  static func busySessionScenario() async throws {
    let (gate, transport) = heldSession(
      stall: "the executor stalled while the session's queue was held")
    defer { transport.shutdown() }
    let url = URL(string: "http://holding.invalid/item")!
    let first = Task { try await transport.send(Request(url: url)) }
    await gate.waitUntilHolding()
    let count = 2 * ProcessInfo.processInfo.activeProcessorCount
    let others = (0..<count).map { _ in Task { try await transport.send(Request(url: url)) } }
    // Needs an executor thread while the session's queue is still held.
    let stillHeld = await Task.detached { !gate.isOpen }.value
    require(stillHeld, "the gate opened before the probe ran")
    gate.open()
    require(try await first.linkedValue.status == 200, "the first send did not succeed")
    for task in others {
      require(try await task.linkedValue.status == 200, "a later send did not succeed")
    }
  }

  /// Cancelling a send makes URLSession cancel its task, and `URLSessionTask.cancel()` waits
  /// for the work queue too. Here one send waits on a server that never answers, another
  /// holds URLSession's queue, and the first is cancelled from the test's task: that must not
  /// hold the cancelling thread until the queue is free. In a child process, as above.
  @Test("cancelling a send while the session's queue is busy does not block the canceller")
  func cancellationWhileSessionBusy() async {
    let result = await withTaskExecutorPreference(OwnThreadExecutor.shared) {
      await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
        try await UserSessionTests.busyCancellationScenario()
      }
    }
    Self.recordFailures(of: result)
  }

  /// The child's side of ``cancellationWhileSessionBusy()``.
  static func busyCancellationScenario() async throws {
    let (gate, transport) = heldSession(
      stall: "the cancelling thread waited for the session's queue")
    defer { transport.shutdown() }
    let silent = Task {
      try await transport.send(Request(url: URL(string: "http://silent.invalid/never")!))
    }
    await HoldingProtocol.silentStarted.wait()
    let holder = Task {
      try await transport.send(Request(url: URL(string: "http://holding.invalid/item")!))
    }
    await gate.waitUntilHolding()
    silent.cancel()
    // Needs the thread that cancelled, or another, while the session's queue is still held.
    let stillHeld = await Task.detached { !gate.isOpen }.value
    require(stillHeld, "the gate opened before the probe ran")
    gate.open()
    let error = await courierError { try await silent.linkedValue }
    require(error?.kind == .cancelled, "the silent send ended \(String(describing: error))")
    require(try await holder.linkedValue.status == 200, "the holding send did not succeed")
  }

  @Test("bodies from memory and from a file reach the server through a caller's session")
  func uploadsThroughCallersSession() async throws {
    let server = try MockServer()
    server.recordsRequests = true
    let transport = URLSessionTransport(session: URLSession(configuration: .ephemeral))
    defer {
      transport.shutdown()
      server.shutdown()
    }
    let bytes = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    let file = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-user-session-\(UUID().uuidString)")
    try bytes.write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    for body in [RequestBody.data(bytes), .file(file)] {
      server.enqueue(.text("stored"))
      let response = try await transport.send(
        Request(method: .post, url: server.url("upload"), body: body))
      #expect(response.status == 200)
      #expect(response.bodyText == "stored")
      #expect(try await server.takeRequest().body == bytes)
    }
  }

  // MARK: Child processes

  /// Records each `FAILED: …` line a child process printed (see ``require(_:_:)``).
  static func recordFailures(of result: ExitTest.Result?) {
    guard let result else { return }
    let output = String(decoding: result.standardOutputContent, as: UTF8.self)
    for line in output.split(separator: "\n") where line.hasPrefix("FAILED: ") {
      Issue.record("\(line)")
    }
  }

  /// In a child process: unless `condition` holds, prints `FAILED: message` and exits 0
  /// (`#expect(processExitsWith:)` returns no output for a child that failed, and the message
  /// is what matters).
  static func require(_ condition: Bool, _ message: String) {
    guard !condition else { return }
    print("FAILED: \(message)")
    exit(0)
  }

  /// A transport over a new session whose loads go to ``HoldingProtocol`` with a new, closed
  /// gate, and a watchdog thread that fails the child with `stall` unless the gate opens
  /// within 20 s: the test's own time limit needs an executor thread, which a stall takes.
  static func heldSession(stall: String) -> (HoldingProtocol.Gate, URLSessionTransport) {
    let gate = HoldingProtocol.Gate()
    HoldingProtocol.gate.withLock { $0 = gate }
    Thread { if !gate.waitOpened(seconds: 20) { require(false, stall) } }.start()
    let configuration = URLSessionConfiguration.ephemeral
    configuration.protocolClasses = [HoldingProtocol.self]
    return (gate, URLSessionTransport(session: URLSession(configuration: configuration)))
  }
}

/// A `URLProtocol` that answers `200` once its gate opens, holding the URLSession queue that
/// called `startLoading()` until then.
final class HoldingProtocol: URLProtocol {
  /// The gate the next loads wait on.
  static let gate = Mutex<Gate?>(nil)

  /// Opened once; records whether a load is waiting on it.
  final class Gate: Sendable {
    private struct State {
      var open = false
      var holding = false
      var holdingWaiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())
    /// Entered once at creation, left when the gate opens: waiting on it waits for that.
    private let opened = DispatchGroup()
    init() { opened.enter() }

    var isOpen: Bool { state.withLock { $0.open } }

    func open() {
      let first = state.withLock { state -> Bool in
        defer { state.open = true }
        return !state.open
      }
      if first { opened.leave() }
    }

    /// Waits (blocking the calling thread) until the gate opens; `false` after `seconds`.
    func waitOpened(seconds: Int) -> Bool {
      opened.wait(timeout: .now() + .seconds(seconds)) == .success
    }

    func markHolding() {
      let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
        state.holding = true
        defer { state.holdingWaiters = [] }
        return state.holdingWaiters
      }
      for waiter in waiters { waiter.resume() }
    }

    func waitUntilHolding() async {
      await withCheckedContinuation { continuation in
        let now = state.withLock { state -> Bool in
          if state.holding { return true }
          state.holdingWaiters.append(continuation)
          return false
        }
        if now { continuation.resume() }
      }
    }
  }

  /// Signalled when a load for `silent.invalid` (which never answers) has started.
  static let silentStarted = Signal()

  /// A one-shot signal an async test waits on.
  final class Signal: Sendable {
    private let state = Mutex((fired: false, waiters: [CheckedContinuation<Void, Never>]()))

    func fire() {
      let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
        state.fired = true
        defer { state.waiters = [] }
        return state.waiters
      }
      for waiter in waiters { waiter.resume() }
    }

    func wait() async {
      await withCheckedContinuation { continuation in
        let fired = state.withLock { state -> Bool in
          if !state.fired { state.waiters.append(continuation) }
          return state.fired
        }
        if fired { continuation.resume() }
      }
    }
  }

  override class func canInit(with request: URLRequest) -> Bool {
    request.url?.host == "holding.invalid" || request.url?.host == "silent.invalid"
  }

  override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

  override func startLoading() {
    if request.url?.host == "silent.invalid" {
      // Never answers; the task ends only by cancellation (`stopLoading()`).
      Self.silentStarted.fire()
      return
    }
    if let gate = Self.gate.withLock({ $0 }) {
      gate.markHolding()
      _ = gate.waitOpened(seconds: 60)
    }
    guard let url = request.url,
      let response = HTTPURLResponse(
        url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:])
    else { return }
    client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
    client?.urlProtocol(self, didLoad: Data("{}".utf8))
    client?.urlProtocolDidFinishLoading(self)
  }

  override func stopLoading() {}
}
