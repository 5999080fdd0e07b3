/// Gives each logical request a W3C Trace Context id (`traceparent`, and optionally
/// `X-Request-ID`), the same across its retries and unique across requests, so client and
/// server logs join up.
///
/// The id is stored in the request's ``RequestIDAttribute`` as well as sent: logging prints it,
/// and ``CourierError/debugDescription`` names it. Place this middleware outside
/// `RetryMiddleware` so every attempt of one request carries the same id.
///
/// A request that already carries a valid `traceparent` (an incoming trace your service
/// continues) keeps its trace id; this middleware gives it a new parent (span) id. Set the
/// header yourself, or the ``RequestIDAttribute``, to continue a trace.
///
/// ```swift
/// let client = Client(
///   baseURL: base, transport: URLSessionTransport(),
///   middleware: [RequestIDMiddleware(requestIDHeader: true)])
/// ```
public struct RequestIDMiddleware: Middleware {
  /// Whether to send `X-Request-ID: <trace id>` as well. Default `false`.
  public var requestIDHeader: Bool

  /// Creates the middleware.
  public init(requestIDHeader: Bool = false) {
    self.requestIDHeader = requestIDHeader
  }

  /// Assigns the id and sends the request on.
  public func intercept(_ request: Request, next: Next) async throws -> Response {
    var request = request
    let incoming =
      request.attributes[RequestIDAttribute.self]
      ?? request.headers[.traceparent].flatMap(TraceContext.init(traceparent:))
    let context = incoming?.child() ?? TraceContext.random()
    request.attributes[RequestIDAttribute.self] = context
    try request.headers.set(.traceparent, context.traceparent)
    if requestIDHeader, !request.headers.contains(.requestID) {
      try request.headers.set(.requestID, context.traceID)
    }
    return try await next(request)
  }
}

/// The trace context ``RequestIDMiddleware`` gave a request.
public enum RequestIDAttribute: RequestAttributeKey {
  /// No id until the middleware assigns one.
  public static let defaultValue: TraceContext? = nil
}

/// A W3C Trace Context (`traceparent: 00-<trace id>-<parent id>-<flags>`).
public struct TraceContext: Sendable, Hashable, CustomStringConvertible {
  /// 32 lower-case hex digits, never all zero: the id of the whole trace.
  public let traceID: String
  /// 16 lower-case hex digits, never all zero: the id of this request within the trace.
  public let parentID: String
  /// The trace flags; `01` means sampled.
  public let flags: String

  /// A context with fresh random ids, sampled.
  public static func random() -> TraceContext {
    var generator = SystemRandomNumberGenerator()
    return TraceContext(
      traceID: hex(generator.next() as UInt64 | 1, generator.next() as UInt64),
      parentID: hex(generator.next() as UInt64 | 1), flags: "01")
  }

  /// Parses a `traceparent` value; `nil` when it is not version `00` with valid ids.
  public init?(traceparent: String) {
    let parts = traceparent.split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 4, parts[0] == "00",
      Self.isHex(parts[1], count: 32, nonZero: true),
      Self.isHex(parts[2], count: 16, nonZero: true), Self.isHex(parts[3], count: 2)
    else { return nil }
    self.init(traceID: String(parts[1]), parentID: String(parts[2]), flags: String(parts[3]))
  }

  private init(traceID: String, parentID: String, flags: String) {
    self.traceID = traceID
    self.parentID = parentID
    self.flags = flags
  }

  /// The same trace with a new parent id: the next hop of a continued trace.
  public func child() -> TraceContext {
    var generator = SystemRandomNumberGenerator()
    return TraceContext(
      traceID: traceID, parentID: Self.hex(generator.next() as UInt64 | 1), flags: flags)
  }

  /// The `traceparent` header value.
  public var traceparent: String { "00-\(traceID)-\(parentID)-\(flags)" }

  /// The trace id.
  public var description: String { traceID }

  /// Whether `text` is `count` lower-case hex digits (and not all zero, when asked).
  private static func isHex(_ text: Substring, count: Int, nonZero: Bool = false) -> Bool {
    text.utf8.count == count
      && text.utf8.allSatisfy { ASCII.isDigit($0) || $0 &- UInt8(ascii: "a") < 6 }
      && (!nonZero || text.utf8.contains { $0 != UInt8(ascii: "0") })
  }

  private static func hex(_ words: UInt64...) -> String {
    var text = ""
    for word in words {
      let digits = String(word, radix: 16)
      text += String(repeating: "0", count: 16 - digits.count) + digits
    }
    return text
  }
}
