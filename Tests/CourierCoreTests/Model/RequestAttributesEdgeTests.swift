import CourierCore
import CourierTesting
import Foundation
import Testing

// Keys whose value types stress how a dictionary of `any Sendable` casts a value back.

private enum TripleOptionalKey: RequestAttributeKey {
  static let defaultValue: Int??? = 1
}

private enum AnyOptionalKey: RequestAttributeKey {
  static let defaultValue: (any Sendable)? = "default"
}

private enum AnyKey: RequestAttributeKey {
  static let defaultValue: any Sendable = "default"
}

private protocol Shape: Sendable {
  var sides: Int { get }
}

private struct Square: Shape, Equatable {
  var sides: Int { 4 }
  var size = 1
}

private struct Triangle: Shape {
  var sides: Int { 3 }
}

private enum ShapeKey: RequestAttributeKey {
  static let defaultValue: any Shape = Triangle()
}

private enum OptionalShapeKey: RequestAttributeKey {
  static let defaultValue: (any Shape)? = nil
}

private class Animal: @unchecked Sendable {
  // Immutable after init: nothing to guard.
  let name: String
  init(name: String) { self.name = name }
}

private final class Dog: Animal, @unchecked Sendable {
  // Immutable after init: nothing to guard.
}

private enum AnimalKey: RequestAttributeKey {
  static let defaultValue: Animal? = nil
}

/// One generic key: each specialization must be a key of its own.
private enum GenericKey<T: Sendable>: RequestAttributeKey {
  static var defaultValue: T? { nil }
}

/// Two keys with the same value type.
private enum FirstIntKey: RequestAttributeKey {
  static let defaultValue = 0
}

private enum SecondIntKey: RequestAttributeKey {
  static let defaultValue = 0
}

/// A key that is a class, and a subclass of it: two keys.
private class BaseClassKey: RequestAttributeKey, @unchecked Sendable {
  // No instances: only the metatype is used.
  static let defaultValue = "base"
}

private final class SubClassKey: BaseClassKey, @unchecked Sendable {
  // No instances: only the metatype is used.
}

private enum MetatypeKey: RequestAttributeKey {
  static let defaultValue: any Sendable.Type = Int.self
}

@Suite("RequestAttributes edge cases", .timeLimit(.minutes(5)))
struct RequestAttributesEdgeTests {
  @Test("every level of a triple optional reads back as itself")
  func tripleOptional() {
    var attributes = RequestAttributes()
    #expect(attributes[TripleOptionalKey.self] == 1)
    attributes[TripleOptionalKey.self] = .some(.some(nil))
    #expect(attributes[TripleOptionalKey.self] == .some(.some(nil)))
    attributes[TripleOptionalKey.self] = .some(nil)
    #expect(attributes[TripleOptionalKey.self] == .some(nil))
    attributes[TripleOptionalKey.self] = nil
    #expect(attributes[TripleOptionalKey.self] == nil)
    attributes[TripleOptionalKey.self] = 5
    #expect(attributes[TripleOptionalKey.self] == 5)
    #expect(attributes.count == 1)
  }

  @Test("an existential optional keeps an optional inside it, and nil stays nil")
  func anyOptional() {
    var attributes = RequestAttributes()
    attributes[AnyOptionalKey.self] = .some(Int?.none as any Sendable)
    let inner = attributes[AnyOptionalKey.self]
    #expect(inner != nil)
    #expect(inner.map { $0 is Int? } == true)
    attributes[AnyOptionalKey.self] = nil
    #expect(attributes[AnyOptionalKey.self] == nil)
    #expect(attributes.contains(AnyOptionalKey.self))
    // A plain `any Sendable` holding an optional nil is not the default.
    attributes[AnyKey.self] = Int?.none as any Sendable
    #expect((attributes[AnyKey.self] as? String) == nil)
    #expect(attributes[AnyKey.self] is Int?)
  }

  @Test("an existential value keeps its dynamic type; a class keeps its identity")
  func existentialAndClass() {
    var attributes = RequestAttributes()
    attributes[ShapeKey.self] = Square(size: 9)
    #expect(attributes[ShapeKey.self].sides == 4)
    #expect((attributes[ShapeKey.self] as? Square) == Square(size: 9))
    #expect(attributes[OptionalShapeKey.self] == nil)
    attributes[OptionalShapeKey.self] = Triangle()
    #expect(attributes[OptionalShapeKey.self]?.sides == 3)

    let dog = Dog(name: "rex")
    attributes[AnimalKey.self] = dog
    #expect(attributes[AnimalKey.self] === dog)
    #expect(attributes[AnimalKey.self] is Dog)
    var copy = attributes
    copy[AnimalKey.self] = Animal(name: "cat")
    #expect(attributes[AnimalKey.self] === dog)
    #expect(copy[AnimalKey.self]?.name == "cat")
  }

  @Test("a metatype value reads back as the same type")
  func metatype() {
    var attributes = RequestAttributes()
    #expect(ObjectIdentifier(attributes[MetatypeKey.self]) == ObjectIdentifier(Int.self))
    attributes[MetatypeKey.self] = String.self
    #expect(ObjectIdentifier(attributes[MetatypeKey.self]) == ObjectIdentifier(String.self))
  }

  @Test("each specialization of a generic key is a key of its own")
  func genericKeys() {
    var attributes = RequestAttributes()
    attributes[GenericKey<Int>.self] = 1
    attributes[GenericKey<String>.self] = "one"
    attributes[GenericKey<Int?>.self] = .some(nil)
    #expect(attributes[GenericKey<Int>.self] == 1)
    #expect(attributes[GenericKey<String>.self] == "one")
    #expect(attributes[GenericKey<Int?>.self] == .some(nil))
    #expect(attributes[GenericKey<Double>.self] == nil)
    #expect(attributes.count == 3)
    attributes.removeValue(for: GenericKey<Int>.self)
    #expect(attributes[GenericKey<Int>.self] == nil)
    #expect(attributes[GenericKey<String>.self] == "one")
    #expect(attributes.count == 2)
  }

  @Test("two keys with the same value type, and a class key and its subclass, are apart")
  func sameValueType() {
    var attributes = RequestAttributes()
    attributes[FirstIntKey.self] = 1
    #expect(attributes[SecondIntKey.self] == 0)
    #expect(!attributes.contains(SecondIntKey.self))
    attributes[SecondIntKey.self] = 2
    #expect(attributes[FirstIntKey.self] == 1)
    #expect(attributes[SecondIntKey.self] == 2)

    attributes[BaseClassKey.self] = "b"
    #expect(attributes[SubClassKey.self] == "base")
    attributes[SubClassKey.self] = "s"
    #expect(attributes[BaseClassKey.self] == "b")
    #expect(attributes[SubClassKey.self] == "s")
    // Through a metatype of the base class that holds the subclass.
    let key: BaseClassKey.Type = SubClassKey.self
    #expect(attributes[key] == "s")
    attributes[key] = "via base"
    #expect(attributes[SubClassKey.self] == "via base")
    #expect(attributes[BaseClassKey.self] == "b")
    #expect(attributes.count == 4)
  }

  @Test("count, isEmpty, contains and removeValue: a stored default or nil counts")
  func countingRules() {
    var attributes = RequestAttributes()
    attributes.removeValue(for: FirstIntKey.self)
    #expect(attributes.isEmpty)
    #expect(attributes.count == 0)
    attributes[FirstIntKey.self] = 0  // the default, stored
    #expect(attributes.contains(FirstIntKey.self))
    #expect(attributes.count == 1)
    attributes[GenericKey<Int>.self] = nil  // nil, stored
    #expect(attributes.contains(GenericKey<Int>.self))
    #expect(attributes.count == 2)
    attributes[GenericKey<Int>.self] = nil
    #expect(attributes.count == 2)
    attributes.removeValue(for: GenericKey<Int>.self)
    attributes.removeValue(for: GenericKey<Int>.self)
    #expect(attributes.count == 1)
    #expect(!attributes.isEmpty)
    // Request.timeout = nil is stored too.
    var request = Request(url: testBase)
    #expect(request.attributes.isEmpty)
    request.timeout = nil
    #expect(request.attributes.contains(TimeoutAttribute.self))
    #expect(!request.attributes.isEmpty)
  }

  @Test("a middleware's change to its copy never reaches the caller's request")
  func middlewareCopy() async throws {
    struct Setter: Middleware {
      func intercept(_ request: Request, next: Next) async throws -> Response {
        var copy = request
        copy.attributes[FirstIntKey.self] = 42
        copy.attributes.removeValue(for: SecondIntKey.self)
        copy.attributes[AnimalKey.self] = Animal(name: "inner")
        let response = try await next(copy)
        // The request this middleware was given is unchanged.
        #expect(request.attributes[FirstIntKey.self] == 1)
        #expect(request.attributes[SecondIntKey.self] == 2)
        #expect(request.attributes[AnimalKey.self]?.name == "outer")
        return response
      }
    }
    let stub = StubTransport([.text("ok")])
    let client = stubClient(stub, middleware: [Setter()])
    var request = Request(url: testBase)
    request.attributes[FirstIntKey.self] = 1
    request.attributes[SecondIntKey.self] = 2
    request.attributes[AnimalKey.self] = Animal(name: "outer")
    _ = try await client.send(request)
    #expect(request.attributes[FirstIntKey.self] == 1)
    #expect(request.attributes[SecondIntKey.self] == 2)
    #expect(request.attributes[AnimalKey.self]?.name == "outer")
    #expect(request.attributes.count == 3)
    let sent = try #require(stub.requests.first)
    #expect(sent.attributes[FirstIntKey.self] == 42)
    #expect(!sent.attributes.contains(SecondIntKey.self))
    #expect(sent.attributes[AnimalKey.self]?.name == "inner")
  }

  @Test("many tasks read and copy-and-write one request at once")
  func concurrentReads() async {
    var request = Request(url: testBase)
    request.attributes[FirstIntKey.self] = 7
    request.attributes[GenericKey<String>.self] = "shared"
    request.attributes[TripleOptionalKey.self] = .some(nil)
    let shared = request
    let failures = await withTaskGroup(of: Int.self) { group in
      for task in 0..<8 {
        group.addTask {
          var failures = 0
          for index in 0..<2_000 {
            if shared.attributes[FirstIntKey.self] != 7 { failures += 1 }
            if shared.attributes[GenericKey<String>.self] != "shared" { failures += 1 }
            if shared.attributes[TripleOptionalKey.self] != .some(nil) { failures += 1 }
            var mine = shared
            mine.attributes[FirstIntKey.self] = task * 10_000 + index
            mine.attributes.removeValue(for: GenericKey<String>.self)
            if mine.attributes[FirstIntKey.self] != task * 10_000 + index { failures += 1 }
            if mine.attributes.count != 2 { failures += 1 }
          }
          return failures
        }
      }
      return await group.reduce(0, +)
    }
    #expect(failures == 0)
    #expect(shared.attributes[FirstIntKey.self] == 7)
    #expect(shared.attributes.count == 3)
  }

  @Test("an endpoint's generic attribute(_:_:) stores under the key's own type")
  func endpointAttribute() {
    var attributes = RequestAttributes()
    func set<Key: RequestAttributeKey>(_ key: Key.Type, _ value: Key.Value) {
      attributes[key] = value
    }
    set(GenericKey<Int>.self, 3)
    set(TripleOptionalKey.self, .some(.some(nil)))
    #expect(attributes[GenericKey<Int>.self] == 3)
    #expect(attributes[TripleOptionalKey.self] == .some(.some(nil)))
  }
}
