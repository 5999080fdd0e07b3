import CourierCore
import Foundation
import Testing

private enum NameKey: RequestAttributeKey {
  static let defaultValue = "none"
}

private enum LimitKey: RequestAttributeKey {
  static let defaultValue: Duration? = .seconds(9)
}

/// A value larger than three words, which an existential would have boxed.
private struct Wide: Sendable, Equatable {
  var a = 1, b = 2, c = 3, d = 4, e = 5
}

/// A value that is itself optional, inside the optional a key may hold.
private enum NestedKey: RequestAttributeKey {
  static let defaultValue: Int?? = 7
}

private enum WideKey: RequestAttributeKey {
  static let defaultValue = Wide(a: 0)
}

@Suite("RequestAttributes")
struct RequestAttributesTests {
  @Test("unset keys read their default; set values read back, newest wins")
  func setAndGet() {
    var attributes = RequestAttributes()
    #expect(attributes[NameKey.self] == "none")
    #expect(attributes.isEmpty)
    attributes[NameKey.self] = "a"
    attributes[WideKey.self] = Wide(e: 50)
    attributes[NameKey.self] = "b"
    #expect(attributes[NameKey.self] == "b")
    #expect(attributes[WideKey.self] == Wide(e: 50))
    #expect(attributes.count == 2)
    #expect(!attributes.isEmpty)
  }

  @Test("an explicit nil for an optional value is stored, not a removal")
  func explicitNil() {
    var attributes = RequestAttributes()
    attributes[LimitKey.self] = nil
    #expect(attributes[LimitKey.self] == nil)
    #expect(attributes.contains(LimitKey.self))
    attributes.removeValue(for: LimitKey.self)
    #expect(attributes[LimitKey.self] == .seconds(9))
    #expect(!attributes.contains(LimitKey.self))
    #expect(attributes.count == 0)
    #expect(attributes.isEmpty)
    // Each level of nil reads back as itself, not flattened or lost.
    attributes[NestedKey.self] = .some(nil)
    #expect(attributes[NestedKey.self] == .some(nil))
    attributes[NestedKey.self] = nil
    #expect(attributes[NestedKey.self] == nil)
    #expect(attributes.contains(NestedKey.self))
  }

  @Test("isEmpty sees past removals to a value still set, and through removals of all")
  func emptiness() {
    var attributes = RequestAttributes()
    attributes[NameKey.self] = "a"
    attributes[WideKey.self] = Wide(a: 1)
    attributes.removeValue(for: WideKey.self)
    #expect(!attributes.isEmpty)
    attributes.removeValue(for: NameKey.self)
    #expect(attributes.isEmpty)
    attributes[WideKey.self] = Wide(a: 2)
    #expect(!attributes.isEmpty)
  }

  @Test("a copy changed later leaves the original as it was")
  func copiesAreIndependent() {
    var original = RequestAttributes()
    original[NameKey.self] = "original"
    var copy = original
    copy[NameKey.self] = "copy"
    copy[WideKey.self] = Wide(a: 7)
    original.removeValue(for: NameKey.self)
    #expect(copy[NameKey.self] == "copy")
    #expect(original[NameKey.self] == "none")
    #expect(original[WideKey.self] == Wide(a: 0))
    #expect(copy.count == 2)
  }

  @Test("a key set a thousand times keeps its newest value and its neighbours")
  func manySets() {
    var attributes = RequestAttributes()
    attributes[WideKey.self] = Wide(b: 20)
    for index in 0..<1_000 {
      attributes[NameKey.self] = "value \(index)"
      if index == 500 { attributes.removeValue(for: LimitKey.self) }
      if index == 600 { attributes[LimitKey.self] = .seconds(1) }
    }
    #expect(attributes[NameKey.self] == "value 999")
    #expect(attributes[WideKey.self] == Wide(b: 20))
    #expect(attributes[LimitKey.self] == .seconds(1))
    #expect(attributes.count == 3)
  }

  @Test(
    "Courier's own keys (attempt, timeout, deadline, request id) behave like every other key")
  func inlineKeys() throws {
    var attributes = RequestAttributes()
    #expect(attributes[AttemptAttribute.self] == 1)
    #expect(attributes[TimeoutAttribute.self] == nil)
    #expect(!attributes.contains(TimeoutAttribute.self))
    let trace = TraceContext.random()
    let deadline = Deadline(after: .seconds(5))
    attributes[AttemptAttribute.self] = 3
    attributes[TimeoutAttribute.self] = .seconds(2)
    attributes[DeadlineAttribute.self] = deadline
    attributes[RequestIDAttribute.self] = trace
    attributes[NameKey.self] = "listed"
    #expect(attributes[AttemptAttribute.self] == 3)
    #expect(attributes[TimeoutAttribute.self] == .seconds(2))
    #expect(attributes[DeadlineAttribute.self]?.limit == .seconds(5))
    #expect(attributes[RequestIDAttribute.self] == trace)
    #expect(attributes.count == 5)
    // A copy changed later leaves the original as it was.
    var copy = attributes
    copy[AttemptAttribute.self] = 4
    copy.removeValue(for: RequestIDAttribute.self)
    #expect(attributes[AttemptAttribute.self] == 4 - 1)
    #expect(attributes[RequestIDAttribute.self] == trace)
    #expect(copy[RequestIDAttribute.self] == nil)
    #expect(!copy.contains(RequestIDAttribute.self))
    #expect(copy.count == 4)
    // An explicit nil is stored, not a removal, as for a listed key.
    copy[TimeoutAttribute.self] = nil
    #expect(copy.contains(TimeoutAttribute.self))
    #expect(copy[TimeoutAttribute.self] == nil)
    for key in [AttemptAttribute.self, TimeoutAttribute.self, DeadlineAttribute.self]
      as [any RequestAttributeKey.Type]
    {
      remove(key, from: &copy)
    }
    copy.removeValue(for: NameKey.self)
    #expect(copy.isEmpty)
    #expect(copy.count == 0)
    #expect(copy[AttemptAttribute.self] == 1)
    // Only one of them set: not empty.
    var inlineOnly = RequestAttributes()
    inlineOnly[DeadlineAttribute.self] = nil
    #expect(!inlineOnly.isEmpty)
  }

  /// Removes `key` through a generic call, as code that does not know the key's type does.
  private func remove<Key: RequestAttributeKey>(
    _ key: Key.Type, from attributes: inout RequestAttributes
  ) {
    attributes.removeValue(for: key)
  }
}
