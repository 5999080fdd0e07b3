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
