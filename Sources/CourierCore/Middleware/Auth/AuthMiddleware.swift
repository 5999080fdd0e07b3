import Synchronization

/// Adds a credential to each request and, when the server rejects it, refreshes it once for
/// every request that was rejected together, then sends each of them again once.
///
/// - A rejection is a `401` (as a response, or as a ``CourierError/Kind/httpStatus`` error
///   when the response pipeline runs inside the chain) or whatever ``isRejection`` says — for
///   example a business code such as `40101` ("token expired") inside a `200`:
///   `AuthMiddleware(provider: store, isRejection: AuthMiddleware.businessCodes(["40101"]))`.
/// - Single flight: 50 requests rejected at once cause one ``CredentialProvider/refresh(rejected:)``
///   call; all 50 are sent again with its result. A request rejected with a credential that
///   was already replaced is sent again with the new one without another refresh.
/// - A failed refresh fails every waiting request with kind
///   ``CourierError/Kind/authenticationFailed`` ("please sign in again").
/// - Storm guard: at most ``maximumRefreshes`` refreshes (default 3) per ``refreshWindow``
///   (default 60 s). A server that rejects every new credential would otherwise make the
///   client refresh in a loop; past the limit, rejections fail as
///   ``CourierError/Kind/authenticationFailed`` without refreshing.
///
/// A request that already carries the credential's header (set by its endpoint) is sent as it
/// is and never refreshed.
///
/// The credential stays on its origin whatever header it goes in: a header that no
/// ``Redaction/standard`` name covers (`X-Tenant-Key`) is named in the request's
/// ``CredentialHeadersAttribute``, so a redirect to another scheme, host or port drops it, as
/// it drops `Authorization`, and logs and cassettes write it as `***`. Place the middleware outside `RetryMiddleware`, as the standard
/// order does, so a retried request is not re-authenticated per attempt.
public struct AuthMiddleware: Middleware {
  /// Decides whether an outcome means "the credential was rejected".
  public typealias Rejection = @Sendable (Response?, CourierError?) -> Bool

  /// Where credentials come from.
  public let provider: any CredentialProvider
  /// Whether an outcome is a rejection; default ``unauthorizedStatus``.
  public let isRejection: Rejection
  /// Refreshes allowed per window; default 3.
  public let maximumRefreshes: Int
  /// The storm guard's window; default 60 s.
  public let refreshWindow: Duration

  private let coordinator: RefreshCoordinator

  /// Creates the middleware.
  ///
  /// - Parameters:
  ///   - provider: Supplies and refreshes credentials.
  ///   - isRejection: Default ``unauthorizedStatus`` (a 401).
  ///   - maximumRefreshes: Default 3: a genuine expiry needs one; three allows for a race
  ///     with another device without letting a broken server cause a loop.
  ///   - refreshWindow: Default 60 s.
  ///   - clock: The clock of the storm guard's window.
  public init<C: Clock>(
    provider: any CredentialProvider,
    isRejection: @escaping Rejection = AuthMiddleware.unauthorizedStatus,
    maximumRefreshes: Int = 3, refreshWindow: Duration = .seconds(60),
    clock: C = ContinuousClock()
  ) where C.Duration == Duration {
    self.provider = provider
    self.isRejection = isRejection
    self.maximumRefreshes = max(0, maximumRefreshes)
    self.refreshWindow = refreshWindow
    let start = clock.now
    coordinator = RefreshCoordinator(
      provider: provider, maximumRefreshes: max(0, maximumRefreshes), window: refreshWindow,
      elapsed: { start.duration(to: clock.now) })
  }

  /// A 401 response, or a ``CourierError/Kind/httpStatus`` error with status 401.
  @Sendable public static func unauthorizedStatus(
    _ response: Response?, _ error: CourierError?
  )
    -> Bool
  {
    (response?.status ?? error?.status) == 401
  }

  /// A 401, or a ``CourierError/Kind/business`` error whose code is one of `codes`.
  public static func businessCodes(_ codes: Set<String>) -> Rejection {
    { response, error in
      unauthorizedStatus(response, error)
        || (error?.kind == .business && error?.code.map(codes.contains) == true)
    }
  }

  /// Sends the request with the current credential; on a rejection, refreshes (once for all
  /// concurrent rejections) and sends it again once.
  nonisolated(nonsending) public func intercept(
    _ request: Request, next: Next
  ) async throws
    -> Response
  {
    let current: Credential?
    do {
      current = try await coordinator.current()
    } catch {
      throw Self.signInAgain(error, request: request, response: nil)
    }
    if let current, request.headers.contains(current.header) {
      return try await next(Self.marking(current.header, of: request))
    }
    let first = try await send(request, with: current, next: next)
    guard isRejection(first.response, first.error) else { return try first.get() }
    let fresh: Credential
    do {
      fresh = try await coordinator.refresh(rejected: current)
    } catch {
      throw Self.signInAgain(
        error, request: request, response: first.response ?? first.error?.response)
    }
    return try await send(request, with: fresh, next: next).get()
  }

  /// A failure to get or refresh the credential, as kind
  /// ``CourierError/Kind/authenticationFailed`` with `error` underneath.
  private static func signInAgain(
    _ error: any Error, request: Request, response: Response?
  )
    -> CourierError
  {
    var failure =
      (error as? CourierError).flatMap { $0.kind == .authenticationFailed ? $0 : nil }
      ?? CourierError(
        kind: .authenticationFailed, debugMessage: "the credential could not be renewed",
        underlying: error, stage: "auth")
    failure.request = failure.request ?? request
    failure.response = failure.response ?? response
    return failure
  }

  /// `request` with `header` named in its ``CredentialHeadersAttribute`` when no redirect
  /// rule or ``Redaction/standard`` knows it as a credential already (`Authorization` needs no
  /// mark, and no allocation), so that a redirect to another origin drops it and logs hide it.
  private static func marking(_ header: HTTPHeaders.Name, of request: Request) -> Request {
    guard !Redirect.credentialHeaders.contains(header) else { return request }
    var request = request
    request.attributes[CredentialHeadersAttribute.self].insert(header)
    return request
  }

  private func send(
    _ request: Request, with credential: Credential?, next: Next
  ) async throws
    -> Outcome
  {
    var request = request
    if let credential {
      try request.headers.set(credential.header, credential.value)
      request = Self.marking(credential.header, of: request)
    }
    do {
      return Outcome(response: try await next(request), error: nil)
    } catch {
      let failure = CourierError(error, request: request)
      if failure.kind == .cancelled { throw failure }
      return Outcome(response: nil, error: failure)
    }
  }

  private struct Outcome {
    let response: Response?
    let error: CourierError?

    func get() throws -> Response {
      if let response { return response }
      throw error ?? CourierError(kind: .transport, stage: "auth")
    }
  }
}

/// One refresh at a time for all requests of one ``AuthMiddleware``, with the storm guard.
///
/// `Sendable` through its `Mutex`; the refresh runs in an unstructured task so that
/// cancelling the request that started it does not fail the others waiting for it.
final class RefreshCoordinator: Sendable {
  private struct State {
    /// The result of the last refresh, to answer requests rejected with an older credential.
    var lastRefreshed: Credential?
    var refreshing: Task<Credential, any Error>?
    var refreshTimes: [Duration] = []
  }

  private let provider: any CredentialProvider
  private let maximumRefreshes: Int
  private let window: Duration
  private let elapsed: @Sendable () -> Duration
  private let state = Mutex(State())

  init(
    provider: any CredentialProvider, maximumRefreshes: Int, window: Duration,
    elapsed: @escaping @Sendable () -> Duration
  ) {
    self.provider = provider
    self.maximumRefreshes = maximumRefreshes
    self.window = window
    self.elapsed = elapsed
  }

  /// The credential to send: the refresh under way, else the provider's (which stores what
  /// it refreshed).
  func current() async throws -> Credential? {
    if let refreshing = state.withLock({ $0.refreshing }) { return try await refreshing.value }
    return try await provider.credential()
  }

  /// A credential to replace `rejected`: the one already refreshed since, the refresh under
  /// way, or a new refresh.
  func refresh(rejected: Credential?) async throws -> Credential {
    let now = elapsed()
    enum Next {
      case done(Credential)
      case wait(Task<Credential, any Error>)
    }
    let next = try state.withLock { state throws(CourierError) -> Next in
      if let refreshing = state.refreshing { return .wait(refreshing) }
      if let refreshed = state.lastRefreshed, refreshed != rejected { return .done(refreshed) }
      state.refreshTimes.removeAll { now - $0 >= window }
      guard state.refreshTimes.count < maximumRefreshes else {
        throw CourierError(
          kind: .authenticationFailed,
          debugMessage:
            "refresh storm guard: \(state.refreshTimes.count) refreshes within \(window); the"
            + " server keeps rejecting new credentials", stage: "auth")
      }
      state.refreshTimes.append(now)
      let provider = self.provider
      let task = Task { try await provider.refresh(rejected: rejected) }
      state.refreshing = task
      return .wait(task)
    }
    let task: Task<Credential, any Error>
    switch next {
    case .done(let credential): return credential  // refreshed since this request was rejected
    case .wait(let waiting): task = waiting
    }
    do {
      let credential = try await task.value
      state.withLock { state in
        if state.refreshing == task {
          state.lastRefreshed = credential
          state.refreshing = nil
        }
      }
      return credential
    } catch {
      state.withLock { state in
        if state.refreshing == task { state.refreshing = nil }
      }
      throw error
    }
  }
}

extension AuthMiddleware: CustomStringConvertible {
  /// The provider's type and the storm guard, never a credential:
  /// `AuthMiddleware(provider: TokenStore; at most 3 refreshes per 60 s)`.
  public var description: String {
    "AuthMiddleware(provider: \(DescriptionText.typeName(of: provider)); at most "
      + "\(maximumRefreshes) refreshes per \(DescriptionText.duration(refreshWindow)))"
  }
}
