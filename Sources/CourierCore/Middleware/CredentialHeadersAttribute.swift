/// The names of the headers of one request that carry a credential under a name no
/// ``Redaction`` lists: ``AuthMiddleware`` adds the header it sends a credential in when that
/// is not `Authorization`, `Proxy-Authorization`, `Cookie` or another name of
/// ``Redaction/standard``.
///
/// Every Courier transport removes these headers when a redirect leaves the request's
/// origin (``Redirect/nextRequest(after:status:location:)``), and ``LoggingMiddleware`` and
/// cassettes write their values as `***` (``Redaction/header(_:of:)``). A middleware of your
/// own that sends a secret under a name of its own adds that name too:
///
/// ```swift
/// struct SigningMiddleware: Middleware {
///   func intercept(_ request: Request, next: Next) async throws -> Response {
///     var request = request
///     let name = try HTTPHeaders.Name("X-Signature")
///     try request.headers.set(name, "signature")
///     request.attributes[CredentialHeadersAttribute.self].insert(name)
///     return try await next(request)
///   }
/// }
/// ```
public enum CredentialHeadersAttribute: RequestAttributeKey {
  /// None.
  public static let defaultValue: Set<HTTPHeaders.Name> = []
}
