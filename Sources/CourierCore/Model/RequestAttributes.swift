/// A typed key for a value stored in ``RequestAttributes``.
///
/// Attributes carry per-request options that middleware read and write — a timeout, a retry
/// override, tags — without Courier knowing every option up front. Declare a key as an enum
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

/// A type-safe bag of per-request options keyed by ``RequestAttributeKey`` types.
public struct RequestAttributes: Sendable {
  private var storage: [ObjectIdentifier: any Sendable] = [:]

  /// Creates an empty attribute bag.
  public init() {}

  /// The value for `key`, or the key's default when unset. Setting `nil` for a non-optional
  /// value type is impossible; to reset a key use ``removeValue(for:)``.
  public subscript<Key: RequestAttributeKey>(key: Key.Type) -> Key.Value {
    get { storage[ObjectIdentifier(key)] as? Key.Value ?? Key.defaultValue }
    set { storage[ObjectIdentifier(key)] = newValue }
  }

  /// Removes any value stored for `key`, so reads give its default again.
  public mutating func removeValue<Key: RequestAttributeKey>(for key: Key.Type) {
    storage[ObjectIdentifier(key)] = nil
  }

  /// Whether a value was stored for `key`.
  public func contains<Key: RequestAttributeKey>(_ key: Key.Type) -> Bool {
    storage[ObjectIdentifier(key)] != nil
  }

  /// The number of keys with a stored value.
  public var count: Int { storage.count }
}

/// The per-attempt timeout a transport should apply. `nil` leaves the transport's own default.
public enum TimeoutAttribute: RequestAttributeKey {
  /// No timeout override by default.
  public static let defaultValue: Duration? = nil
}

/// Free-form labels for a request (for logging, metrics, or selecting requests in tests).
public enum TagsAttribute: RequestAttributeKey {
  /// No tags by default.
  public static let defaultValue: Set<String> = []
}
