/// Gives each logical request a W3C Trace Context id, the same across its retries and unique
/// across requests, and sends it as `traceparent` (and optionally `X-Request-ID`), so client
/// and server logs join up.
///
/// The id is stored in the request's ``RequestIDAttribute``: logging prints it, and
/// ``CourierError/debugDescription`` names it. Place this middleware outside
/// `RetryMiddleware` so every attempt of one request carries the same id.
///
/// A request that already carries a valid `traceparent` (an incoming trace your service
/// continues) keeps its trace id; this middleware gives it a new parent (span) id. Set the
/// header yourself, the ``RequestIDAttribute``, or ``TraceContext/current`` for the task, to
/// continue a trace.
///
/// A client with a ``RequestTracer`` sends each attempt's `traceparent` itself, naming the
/// attempt's span, and that header replaces this middleware's: the server's span must point
/// at a span the tracer records. The id this middleware records is then the request span's
/// trace, so logs and traces still share the trace id.
///
/// With ``sendsTraceparent`` off the id is only recorded: log lines and errors of one request
/// still share it, and nothing new goes on the wire (a `traceparent` the caller set goes as
/// it is). `Client.standard` starts that way, as AsyncHTTPClient, Alamofire and OkHttp send no
/// trace header unless asked; turn it on where your servers read the header:
///
/// ```swift
/// let client = Client(
///   baseURL: base, transport: URLSessionTransport(),
///   middleware: [RequestIDMiddleware(requestIDHeader: true)])
///
/// let standard = Client.standard(baseURL: base) { $0.requestID?.sendsTraceparent = true }
/// ```
public struct RequestIDMiddleware: Middleware {
  /// Whether to send the id as a W3C `traceparent` header. Default `true` here, `false` in
  /// `Client.standard`'s preset.
  public var sendsTraceparent: Bool
  /// Whether to send `X-Request-ID: <trace id>` as well. Default `false`.
  public var requestIDHeader: Bool

  /// Creates the middleware.
  ///
  /// - Parameters:
  ///   - sendsTraceparent: Send the id as `traceparent`; when `false` it is only recorded in
  ///     ``RequestIDAttribute`` for logs and errors. Default `true`.
  ///   - requestIDHeader: Send `X-Request-ID: <trace id>` as well. Default `false`.
  public init(sendsTraceparent: Bool = true, requestIDHeader: Bool = false) {
    self.sendsTraceparent = sendsTraceparent
    self.requestIDHeader = requestIDHeader
  }

  /// Assigns the id and sends the request on.
  nonisolated(nonsending) public func intercept(
    _ request: Request, next: Next
  ) async throws
    -> Response
  {
    var request = request
    let incoming =
      request.attributes[RequestIDAttribute.self]
      ?? request.headers[.traceparent].flatMap(TraceContext.init(traceparent:))
      ?? TraceContext.current
    let context: TraceContext
    if sendsTraceparent {
      // A new span for this hop, announced to the server.
      context = incoming?.child() ?? TraceContext.random()
      // Formatted here from hex digits and dashes: nothing to check.
      request.headers.set(.traceparent, trustedValue: context.traceparent)
    } else {
      // Recorded only: no new span, and the request's headers are left as they are.
      context = incoming ?? TraceContext.random()
    }
    request.attributes[RequestIDAttribute.self] = context
    if requestIDHeader, !request.headers.contains(.requestID) {
      try request.headers.set(.requestID, context.traceID)
    }
    return try await next(request)
  }
}

extension RequestIDMiddleware: CustomStringConvertible {
  /// `RequestIDMiddleware(traceparent: on, X-Request-ID: off)`.
  public var description: String {
    "RequestIDMiddleware(traceparent: \(sendsTraceparent ? "on" : "off"), "
      + "X-Request-ID: \(requestIDHeader ? "on" : "off"))"
  }
}
