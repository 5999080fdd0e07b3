/// Adds a credential to each request and, when the server rejects it, refreshes it once for
/// every request that was rejected together, then sends each of them again once.
///
/// - A rejection is a `401` (as a response, or as a ``CourierError/Kind/httpStatus`` error
///   when the response pipeline runs inside the chain) or whatever ``isRejection`` says — for
///   example a business code such as `40101` ("token expired") inside a `200`:
///   `AuthMiddleware(provider: store, isRejection: AuthMiddleware.businessCodes(["40101"]))`.
/// - Single flight: 50 requests rejected at once cause one ``CredentialProvider/refresh(rejected:)``
///   call; all 50 are sent again with its result. A request rejected with a credential that
///   a refresh has replaced since it was handed out is sent again with that refresh's result
///   without another refresh; a credential handed out after the last refresh (the provider
///   signed in again, or rotated it itself) gets a refresh of its own when it is rejected, so
///   an older credential is never sent in place of a newer one.
/// - One refresh for every client that shares the middleware. It runs apart from the request
///   that started it: cancelling that request, or its client's `cancelAll()`, does not cancel
///   it, and a request cancelled while it waits ends at once with kind
///   ``CourierError/Kind/cancelled`` while the others keep waiting.
/// - The resend is the same logical request: it keeps the overall deadline a
///   `TimeoutMiddleware` inside gave the first attempt, and the trace a `RequestIDMiddleware`
///   inside gave it (the resend is a new span of the same trace). Waiting for the refresh is
///   bounded by that deadline too: a refresh that outlasts it fails the waiting request with
///   kind ``CourierError/Kind/timedOut`` (the refresh itself goes on for the others).
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
  /// Whether an outcome is a rejection; default ``unauthorizedStatus(_:_:)``.
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
  ///   - isRejection: Default ``unauthorizedStatus(_:_:)`` (a 401).
  ///   - maximumRefreshes: Default 3: a genuine expiry needs one; three allows for a race
  ///     with another device without letting a broken server cause a loop.
  ///   - refreshWindow: Default 60 s.
  ///   - clock: The clock of the storm guard's window, and of the bound on waiting for a
  ///     refresh (the request's overall deadline).
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
      elapsed: { start.duration(to: clock.now) },
      sleep: { try await clock.sleep(for: $0) })
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
  /// concurrent rejections) and sends it again once, within the deadline the first attempt
  /// was given.
  nonisolated(nonsending) public func intercept(
    _ request: Request, next: Next
  ) async throws
    -> Response
  {
    let current: RefreshCoordinator.Issued
    do {
      current = try await coordinator.current()
    } catch {
      throw Self.signInAgain(error, request: request, response: nil)
    }
    if let credential = current.credential, request.headers.contains(credential.header) {
      return try await next(Self.marking(credential.header, of: request))
    }
    let first = try await send(request, with: current.credential, next: next)
    guard isRejection(first.response, first.error) else { return try first.get() }
    // The resend is the same logical request: it keeps the overall deadline a timeout inside
    // gave the first attempt and the trace a request id inside gave it (both returned on the
    // request the attempt was sent as) instead of starting new ones.
    let sent = first.response?.request ?? first.error?.request
    var resend = request
    if resend.attributes[DeadlineAttribute.self] == nil,
      let deadline = sent?.attributes[DeadlineAttribute.self]
    {
      resend.attributes[DeadlineAttribute.self] = deadline
    }
    if resend.attributes[RequestIDAttribute.self] == nil,
      let trace = sent?.attributes[RequestIDAttribute.self]
    {
      resend.attributes[RequestIDAttribute.self] = trace
    }
    let fresh: RefreshCoordinator.Issued
    let observation = request.attributes[ObservationAttribute.self]
    let refreshStart = ContinuousClock.now
    do {
      fresh = try await coordinator.refresh(
        rejected: current, within: resend.attributes[DeadlineAttribute.self])
      observation?.authRefreshed(succeeded: true, since: refreshStart)
    } catch {
      observation?.authRefreshed(succeeded: false, since: refreshStart)
      throw Self.signInAgain(
        error, request: request, response: first.response ?? first.error?.response)
    }
    return try await send(resend, with: fresh.credential, next: next).get()
  }

  /// A failure to get or refresh the credential, as kind
  /// ``CourierError/Kind/authenticationFailed`` with `error` underneath — or as
  /// ``CourierError/Kind/cancelled`` when it is this request that was cancelled while it
  /// waited (the shared refresh goes on for the others).
  private static func signInAgain(
    _ error: any Error, request: Request, response: Response?
  )
    -> CourierError
  {
    if RequestCancellation.isCancelled {
      return CourierError(
        kind: .cancelled, debugMessage: "cancelled while waiting for the credential",
        underlying: error, request: request, stage: "auth")
    }
    if var timedOut = error as? CourierError, timedOut.kind == .timedOut {
      timedOut.request = timedOut.request ?? request
      return timedOut
    }
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

extension AuthMiddleware: CustomStringConvertible {
  /// The provider's type and the storm guard, never a credential:
  /// `AuthMiddleware(provider: TokenStore; at most 3 refreshes per 60 s)`.
  public var description: String {
    "AuthMiddleware(provider: \(DescriptionText.typeName(of: provider)); at most "
      + "\(maximumRefreshes) refreshes per \(DescriptionText.duration(refreshWindow)))"
  }
}
