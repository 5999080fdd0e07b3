/// A typed key for a value stored in ``RequestAttributes``.
///
/// Attributes carry per-request options that middleware read and write — a timeout, a retry
/// override, tags — without Courier knowing every option up front. They are the control plane
/// between endpoint, middleware and transport; `Docs/RequestAttributes.md` in the repository
/// lists every built-in key, who sets it and who reads it. Declare a key as an enum
/// (it is never instantiated) with the value type and the value used when the key is unset.
///
/// ```swift
/// enum TraceIDKey: RequestAttributeKey {
///   static let defaultValue: String? = nil
/// }
///
/// var request = Request(method: .get, url: url)
/// request.attributes[TraceIDKey.self] = "abc"
///
/// struct TracingMiddleware: Middleware {
///   func intercept(_ request: Request, next: Next) async throws -> Response {
///     var request = request
///     if let id = request.attributes[TraceIDKey.self] {
///       try request.headers.set("X-Trace-ID", id)
///     }
///     return try await next(request)
///   }
/// }
/// ```
public protocol RequestAttributeKey: Sendable {
  /// The type of the stored value.
  associatedtype Value: Sendable
  /// The value read when nothing was stored under this key.
  static var defaultValue: Value { get }
}
