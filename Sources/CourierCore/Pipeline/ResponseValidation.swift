import Synchronization

/// The point in the middleware chain where an endpoint's response pipeline checks the
/// response: the HTTP status, the business envelope and any stage of your own.
///
/// Because the checks run inside the chain, every middleware outside this point sees their
/// verdict as a thrown ``CourierError``: `RetryMiddleware` retries a 503,
/// `AuthMiddleware` refreshes on a 401 or on business code `40101` inside a 200. Decoding the
/// payload into the endpoint's value stays after the chain, and the body is scanned once: the
/// envelope's payload range found here is what is decoded. A middleware outside this point
/// that changes the response (its body, status or headers) has the checks run once more after
/// the chain, on what it returned.
///
/// A ``Client`` puts one at the innermost position (next to the transport) unless its
/// middleware list already has one; put it yourself where the checks should happen, for
/// example outside a middleware that decompresses bodies:
///
/// ```swift
/// let client = Client(
///   baseURL: base, transport: URLSessionTransport(),
///   middleware: [RetryMiddleware(), LoggingMiddleware(), ResponseValidation()])
/// ```
///
/// It acts only on requests sent for an endpoint (``Client/send(_:)-(Endpoint<Value>)``),
/// which carry their pipeline as a ``ResponseValidationAttribute``; a plain
/// ``Client/send(_:)-(Request)`` returns whatever status came back, as before.
public struct ResponseValidation: Middleware {
  /// Creates the middleware.
  public init() {}

  /// Sends the request on and runs its pipeline's checks on the response.
  nonisolated(nonsending) public func intercept(
    _ request: Request, next: Next
  ) async throws
    -> Response
  {
    var response = try await next(request)
    guard let plan = request.attributes[ResponseValidationAttribute.self] else { return response }
    let context: ResponseContext
    do {
      context = try plan.pipeline.validate(response, overrides: plan.overrides)
    } catch {
      // A JSON body in a legacy charset fails the envelope's UTF-8 check: checked once more
      // as UTF-8, and handed on re-encoded (see JSONCharset).
      guard
        let reencoded = JSONCharset.reencodedAsUTF8(
          response, limit: plan.pipeline.maximumDecodedBodySize)
      else { throw error }
      response = reencoded
      context = try plan.pipeline.validate(response, overrides: plan.overrides)
    }
    response.validated = ValidatedPayload(context, plan: plan.identity)
    return response
  }
}

/// The response pipeline a request's response must pass, with its endpoint's overrides.
public struct ResponseValidationPlan: Sendable {
  /// The stages.
  public var pipeline: ResponsePipeline { didSet { identity = Self.newIdentity() } }
  /// The endpoint's changes to them.
  public var overrides: PipelineOverrides { didSet { identity = Self.newIdentity() } }

  /// Names this plan in what ``ResponseValidation`` leaves on a response, so that a
  /// ``Client`` reuses that verdict only for the endpoint call that made this plan: new for
  /// every plan created and after every change to one (another endpoint's plan, or this one
  /// with a middleware's edits, never shares it).
  private(set) var identity: UInt64

  private static let identities = Atomic<UInt64>(0)

  private static func newIdentity() -> UInt64 {
    identities.add(1, ordering: .relaxed).newValue
  }

  /// Creates a plan.
  public init(pipeline: ResponsePipeline, overrides: PipelineOverrides = PipelineOverrides()) {
    self.pipeline = pipeline
    self.overrides = overrides
    self.identity = Self.newIdentity()
  }
}

/// The checks ``ResponseValidation`` runs on this request's response; a ``Client`` sets it
/// for every endpoint request.
public enum ResponseValidationAttribute: RequestAttributeKey {
  /// No checks inside the chain.
  public static let defaultValue: ResponseValidationPlan? = nil
}
