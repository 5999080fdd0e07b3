import Synchronization

/// One refresh at a time for all requests of one ``AuthMiddleware``, with the storm guard.
///
/// `Sendable` through its `Mutex`. The refresh runs in a detached task, shared by every
/// request waiting for it (of every client using the middleware): it inherits no task-local
/// value of the request that started it, so cancelling that request (or its client's
/// `cancelAll()`) neither cancels the refresh nor fails the others waiting for it. Each
/// waiter's own cancellation ends only its own wait.
final class RefreshCoordinator: Sendable {
  /// A credential and how many refreshes had ended when it was handed out: a rejected
  /// credential is answered with the last refresh's result only when that refresh ended
  /// after the credential was handed out, so an older credential never replaces a newer one.
  struct Issued: Sendable {
    var credential: Credential?
    var generation: UInt64
  }

  private struct State {
    /// The result of the last refresh, to answer requests rejected with an older credential.
    var lastRefreshed: Credential?
    /// How many refreshes have ended with a credential.
    var generation: UInt64 = 0
    var refreshing: RefreshFlight?
    var refreshTimes: [Duration] = []
  }

  private let provider: any CredentialProvider
  private let maximumRefreshes: Int
  private let window: Duration
  private let elapsed: @Sendable () -> Duration
  /// Sleeps on the middleware's clock: the bound on a wait for a refresh.
  private let sleep: @Sendable (Duration) async throws -> Void
  private let state = Mutex(State())

  init(
    provider: any CredentialProvider, maximumRefreshes: Int, window: Duration,
    elapsed: @escaping @Sendable () -> Duration,
    sleep: @escaping @Sendable (Duration) async throws -> Void
  ) {
    self.provider = provider
    self.maximumRefreshes = maximumRefreshes
    self.window = window
    self.elapsed = elapsed
    self.sleep = sleep
  }

  /// The credential to send: the refresh under way, else the provider's (which stores what
  /// it refreshed).
  func current() async throws -> Issued {
    let (refreshing, generation) = state.withLock { ($0.refreshing, $0.generation) }
    if let refreshing { return try await refreshing.value() }
    return Issued(credential: try await provider.credential(), generation: generation)
  }

  /// A credential to replace `rejected`: the one a refresh that ended after `rejected` was
  /// handed out gave, the refresh under way, or a new refresh — waited for at most until
  /// `deadline`, after which this request fails with kind `timedOut`.
  func refresh(rejected: Issued, within deadline: Deadline? = nil) async throws -> Issued {
    let now = elapsed()
    enum Next {
      case done(Issued)
      case wait(RefreshFlight)
      case start(RefreshFlight)
    }
    let next = try state.withLock { state throws(CourierError) -> Next in
      if let refreshing = state.refreshing { return .wait(refreshing) }
      if state.generation > rejected.generation, let refreshed = state.lastRefreshed,
        refreshed != rejected.credential
      {
        // Refreshed since this request's credential was handed out.
        return .done(Issued(credential: refreshed, generation: state.generation))
      }
      state.refreshTimes.removeAll { now - $0 >= window }
      guard state.refreshTimes.count < maximumRefreshes else {
        throw CourierError(
          kind: .authenticationFailed,
          debugMessage:
            "refresh storm guard: \(state.refreshTimes.count) refreshes within \(window); the"
            + " server keeps rejecting new credentials", stage: "auth")
      }
      state.refreshTimes.append(now)
      let flight = RefreshFlight()
      state.refreshing = flight
      return .start(flight)
    }
    switch next {
    case .done(let issued):
      return issued
    case .wait(let flight):
      return try await wait(for: flight, within: deadline)
    case .start(let flight):
      let provider = self.provider
      let rejectedCredential = rejected.credential
      // Detached: the task-local `RequestCancellation.current` of the request that starts
      // the refresh must not reach the provider (a refresh sent through a client would
      // become that request's child and end with it).
      Task.detached(priority: Task.currentPriority) {
        let result: Result<Credential, any Error>
        do {
          result = .success(try await provider.refresh(rejected: rejectedCredential))
        } catch {
          result = .failure(error)
        }
        self.finish(flight, with: result)
      }
      return try await wait(for: flight, within: deadline)
    }
  }

  /// `flight`'s result, or kind `timedOut` when `deadline` passes first.
  private func wait(for flight: RefreshFlight, within deadline: Deadline?) async throws -> Issued {
    guard let deadline else { return try await flight.value() }
    let left = deadline.remaining
    let sleep = self.sleep
    return try await flight.value(
      expiring: {
        try await sleep(left)
        return CourierError(
          kind: .timedOut,
          debugMessage:
            "the overall deadline of \(DescriptionText.duration(deadline.limit)) passed while"
            + " waiting for the credential to be refreshed",
          stage: "auth")
      })
  }

  /// Records the refresh's result and hands it to everyone waiting for it.
  private func finish(_ flight: RefreshFlight, with result: Result<Credential, any Error>) {
    let outcome = state.withLock { state -> Result<Issued, any Error> in
      state.refreshing = nil
      switch result {
      case .success(let credential):
        state.generation += 1
        state.lastRefreshed = credential
        return .success(Issued(credential: credential, generation: state.generation))
      case .failure(let error):
        return .failure(error)
      }
    }
    flight.complete(outcome)
  }
}

/// One refresh under way, and the requests waiting for its result.
///
/// `Sendable` through its `Mutex`. A waiter whose task or request is cancelled stops waiting
/// at once with `CancellationError`; the others keep waiting.
final class RefreshFlight: Sendable {
  private struct State {
    var result: Result<RefreshCoordinator.Issued, any Error>?
    var nextID: UInt64 = 0
    var waiters: [UInt64: CheckedContinuation<RefreshCoordinator.Issued, any Error>] = [:]
    /// Waiters ended (cancelled, or past their deadline) before their continuation was
    /// registered, with the error each ends with.
    var ended: [UInt64: any Error] = [:]
  }

  private let state = Mutex(State())

  /// The refresh's result, once it is there; `CancellationError` when the current task or
  /// request is cancelled first; the error `expiring` returns when it returns first (it
  /// sleeps until a deadline; an error it throws, its own cancellation, ends nothing).
  func value(
    expiring: (@Sendable () async throws -> CourierError)? = nil
  ) async throws -> RefreshCoordinator.Issued {
    let id = state.withLock { state in
      defer { state.nextID += 1 }
      return state.nextID
    }
    let expiry = expiring.map { expiring in
      Task {
        guard let error = try? await expiring() else { return }
        self.end(waiter: id, throwing: error)
      }
    }
    defer { expiry?.cancel() }
    return try await RequestCancellation.withCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<RefreshCoordinator.Issued, any Error>) in
        enum Outcome {
          case wait
          case end(any Error)
          case done(Result<RefreshCoordinator.Issued, any Error>)
        }
        let outcome = state.withLock { state -> Outcome in
          if let result = state.result { return .done(result) }
          if let error = state.ended.removeValue(forKey: id) { return .end(error) }
          state.waiters[id] = continuation
          return .wait
        }
        switch outcome {
        case .wait: break
        case .end(let error): continuation.resume(throwing: error)
        case .done(let result): continuation.resume(with: result)
        }
      }
    } onCancel: {
      self.end(waiter: id, throwing: CancellationError())
    }
  }

  /// Ends one waiter's wait with `error`, now or as soon as it registers; nothing once the
  /// refresh has ended.
  private func end(waiter id: UInt64, throwing error: any Error) {
    let waiter = state.withLock {
      state -> CheckedContinuation<RefreshCoordinator.Issued, any Error>? in
      if let waiter = state.waiters.removeValue(forKey: id) { return waiter }
      if state.result == nil { state.ended[id] = error }
      return nil
    }
    waiter?.resume(throwing: error)
  }

  /// Ends the refresh: every waiter gets `result`, and so does every later ``value()``.
  func complete(_ result: Result<RefreshCoordinator.Issued, any Error>) {
    let waiters = state.withLock { state in
      state.result = result
      state.ended = [:]
      defer { state.waiters = [:] }
      return Array(state.waiters.values)
    }
    for waiter in waiters { waiter.resume(with: result) }
  }
}
