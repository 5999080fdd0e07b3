/// A type-safe bag of per-request options keyed by ``RequestAttributeKey`` types.
///
/// A value type: a middleware that sets an attribute on its copy of a request changes nothing
/// for the request it was given, nor for any other request. Every key Courier defines, with
/// who sets it and who reads it, is listed in `Docs/RequestAttributes.md`.
///
/// Stored as a persistent list: setting a value puts one new node, holding the value inline,
/// in front of the nodes it shares with every copy of the request. A middleware that copies
/// the request and sets one attribute therefore makes one allocation, where a dictionary would
/// copy itself (and box values larger than three words).
///
/// Four keys that Courier's standard middleware set on every request or attempt —
/// ``AttemptAttribute``, ``TimeoutAttribute``, ``DeadlineAttribute`` and
/// ``RequestIDAttribute`` — have slots of their own inside the value instead (`CoreSlots`):
/// setting them allocates nothing. They behave exactly like every other key:
/// ``contains(_:)``, ``removeValue(for:)``, ``count`` and ``isEmpty`` see them.
///
/// Reading and writing by key is `@inlinable`, so another module's read (a transport's, a
/// middleware's of its own module) is specialized for the key's value type where it is
/// compiled; unspecialized, each read would look the node's generic class metadata up in the
/// runtime's cache. Why these two tricks stay is recorded in `Docs/Benchmarks.md`.
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
