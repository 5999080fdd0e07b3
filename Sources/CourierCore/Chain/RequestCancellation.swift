import Synchronization

/// Cancellation of one request from outside the task that sends it, as ``Client/cancelAll()``
/// does.
///
/// A ``Client`` runs each request's chain inline in the caller's task (an extra task per
/// request would cost a thread hop, measured at about 20 µs of CPU per request end to end on
/// Linux with `courier-bench e2e`) and gives the request a `RequestCancellation`, readable as
/// ``current`` anywhere in the chain.
/// Cancelling the caller's `Task` works as usual; ``Client/cancelAll()`` cancels the
/// requests' tokens instead, and these end the request at the next point that observes them:
///
/// - before every transport attempt (so a retry loop stops);
/// - inside transports that declare ``Transport/observesRequestCancellation`` (URLSession and
///   the stub do); any other transport runs in an unstructured task that the token cancels;
/// - in waits written with ``sleep(for:clock:)`` or ``withCancellationHandler(operation:onCancel:)``.
///
/// Middleware that waits should use those helpers so that both kinds of cancellation end the
/// wait at once:
///
/// ```swift
/// try await RequestCancellation.sleep(for: backoff, clock: clock)
/// ```
public final class RequestCancellation: Sendable {
  private struct State {
    var isCancelled = false
    var nextID: UInt64 = 0
    var handlers: [UInt64: @Sendable () -> Void] = [:]
    var parentHandler: UInt64?
  }

  private let state = Mutex(State())
  private let parent: RequestCancellation?

  /// The token of the request whose chain is running, if any.
  @TaskLocal public static var current: RequestCancellation?

  /// Creates a token; it is cancelled too when `parent` is (a request sent from inside another
  /// request's chain) until ``detachFromParent()``.
  public init(parent: RequestCancellation? = nil) {
    self.parent = parent
    if let parent {
      let handler = parent.addHandler { [weak self] in self?.cancel() }
      state.withLock { $0.parentHandler = handler }
    }
  }

  /// Stops following the parent's cancellation; call it when the request ends so a long-lived
  /// parent does not collect handlers.
  public func detachFromParent() {
    parent?.removeHandler(state.withLock { $0.parentHandler })
  }

  /// Whether the request was cancelled.
  public var isCancelled: Bool { state.withLock { $0.isCancelled } }

  /// Cancels the request: runs every handler once. Later calls do nothing.
  public func cancel() {
    let handlers = state.withLock { state -> [@Sendable () -> Void] in
      guard !state.isCancelled else { return [] }
      state.isCancelled = true
      defer { state.handlers = [:] }
      return Array(state.handlers.values)
    }
    for handler in handlers { handler() }
  }

  /// Registers `handler` to run when the request is cancelled; runs it at once, and returns
  /// `nil`, when it already is.
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
  /// cancelled while it runs (at once if it already was).
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
    guard current != nil else {
      try await clock.sleep(for: duration)
      return
    }
    let sleeper = Task { try await clock.sleep(for: duration) }
    try await withCancellationHandler {
      try await sleeper.value
    } onCancel: {
      sleeper.cancel()
    }
  }
}
