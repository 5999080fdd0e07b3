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
/// A ``Client`` puts one at the innermost position (next to the transport), or just outside
/// the first middleware that decodes response bodies (``Middleware/decodesResponseBodies``),
/// unless its middleware list already has one; `Client.standard` lists it itself, in the same
/// place: just outside the first middleware of yours that decodes response bodies, else just
/// outside gzip.
/// Put it yourself where the checks should happen, for example outside a middleware that
/// decompresses bodies:
///
/// ```swift
/// let client = Client(
///   baseURL: base, transport: URLSessionTransport(),
///   middleware: [RetryMiddleware(), LoggingMiddleware(), ResponseValidation()])
/// ```
///
/// It acts only on requests that carry a pipeline as a ``ResponseValidationAttribute``: those
/// sent for an endpoint (``Client/send(_:)-(Endpoint<Value>)``) or built by
/// ``Client/request(for:)``; any other request sent with ``Client/send(_:)-(Request)``
/// returns whatever status came back.
public struct ResponseValidation: Middleware {
  /// Creates the middleware.
  public init() {}

  /// Sends the request on and runs its pipeline's checks on the response.
  nonisolated(nonsending) public func intercept(
    _ request: Request, next: Next
  ) async throws
    -> Response
  {
    let response = try await next(request)
    guard let plan = request.attributes[ResponseValidationAttribute.self] else { return response }
    return try plan.pipeline.check(response, under: plan)
  }
}
