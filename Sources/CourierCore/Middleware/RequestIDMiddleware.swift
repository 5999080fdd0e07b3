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
  public var traceparent: String {
    // Built in place: one allocation, where interpolation made several.
    let count = 6 + traceID.utf8.count + parentID.utf8.count + flags.utf8.count
    return String(unsafeUninitializedCapacity: count) { buffer in
      var index = 0
      func append(_ text: String) {
        for byte in text.utf8 {
          buffer[index] = byte
          index += 1
        }
      }
      append("00-")
      append(traceID)
      append("-")
      append(parentID)
      append("-")
      append(flags)
      return index
    }
  }

  /// The trace id.
  public var description: String { traceID }

  /// Whether `text` is `count` lower-case hex digits (and not all zero, when asked).
  private static func isHex(_ text: Substring, count: Int, nonZero: Bool = false) -> Bool {
    text.utf8.count == count
      && text.utf8.allSatisfy { ASCII.isDigit($0) || $0 &- UInt8(ascii: "a") < 6 }
      && (!nonZero || text.utf8.contains { $0 != UInt8(ascii: "0") })
  }

  /// `high` (and `low`) as 16 (32) lower-case hex digits, written straight into the string.
  private static func hex(_ high: UInt64, _ low: UInt64? = nil) -> String {
    let count = low == nil ? 16 : 32
    return String(unsafeUninitializedCapacity: count) { buffer in
      writeHex(high, into: buffer, at: 0)
      if let low { writeHex(low, into: buffer, at: 16) }
      return count
    }
  }

  private static func writeHex(
    _ word: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int
  ) {
    for index in 0..<16 {
      let nibble = UInt8(truncatingIfNeeded: word >> UInt64((15 - index) * 4)) & 0xF
      buffer[offset + index] = nibble < 10 ? nibble &+ UInt8(ascii: "0") : nibble &+ 87
    }
  }
}

extension RequestIDMiddleware: CustomStringConvertible {
  /// `RequestIDMiddleware(traceparent; X-Request-ID: off)`.
  public var description: String {
    "RequestIDMiddleware(traceparent; X-Request-ID: \(requestIDHeader ? "on" : "off"))"
  }
}
