import Foundation

/// An HTTP request as it travels through the middleware chain to a ``Transport``.
///
/// A value type: a middleware that changes a request changes its own copy and passes it on.
public struct Request: Sendable {
  /// The request method.
  public var method: HTTPMethod
  /// The absolute URL of the target resource.
  public var url: URL
  /// The header fields, validated at insertion.
  public var headers: HTTPHeaders
  /// The body.
  public var body: RequestBody
  /// Typed per-request options that middleware and transports read.
  public var attributes: RequestAttributes

  /// Creates a request.
  public init(
    method: HTTPMethod = .get,
    url: URL,
    headers: HTTPHeaders = HTTPHeaders(),
    body: RequestBody = .empty,
    attributes: RequestAttributes = RequestAttributes()
  ) {
    self.method = method
    self.url = url
    self.headers = headers
    self.body = body
    self.attributes = attributes
  }

  /// The per-attempt timeout (stored as ``TimeoutAttribute``); `nil` keeps the transport's.
  public var timeout: Duration? {
    get { attributes[TimeoutAttribute.self] }
    set { attributes[TimeoutAttribute.self] = newValue }
  }

  /// Free-form labels (stored as ``TagsAttribute``).
  public var tags: Set<String> {
    get { attributes[TagsAttribute.self] }
    set { attributes[TagsAttribute.self] = newValue }
  }
}

extension Request: CustomStringConvertible {
  /// `METHOD url` without headers, body, query or fragment values or user info, which may
  /// hold credentials: safe to log.
  public var description: String { "\(method) \(CourierError.redactedURL(url))" }
}
