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
///
/// Stored as a persistent list: setting a value puts one new node, holding the value inline,
/// in front of the nodes it shares with every copy of the request. A middleware that copies
/// the request and sets one attribute therefore makes one allocation, where a dictionary made
/// a copy of itself (and a box for values larger than three words).
///
/// Reading and writing by key is `@inlinable`, so another module's read (a transport's, a
/// middleware's of its own module) is specialized for the key's value type where it is
/// compiled: unspecialized, each read looked the node's generic class metadata up in the
/// runtime's cache (measured: 2–3 % of CurlTransport's loop thread for three reads).
public struct RequestAttributes: Sendable {
  /// The newest entry; a key's first entry from here is its current value.
  @usableFromInline var head: (any AttributeNode)?
  /// How many entries the list holds, shadowed ones included; bounds the list's growth.
  private var length = 0

  /// Past this many entries, a set rebuilds the list with one entry per key.
  static let compactionThreshold = 32

  /// Creates an empty attribute bag.
  public init() {}

  /// The value for `key`, or the key's default when unset. Setting `nil` for a non-optional
  /// value type is impossible; to reset a key use ``removeValue(for:)``.
  @inlinable
  public subscript<Key: RequestAttributeKey>(key: Key.Type) -> Key.Value {
    get {
      guard let node = entry(for: ObjectIdentifier(key)), !node.isRemoval else {
        return Key.defaultValue
      }
      // Safe: every value node under this key was made by this subscript with `Key.Value`.
      return unsafeDowncast(node, to: ValueNode<Key.Value>.self).value
    }
    set { push(ValueNode<Key.Value>(ObjectIdentifier(key), newValue, next: head)) }
  }

  /// Removes any value stored for `key`, so reads give its default again.
  public mutating func removeValue<Key: RequestAttributeKey>(for key: Key.Type) {
    guard contains(key) else { return }
    push(RemovalNode(ObjectIdentifier(key), next: head))
  }

  /// Whether a value was stored for `key`.
  public func contains<Key: RequestAttributeKey>(_ key: Key.Type) -> Bool {
    entry(for: ObjectIdentifier(key)).map { !$0.isRemoval } ?? false
  }

  /// The number of keys with a stored value.
  public var count: Int { currentEntries().count }

  /// Whether no key has a stored value. Stops at the first value no newer removal hides, so
  /// a request with attributes answers at its first entry, without building a list.
  public var isEmpty: Bool {
    var removed: [ObjectIdentifier] = []
    var node = head
    while let current = node {
      if current.isRemoval {
        removed.append(current.key)
      } else if !removed.contains(current.key) {
        return false
      }
      node = current.next
    }
    return true
  }

  /// The newest entry for `key`, a removal included.
  @usableFromInline
  func entry(for key: ObjectIdentifier) -> (any AttributeNode)? {
    var node = head
    while let current = node {
      if current.key == key { return current }
      node = current.next
    }
    return nil
  }

  /// The current entry of every key that has a value, newest first.
  private func currentEntries() -> [any AttributeNode] {
    var seen: [ObjectIdentifier] = []
    var entries: [any AttributeNode] = []
    var node = head
    while let current = node {
      if !seen.contains(current.key) {
        seen.append(current.key)
        if !current.isRemoval { entries.append(current) }
      }
      node = current.next
    }
    return entries
  }

  @usableFromInline
  mutating func push(_ node: some AttributeNode) {
    head = node
    length += 1
    guard length > Self.compactionThreshold else { return }
    // Rebuild oldest first, so the newest entry ends up in front again.
    let entries = currentEntries()
    head = nil
    for entry in entries.reversed() { head = entry.relinked(before: head) }
    length = entries.count
  }
}

/// One entry of ``RequestAttributes``' list.
@usableFromInline
protocol AttributeNode: AnyObject, Sendable {
  var key: ObjectIdentifier { get }
  var next: (any AttributeNode)? { get }
  var isRemoval: Bool { get }
  /// The same entry in front of `next`.
  func relinked(before next: (any AttributeNode)?) -> any AttributeNode
}

/// An entry holding its value inline.
///
/// The value is stored as `Value`, not `Value?`: this class's deinit is generic code, and
/// destroying an optional made it look up the metadata of `Optional<Value>` in the runtime's
/// cache on every node freed (several per request), where `Value`'s own metadata comes with
/// the node's class. Removals are ``RemovalNode``s.
@usableFromInline
final class ValueNode<Value: Sendable>: AttributeNode {
  @usableFromInline let key: ObjectIdentifier
  @usableFromInline let value: Value
  @usableFromInline let next: (any AttributeNode)?

  /// Never: a value node holds a value.
  @usableFromInline var isRemoval: Bool { false }

  @usableFromInline
  init(_ key: ObjectIdentifier, _ value: Value, next: (any AttributeNode)?) {
    self.key = key
    self.value = value
    self.next = next
  }

  @usableFromInline
  func relinked(before next: (any AttributeNode)?) -> any AttributeNode {
    ValueNode(key, value, next: next)
  }
}

/// An entry recording that the key's value was removed.
@usableFromInline
final class RemovalNode: AttributeNode {
  @usableFromInline let key: ObjectIdentifier
  @usableFromInline let next: (any AttributeNode)?

  /// Always.
  @usableFromInline var isRemoval: Bool { true }

  @usableFromInline
  init(_ key: ObjectIdentifier, next: (any AttributeNode)?) {
    self.key = key
    self.next = next
  }

  @usableFromInline
  func relinked(before next: (any AttributeNode)?) -> any AttributeNode {
    RemovalNode(key, next: next)
  }
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
