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

/// A type-safe bag of per-request options keyed by ``RequestAttributeKey`` types.
///
/// Stored as a persistent list: setting a value puts one new node, holding the value inline,
/// in front of the nodes it shares with every copy of the request. A middleware that copies
/// the request and sets one attribute therefore makes one allocation, where a dictionary made
/// a copy of itself (and a box for values larger than three words).
///
/// Four keys that Courier's standard middleware set on every request or attempt —
/// ``AttemptAttribute``, ``TimeoutAttribute``, ``DeadlineAttribute`` and
/// ``RequestIDAttribute`` — have slots of their own inside the value instead (``CoreSlots``,
/// about 100 bytes): setting them allocates nothing, which took the five standard middleware
/// from 6 allocations per request to 2 (`courier-bench chain`). They behave exactly like every
/// other key: ``contains(_:)``, ``removeValue(for:)``, ``count`` and ``isEmpty`` see them.
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
  /// The values of the four keys stored inline.
  @usableFromInline var core = CoreSlots()

  /// Past this many entries, a set rebuilds the list with one entry per key.
  static let compactionThreshold = 32

  /// Creates an empty attribute bag.
  public init() {}

  /// The value for `key`, or the key's default when unset. Setting `nil` for a non-optional
  /// value type is impossible; to reset a key use ``removeValue(for:)``.
  @inlinable
  public subscript<Key: RequestAttributeKey>(key: Key.Type) -> Key.Value {
    get {
      if let slot = CoreSlots.Slot(Key.self) {
        return core.value(slot, as: Key.Value.self) ?? Key.defaultValue
      }
      guard let node = entry(for: ObjectIdentifier(key)), !node.isRemoval else {
        return Key.defaultValue
      }
      // Safe: every value node under this key was made by this subscript with `Key.Value`.
      return unsafeDowncast(node, to: ValueNode<Key.Value>.self).value
    }
    set {
      if let slot = CoreSlots.Slot(Key.self) {
        core.set(slot, newValue)
        return
      }
      push(ValueNode<Key.Value>(ObjectIdentifier(key), newValue, next: head))
    }
  }

  /// Removes any value stored for `key`, so reads give its default again.
  public mutating func removeValue<Key: RequestAttributeKey>(for key: Key.Type) {
    if let slot = CoreSlots.Slot(Key.self) {
      core.clear(slot)
      return
    }
    guard contains(key) else { return }
    push(RemovalNode(ObjectIdentifier(key), next: head))
  }

  /// Whether a value was stored for `key`.
  public func contains<Key: RequestAttributeKey>(_ key: Key.Type) -> Bool {
    if let slot = CoreSlots.Slot(Key.self) { return core.contains(slot) }
    return entry(for: ObjectIdentifier(key)).map { !$0.isRemoval } ?? false
  }

  /// The number of keys with a stored value.
  public var count: Int { core.count + currentEntries().count }

  /// Whether no key has a stored value. Stops at the first value no newer removal hides, so
  /// a request with attributes answers at its first entry, without building a list.
  public var isEmpty: Bool {
    guard core.count == 0 else { return false }
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

/// The inline slots of ``RequestAttributes`` for the keys Courier's standard middleware set
/// on every request: a slot is `nil` while its key is unset.
///
/// Reads and writes go through a ``Slot`` found by comparing the key's metatype with the four
/// keys; in code specialized for a key (the subscript is `@inlinable`) the comparison folds
/// away, and for any other key it is four pointer comparisons before the list is searched.
@usableFromInline
struct CoreSlots: Sendable {
  @usableFromInline var attempt: Int?
  @usableFromInline var timeout: Duration??
  @usableFromInline var deadline: Deadline??
  @usableFromInline var trace: TraceContext??

  @usableFromInline init() {}

  /// Which slot a key has.
  @usableFromInline
  enum Slot {
    case attempt, timeout, deadline, trace

    /// The slot of `key`, or `nil` for a key stored in the list.
    @inlinable
    init?<Key: RequestAttributeKey>(_ key: Key.Type) {
      if key == AttemptAttribute.self {
        self = .attempt
      } else if key == TimeoutAttribute.self {
        self = .timeout
      } else if key == DeadlineAttribute.self {
        self = .deadline
      } else if key == RequestIDAttribute.self {
        self = .trace
      } else {
        return nil
      }
    }
  }

  /// The value in `slot`, `nil` when unset.
  ///
  /// `Value` is the slot's own value type: ``Slot/init(_:)`` matched the key, and each key
  /// declares exactly that type, so the casts below reinterpret a value as its own type.
  @inlinable
  func value<Value>(_ slot: Slot, as type: Value.Type) -> Value? {
    switch slot {
    case .attempt: attempt.map { unsafeBitCast($0, to: Value.self) }
    case .timeout: timeout.map { unsafeBitCast($0, to: Value.self) }
    case .deadline: deadline.map { unsafeBitCast($0, to: Value.self) }
    case .trace: trace.map { unsafeBitCast($0, to: Value.self) }
    }
  }

  /// Stores `value` in `slot` (see ``value(_:as:)`` for why the casts are exact).
  @inlinable
  mutating func set<Value>(_ slot: Slot, _ value: Value) {
    switch slot {
    case .attempt: attempt = unsafeBitCast(value, to: Int.self)
    case .timeout: timeout = .some(unsafeBitCast(value, to: Duration?.self))
    case .deadline: deadline = .some(unsafeBitCast(value, to: Deadline?.self))
    case .trace: trace = .some(unsafeBitCast(value, to: TraceContext?.self))
    }
  }

  /// Unsets `slot`.
  @usableFromInline
  mutating func clear(_ slot: Slot) {
    switch slot {
    case .attempt: attempt = nil
    case .timeout: timeout = nil
    case .deadline: deadline = nil
    case .trace: trace = nil
    }
  }

  /// Whether `slot` is set.
  @usableFromInline
  func contains(_ slot: Slot) -> Bool {
    switch slot {
    case .attempt: attempt != nil
    case .timeout: timeout != nil
    case .deadline: deadline != nil
    case .trace: trace != nil
    }
  }

  /// How many slots are set.
  @usableFromInline
  var count: Int {
    (attempt != nil ? 1 : 0) + (timeout != nil ? 1 : 0) + (deadline != nil ? 1 : 0)
      + (trace != nil ? 1 : 0)
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
