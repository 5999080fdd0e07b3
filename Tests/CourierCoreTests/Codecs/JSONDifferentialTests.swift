import CourierCore
import CourierTesting
import Foundation
import Testing

/// What `client.send` decodes from JSON is what `JSONDecoder` decodes, in the cases where
/// Courier's own decoding path used to answer differently.
@Suite("JSON decoding agrees with JSONDecoder", .timeLimit(.minutes(5)))
struct JSONDecodingAgreementTests {
  /// `é` composed (U+00E9) and decomposed (`e` + U+0301): equal `String`s, different bytes.
  static let composed = "caf\u{E9}"
  static let decomposed = "cafe\u{301}"

  /// What `client.send(Endpoint<Value>)` returns for `json` over a stub.
  static func send<Value: Decodable & Sendable>(
    _ type: Value.Type, _ json: String, decoder: JSONDecoder = JSONDecoder()
  ) async throws -> Value {
    let client = Client(
      baseURL: testBase, transport: StubTransport([.json(json)]), decoder: decoder)
    return try await client.send(Endpoint<Value>(.get, "value"))
  }

  /// What plain `JSONDecoder` decodes from `json`.
  static func foundation<Value: Decodable>(_ type: Value.Type, _ json: String) throws -> Value {
    try JSONDecoder().decode(type, from: Data(json.utf8))
  }

  struct Cafe: Decodable, Equatable, Sendable {
    let café: String?
  }

  struct Order: Decodable, Equatable, Sendable {
    let café: Int
  }

  /// A model whose key is written decomposed in the source.
  struct DecomposedKey: Decodable, Equatable, Sendable {
    let drink: String?
    enum CodingKeys: String, CodingKey { case drink = "cafe\u{301}" }
  }

  @Test("a key is found whether the body composes or decomposes its accents")
  func normalisedKeys() async throws {
    for json in [
      "{\"\(Self.decomposed)\":\"latte\"}",
      #"{"cafe\u0301":"latte"}"#,
      "{\"\(Self.composed)\":\"latte\"}",
    ] {
      #expect(try Self.foundation(Cafe.self, json) == Cafe(café: "latte"))
      #expect(try await Self.send(Cafe.self, json) == Cafe(café: "latte"), "\(json)")
      #expect(try await Self.send(DecomposedKey.self, json) == DecomposedKey(drink: "latte"))
    }
    // U+212A KELVIN SIGN is canonically equivalent to the letter K.
    struct Kelvin: Decodable, Equatable, Sendable {
      let key: Int?
      enum CodingKeys: String, CodingKey { case key = "Key" }
    }
    let kelvin = "{\"\u{212A}ey\":7}"
    #expect(try Self.foundation(Kelvin.self, kelvin) == Kelvin(key: 7))
    #expect(try await Self.send(Kelvin.self, kelvin) == Kelvin(key: 7))
    // Combining marks of different classes in either order are the same text.
    struct Marks: Decodable, Equatable, Sendable {
      let value: Int?
      enum CodingKeys: String, CodingKey { case value = "e\u{323}\u{302}" }
    }
    let marks = "{\"e\u{302}\u{323}\":3}"
    #expect(try Self.foundation(Marks.self, marks) == Marks(value: 3))
    #expect(try await Self.send(Marks.self, marks) == Marks(value: 3))
  }

  @Test(
    "keys equal only after normalisation pick JSONDecoder's winner, in a struct and a dictionary")
  func normalisedDuplicates() async throws {
    for (first, second) in [
      (Self.decomposed, Self.composed), (Self.composed, Self.decomposed),
    ] {
      let json = "{\"\(first)\":1,\"\(second)\":2}"
      let expected = try Self.foundation(Order.self, json)
      #expect(try await Self.send(Order.self, json) == expected, "\(json.unicodeScalars)")
      let dictionary = try Self.foundation([String: Int].self, json)
      #expect(try await Self.send([String: Int].self, json) == dictionary)
      #expect(dictionary.count == 1)
    }
  }

  struct Wide: Decodable, Equatable, Sendable {
    let v: Int128?
    let u: UInt128?
    init(_ v: Int128?, _ u: UInt128?) {
      self.v = v
      self.u = u
    }
    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      v = try? container.decode(Int128.self, forKey: .v)
      u = try? container.decode(UInt128.self, forKey: .u)
    }
    enum CodingKeys: String, CodingKey { case v, u }
  }

  /// An `Int128` read through a single-value container and an unkeyed one.
  struct WideElements: Decodable, Equatable, Sendable {
    let single: Int128
    let elements: [UInt128]
    init(from decoder: any Decoder) throws {
      var container = try decoder.unkeyedContainer()
      single = try container.decode(Int128.self)
      var elements: [UInt128] = []
      while !container.isAtEnd { elements.append(try container.decode(UInt128.self)) }
      self.elements = elements
    }
  }

  @Test("Int128 and UInt128 decode as JSONDecoder decodes them, in every kind of container")
  func wideIntegers() async throws {
    let json =
      #"{"v":170141183460469231731687303715884105727,"u":340282366920938463463374607431768211455}"#
    let wide = try await Self.send(Wide.self, json)
    #expect(wide == Wide(Int128.max, UInt128.max))
    #expect(wide == (try Self.foundation(Wide.self, json)))
    let negative = #"{"v":-170141183460469231731687303715884105728,"u":18446744073709551616}"#
    #expect(
      try await Self.send(Wide.self, negative) == Wide(Int128.min, UInt128(1) << 64))
    let array = "[-9223372036854775809, 0, 18446744073709551615, 1e2]"
    let elements = try await Self.send(WideElements.self, array)
    #expect(elements == (try Self.foundation(WideElements.self, array)))
    #expect(elements.single == Int128(Int64.min) - 1)
    #expect(elements.elements == [0, UInt128(UInt64.max), 100])
    #expect(try await Self.send([Int128].self, "[1e2, -0]") == [100, 0])
  }

  @Test(
    "an Int128 or UInt128 its type cannot hold fails as JSONDecoder fails",
    arguments: [
      "170141183460469231731687303715884105728", "-170141183460469231731687303715884105729",
      "340282366920938463463374607431768211456", "1.5", "1e40", "\"1\"", "null",
      "99999999999999999999999999999999999999999",
    ])
  func wideIntegerErrors(literal: String) async throws {
    let json = #"{"v":\#(literal),"u":\#(literal)}"#
    let wide = try await Self.send(Wide.self, json)
    #expect(wide == (try Self.foundation(Wide.self, json)))
    struct Strict: Decodable, Sendable { let v: Int128 }
    #expect(throws: (any Error).self) { try Self.foundation(Strict.self, json) }
    let error = await courierError { try await Self.send(Strict.self, json) }
    #expect(error?.kind == .decoding)
    #expect(error?.underlying is DecodingError)
  }

  /// A decoder that unwraps the `result` member of every body. `@unchecked Sendable` restates
  /// `JSONDecoder`'s own conformance, as the compiler requires of a subclass; it adds no
  /// stored state.
  final class ResultDecoder: JSONDecoder, @unchecked Sendable {
    private struct Envelope<Value: Decodable>: Decodable { let result: Value }
    override func decode<Value: Decodable>(
      _ type: Value.Type, from data: Data
    ) throws -> Value {
      try super.decode(Envelope<Value>.self, from: data).result
    }
  }

  struct Profile: Decodable, Equatable, Sendable {
    let id: Int?
    let name: String?
  }

  @Test("a JSONDecoder subclass set as the client's decoder decodes every body")
  func decoderSubclass() async throws {
    let json = #"{"result":{"id":2,"name":"inner"},"id":1}"#
    #expect(try ResultDecoder().decode(Profile.self, from: Data(json.utf8)).id == 2)
    #expect(
      try await Self.send(Profile.self, json, decoder: ResultDecoder())
        == Profile(id: 2, name: "inner"))
    #expect(
      try await Self.send([Int].self, #"{"result":[1,2]}"#, decoder: ResultDecoder()) == [1, 2])
  }
}
