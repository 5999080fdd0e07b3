import Synchronization

/// The cancellation of one request by something other than the task that sends it:
/// ``Client/cancelAll()``, or ``TimeoutMiddleware``'s limit for one attempt.
///
/// Swift task cancellation comes first: cancelling the task that sends a request cancels the
/// request, whatever the transport. But a ``Client`` runs each request's chain inline in that
/// task, which is not the client's to cancel, so it gives the request a token of its own,
/// readable as ``current`` anywhere in the chain, and ``Client/cancelAll()`` cancels the
/// token. ``TimeoutMiddleware`` runs each attempt under a child token that its timer cancels.
///
/// A cancelled token ends the request at the next point that observes it:
///
/// - before every transport attempt, so a retry loop stops;
/// - in the transport: one that declares ``Transport/observesRequestCancellation`` waits
///   inside ``withCancellationHandler(operation:onCancel:)``; the client runs any other in a
///   task of its own and cancels that task with the token;
/// - in waits written with ``sleep(for:clock:)`` or
///   ``withCancellationHandler(operation:onCancel:)``, which end at once on either kind of
///   cancellation.
///
/// Middleware that waits should use those helpers:
///
/// ```swift
/// try await RequestCancellation.sleep(for: backoff, clock: clock)
/// ```
public final class RequestCancellation: Sendable {
  private struct State {
    var isCancelled = false
    var nextID: UInt64 = 0
    var handlers: [UInt64: @Sendable () -> Void] = [:]
    /// A child token (an attempt's, made by ``TimeoutMiddleware``): a plain reference, so
    /// following the parent costs no closure, no weak reference and no dictionary entry.
    var child: RequestCancellation?
    /// Children beyond the first, for a request that runs several attempts at once.
    var moreChildren: [RequestCancellation] = []
  }

  private let state = Mutex(State())
  /// The token this one follows until ``detachFromParent()``.
  private let parent: RequestCancellation?

  /// The token of the request whose chain is running, if any.
  @TaskLocal public static var current: RequestCancellation?

  /// Creates a token; it is cancelled too when `parent` is (a request sent from inside another
  /// request's chain, or an attempt of a request) until ``detachFromParent()``.
  ///
  /// The parent keeps the child until then, so call ``detachFromParent()`` when the child's
  /// work ends (in a `defer`); the parent being cancelled also lets go of it.
  public init(parent: RequestCancellation? = nil) {
    self.parent = parent
    parent?.adopt(self)
  }

  /// Whether this token was cancelled while its parent was not: an attempt's token that a
  /// limit cancelled (``TimeoutMiddleware``), not the request.
  var isCancelledApartFromParent: Bool {
    guard let parent else { return false }
    return isCancelled && !parent.isCancelled
  }

  /// Stops following the parent's cancellation; call it when the request ends so a long-lived
  /// parent does not keep its children.
  public func detachFromParent() {
    parent?.release(self)
  }

  /// Registers `child` to be cancelled with this token, or cancels it at once when this one
  /// already is.
  private func adopt(_ child: RequestCancellation) {
    let adopted = state.withLock { state -> Bool in
      guard !state.isCancelled else { return false }
      if state.child == nil {
        state.child = child
      } else {
        state.moreChildren.append(child)
      }
      return true
    }
    if !adopted { child.cancel() }
  }

  private func release(_ child: RequestCancellation) {
    state.withLock { state in
      if state.child === child {
        state.child = nil
      } else if let index = state.moreChildren.firstIndex(where: { $0 === child }) {
        state.moreChildren.remove(at: index)
      }
    }
  }

  /// Whether the request was cancelled.
  public var isCancelled: Bool { state.withLock { $0.isCancelled } }

  /// Cancels the request: runs every handler once. Later calls do nothing.
  public func cancel() {
    let (handlers, children) = state.withLock {
      state -> ([@Sendable () -> Void], [RequestCancellation]) in
      guard !state.isCancelled else { return ([], []) }
      state.isCancelled = true
      var children = state.moreChildren
      if let child = state.child { children.append(child) }
      defer {
        state.handlers = [:]
        state.child = nil
        state.moreChildren = []
      }
      return (Array(state.handlers.values), children)
    }
    for handler in handlers { handler() }
    for child in children { child.cancel() }
  }

  /// Registers `handler` to run when the request is cancelled; runs it at once, and returns
  /// `nil`, when it already is.
  ///
  /// The handler runs on the thread that cancels: for a timeout, the process's timer thread,
  /// which every other timeout waits on. Keep it short and never wait in it; hand anything
  /// that waits to another thread or task.
  public func addHandler(_ handler: @escaping @Sendable () -> Void) -> UInt64? {
    let id = state.withLock { state -> UInt64? in
      guard !state.isCancelled else { return nil }
      let id = state.nextID
      state.nextID &+= 1
      state.handlers[id] = handler
      return id
    }
    if id == nil { handler() }
    return id
  }

  /// Removes a handler registered with ``addHandler(_:)``.
  public func removeHandler(_ id: UInt64?) {
    guard let id else { return }
    _ = state.withLock { $0.handlers.removeValue(forKey: id) }
  }

  /// Whether the current task or the current request was cancelled.
  public static var isCancelled: Bool {
    Task.isCancelled || (current?.isCancelled ?? false)
  }

  /// Throws `CancellationError` when the current task or the current request was cancelled.
  public static func checkCancellation() throws {
    if isCancelled { throw CancellationError() }
  }

  /// Runs `operation`, calling `onCancel` if the current task or the current request is
  /// cancelled while it runs (at once if it already was). `onCancel` runs on the cancelling
  /// thread, as with ``addHandler(_:)``: it must not wait.
  public static func withCancellationHandler<T>(
    operation: () async throws -> T, onCancel: @escaping @Sendable () -> Void
  ) async rethrows -> T {
    let token = current
    let id = token?.addHandler(onCancel)
    defer { token?.removeHandler(id) }
    return try await withTaskCancellationHandler(operation: operation, onCancel: onCancel)
  }

  /// Sleeps on `clock`, ending at once with `CancellationError` when the current task or the
  /// current request is cancelled.
  public static func sleep(for duration: Duration, clock: any Clock<Duration>) async throws {
    try await sleep(for: duration, on: clock)
  }

  /// A task that sleeps on `clock` until `duration` from now, then runs `then`. The deadline
  /// is read here, before the task runs, so that time the clock moves meanwhile counts (a test
  /// clock a transport advances at once). What ``sleep(for:clock:)`` and
  /// ``TimeoutMiddleware``'s timer on an injected clock sleep in.
  package static func sleepingTask<C: Clock<Duration>>(
    for duration: Duration, on clock: C, then: @escaping @Sendable () -> Void = {}
  ) -> Task<Void, any Error> {
    let deadline = clock.now.advanced(by: duration)
    return Task {
      try await clock.sleep(until: deadline, tolerance: nil)
      then()
    }
  }

  /// ``sleep(for:clock:)`` on a concrete clock.
  private static func sleep<C: Clock<Duration>>(for duration: Duration, on clock: C) async throws {
    guard current != nil else {
      try await clock.sleep(for: duration)
      return
    }
    let sleeper = sleepingTask(for: duration, on: clock)
    try await withCancellationHandler {
      try await sleeper.value
    } onCancel: {
      sleeper.cancel()
    }
  }
}
