import CourierTesting
import Foundation
import Testing

@testable import CourierCore

/// Generated documents × a set of `Codable` shapes: Courier's JSON decoding gives the value
/// `JSONDecoder` gives, or fails as it fails (same `DecodingError` case and coding path).
@Suite("Generated JSON documents decode as JSONDecoder decodes them", .timeLimit(.minutes(5)))
struct GeneratedJSONDifferentialTests {
  /// Documents per shape.
  static let documents = 1_500

  @Test("each shape over generated documents", arguments: DifferentialShape.all)
  func shape(_ shape: DifferentialShape) async {
    // Seconds of computing with no suspension point: on the compute thread, so the global
    // executor's few threads stay free for the tests that wait.
    await withTaskExecutorPreference(ComputeExecutor.shared) {
      var generator = JSONDocumentGenerator(seed: 0xD1FF_0000 &+ shape.seed)
      var fastAnswers = 0
      var foundationValues = 0
      var disagreements = 0
      for _ in 0..<Self.documents {
        var bytes = Array(generator.document(shape.schema).utf8)
        // Now and then a byte-level edit, for text the writer never produces.
        if generator.chance(10) {
          bytes = mutant(
            of: bytes, insertions: FastJSONDecoderTests.insertions, maximumEdits: 2,
            using: &generator.random)
        }
        // An empty or blank body is Courier's `nil` for an optional and its own error
        // otherwise (ResponseDecoding.json's documented rule), not JSONDecoder's.
        if bytes.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) { continue }
        let comparison = shape.compare(Data(bytes))
        if comparison.fastPathAnswered { fastAnswers += 1 }
        if comparison.foundationDecoded { foundationValues += 1 }
        if let disagreement = comparison.disagreement {
          disagreements += 1
          Issue.record(
            "\(disagreement)\n  document: \(String(decoding: bytes, as: UTF8.self).debugDescription)"
          )
          if disagreements >= 5 { break }
        }
      }
      // The documents must fit the shape often enough for the comparison to mean something,
      // and the fast path must answer for the shapes it serves.
      #expect(foundationValues >= Self.documents / 20, "JSONDecoder decoded \(foundationValues)")
      #expect(foundationValues < Self.documents, "no document failed")
      if shape.servedByFastPath {
        #expect(fastAnswers >= Self.documents / 20, "the fast path answered \(fastAnswers)")
      }
    }
  }
}

/// A model type, the schema of the documents generated for it, and the comparison.
struct DifferentialShape: Sendable, CustomTestStringConvertible {
  let name: String
  let seed: UInt64
  let schema: Schema
  /// Whether Courier's own decoding path decodes this shape (else it is always left to
  /// `JSONDecoder`, as `Float` and `Decimal` are).
  let servedByFastPath: Bool
  let compare: @Sendable (Data) -> DecodingComparison

  var testDescription: String { name }

  init<Value: Decodable & Equatable & Sendable>(
    _ type: Value.Type, _ schema: Schema, seed: UInt64, servedByFastPath: Bool = true
  ) {
    name = "\(Value.self)"
    self.seed = seed
    self.schema = schema
    self.servedByFastPath = servedByFastPath
    compare = { compareWithJSONDecoder(Value.self, $0) }
  }

  typealias S = DifferentialShapes

  static let all: [DifferentialShape] = [
    DifferentialShape(S.Scalars.self, S.Scalars.schema, seed: 1),
    DifferentialShape(S.Optionals.self, S.Optionals.schema, seed: 2),
    DifferentialShape(S.Wide.self, S.Wide.schema, seed: 3),
    DifferentialShape(S.Floating.self, S.Floating.schema, seed: 4, servedByFastPath: false),
    DifferentialShape(S.Accented.self, S.Accented.schema, seed: 5),
    DifferentialShape(S.Collections.self, S.Collections.schema, seed: 6),
    DifferentialShape(S.Enums.self, S.Enums.schema, seed: 7),
    DifferentialShape(S.Custom.self, S.Custom.schema, seed: 8),
    DifferentialShape(S.Elements.self, S.Elements.schema, seed: 9),
    DifferentialShape(S.Child.self, S.Child.schema, seed: 10),
    // Every value but null and a Bool makes it catch an error: left to JSONDecoder.
    DifferentialShape(S.AnyJSON.self, .anything, seed: 11, servedByFastPath: false),
    DifferentialShape(S.Paths.self, S.Paths.schema, seed: 12),
    DifferentialShape([S.Scalars].self, .array(S.Scalars.schema), seed: 13),
    DifferentialShape(
      [String: Int128].self, .dictionary(.integer(.int128), keys: JSONDocumentGenerator.keys),
      seed: 14),
    DifferentialShape([UInt64?].self, .array(.optional(.integer(.uint64))), seed: 15),
    DifferentialShape(
      [Int: String].self,
      .dictionary(.string, keys: ["1", "01", "+1", "-0", "0", "2", " 3", "x", "1.0"]), seed: 16),
    DifferentialShape(S.Stamped.self, S.Stamped.schema, seed: 17),
  ]
}

/// The model types of ``GeneratedJSONDifferentialTests``.
enum DifferentialShapes {
  static func integers(_ kinds: [(String, IntegerKind)]) -> [(String, Schema)] {
    kinds.map { ($0.0, .integer($0.1)) }
  }

  /// Every leaf type, required.
  struct Scalars: Decodable, Equatable, Sendable {
    let b: Bool
    let s: String
    let d: Double
    let i: Int
    let i8: Int8
    let i16: Int16
    let i32: Int32
    let i64: Int64
    let u: UInt
    let u8: UInt8
    let u16: UInt16
    let u32: UInt32
    let u64: UInt64

    static let schema = Schema.fields(
      ("b", .bool), ("s", .string), ("d", .double), ("i", .integer(.int)), ("i8", .integer(.int8)),
      ("i16", .integer(.int16)), ("i32", .integer(.int32)), ("i64", .integer(.int64)),
      ("u", .integer(.uint)), ("u8", .integer(.uint8)), ("u16", .integer(.uint16)),
      ("u32", .integer(.uint32)), ("u64", .integer(.uint64)))
  }

  /// Optional members: missing, `null` and present are three different documents.
  struct Optionals: Decodable, Equatable, Sendable {
    let b: Bool?
    let s: String?
    let d: Double?
    let i8: Int8?
    let u64: UInt64?
    let i128: Int128?
    let u128: UInt128?
    let children: [Optionals]?

    static let schema = Schema.fields(
      ("b", .optional(.bool)), ("s", .optional(.string)), ("d", .optional(.double)),
      ("i8", .optional(.integer(.int8))), ("u64", .optional(.integer(.uint64))),
      ("i128", .optional(.integer(.int128))), ("u128", .optional(.integer(.uint128))),
      ("children", .optional(.array(.fields(("b", .bool), ("i8", .integer(.int8)))))))
  }

  /// 128-bit integers in every container.
  struct Wide: Decodable, Equatable, Sendable {
    let i: Int128
    let u: UInt128
    let list: [Int128]
    let maybe: [UInt128?]?
    let map: [String: Int128]?
    let tried: Int128?

    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      i = try container.decode(Int128.self, forKey: .i)
      u = try container.decode(UInt128.self, forKey: .u)
      list = try container.decode([Int128].self, forKey: .list)
      maybe = try container.decodeIfPresent([UInt128?].self, forKey: .maybe)
      map = try container.decodeIfPresent([String: Int128].self, forKey: .map)
      tried = try? container.decode(Int128.self, forKey: .tried)
    }

    enum CodingKeys: String, CodingKey { case i, u, list, maybe, map, tried }

    static let schema = Schema.fields(
      ("i", .integer(.int128)), ("u", .integer(.uint128)), ("list", .array(.integer(.int128))),
      ("maybe", .optional(.array(.optional(.integer(.uint128))))),
      ("map", .optional(.dictionary(.integer(.int128), keys: ["a", "b", "caf\u{E9}"]))),
      ("tried", .integer(.int128)))
  }

  /// Types the fast path leaves to `JSONDecoder`.
  struct Floating: Decodable, Equatable, Sendable {
    let f: Float
    let d: Double
    let m: Decimal?
    let fs: [Float]?

    static let schema = Schema.fields(
      ("f", .double), ("d", .double), ("m", .optional(.double)), ("fs", .optional(.array(.double))))
  }

  /// Keys with characters that have other spellings, one of them decomposed in the source.
  struct Accented: Decodable, Equatable, Sendable {
    let cafe: String?
    let kelvin: Int?
    let angstrom: Int
    let marks: Double?
    let ohm: String?
    let naive: Bool?
    let semicolon: Int8?
    let plain: Int?

    enum CodingKeys: String, CodingKey {
      case cafe = "caf\u{E9}"
      case kelvin = "Key"
      case angstrom = "\u{C5}"
      case marks = "e\u{302}\u{323}"
      case ohm = "\u{3A9}"
      case naive = "nai\u{308}ve"
      case semicolon = ";"
      case plain = "id"
    }

    static let schema = Schema.fields(
      ("caf\u{E9}", .optional(.string)), ("Key", .optional(.integer(.int))),
      ("\u{C5}", .integer(.int)), ("\u{1EC7}", .optional(.double)),
      ("\u{3A9}", .optional(.string)), ("na\u{EF}ve", .optional(.bool)),
      (";", .optional(.integer(.int8))), ("id", .optional(.integer(.int))))
  }

  /// Dictionaries, nested arrays, a set.
  struct Collections: Decodable, Equatable, Sendable {
    let map: [String: Int]
    let nested: [String: [String: Double?]]?
    let grid: [[Int?]]
    let byNumber: [Int: String]?
    let set: Set<String>?

    static let keys = ["a", "b", "caf\u{E9}", "cafe\u{301}", "K", "\u{212A}", "", "1", "01"]

    static let schema = Schema.fields(
      ("map", .dictionary(.integer(.int), keys: keys)),
      ("nested", .optional(.dictionary(.dictionary(.optional(.double), keys: keys), keys: keys))),
      ("grid", .array(.array(.optional(.integer(.int))))),
      ("byNumber", .optional(.dictionary(.string, keys: ["1", "01", "2", "-0", "0", "x"]))),
      ("set", .optional(.array(.string))))
  }

  enum Color: String, Decodable, Sendable { case red, green, cafe = "caf\u{E9}" }
  enum Level: Int, Decodable, Sendable { case low = 1, high = 2 }
  enum Huge: Int128, Decodable, Sendable {
    case largest = 170_141_183_460_469_231_731_687_303_715_884_105_727
    case minusOne = -1
  }
  /// An enum with associated values: one member naming the case, its values inside.
  enum Figure: Decodable, Equatable, Sendable {
    case circle(radius: Double)
    case square(side: UInt16, label: String?)
    case empty
  }

  struct Enums: Decodable, Equatable, Sendable {
    let color: Color
    let level: Level?
    let huge: Huge?
    let figure: Figure
    let figures: [Figure]?

    static let figure = Schema.choice([
      .fields(("circle", .fields(("radius", .double)))),
      .fields(("square", .fields(("side", .integer(.uint16)), ("label", .optional(.string))))),
      .fields(("empty", .fields())), .fields(("circle", .fields()), ("empty", .fields())),
    ])

    static let schema = Schema.fields(
      ("color", .literal([.string("red"), .string("green"), .string("cafe\u{301}")])),
      ("level", .optional(.literal([.number("1"), .number("2"), .number("3")]))),
      (
        "huge",
        .optional(.literal([.number("170141183460469231731687303715884105727"), .number("-1")]))
      ),
      ("figure", figure), ("figures", .optional(.array(figure))))
  }

  /// Every keyed-container call a hand-written `init(from:)` makes.
  struct Custom: Decodable, Equatable, Sendable {
    let id: Int128
    let hasName: Bool
    let nameIsNull: Bool?
    let number: String
    let innerA: UInt8
    let innerB: [String]?
    let list: [Int16?]
    let listCount: Int?
    let parent: String?
    let superValue: Int?
    let keyCount: Int

    enum CodingKeys: String, CodingKey { case id, name, number, inner, list, parent, `super` }
    enum InnerKeys: String, CodingKey { case a, b }

    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      id = try container.decodeIfPresent(Int128.self, forKey: .id) ?? -1
      hasName = container.contains(.name)
      nameIsNull = try? container.decodeNil(forKey: .name)
      if let integer = try? container.decode(Int.self, forKey: .number) {
        number = "int \(integer)"
      } else if let double = try? container.decode(Double.self, forKey: .number) {
        number = "double \(double)"
      } else if let string = try? container.decode(String.self, forKey: .number) {
        number = "string \(string)"
      } else {
        number = "none"
      }
      let inner = try container.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner)
      innerA = try inner.decode(UInt8.self, forKey: .a)
      innerB = try inner.decodeIfPresent([String].self, forKey: .b)
      var list = try container.nestedUnkeyedContainer(forKey: .list)
      listCount = list.count
      var values: [Int16?] = []
      while !list.isAtEnd {
        values.append(try list.decodeNil() ? nil : try list.decode(Int16.self))
      }
      self.list = values
      parent = try container.superDecoder(forKey: .parent).singleValueContainer().decode(
        String?.self)
      superValue = try? container.superDecoder().singleValueContainer().decode(Int.self)
      keyCount = container.allKeys.count
    }

    static let schema = Schema.fields(
      ("id", .optional(.integer(.int128))), ("name", .optional(.string)),
      ("number", .choice([.integer(.int), .double, .string, .bool])),
      ("inner", .fields(("a", .integer(.uint8)), ("b", .optional(.array(.string))))),
      ("list", .array(.optional(.integer(.int16)))), ("parent", .optional(.string)),
      ("super", .integer(.int)))
  }

  /// An array read element by element, with a nested keyed and unkeyed container and a
  /// super decoder inside it.
  struct Elements: Decodable, Equatable, Sendable {
    let first: Int8
    let second: String?
    let third: [Double]
    let fourth: Bool
    let fifth: UInt32?
    let rest: Int

    enum Keys: String, CodingKey { case flag }

    init(from decoder: any Decoder) throws {
      var container = try decoder.unkeyedContainer()
      first = try container.decode(Int8.self)
      second = try container.decodeIfPresent(String.self)
      var third = try container.nestedUnkeyedContainer()
      var doubles: [Double] = []
      while !third.isAtEnd { doubles.append(try third.decode(Double.self)) }
      self.third = doubles
      fourth = try container.nestedContainer(keyedBy: Keys.self).decode(Bool.self, forKey: .flag)
      fifth = try container.superDecoder().singleValueContainer().decode(UInt32?.self)
      var rest = 0
      while !container.isAtEnd {
        _ = try container.decode(GeneratedAny.self)
        rest += 1
      }
      self.rest = rest
    }

    static let schema = Schema.sequence([
      .integer(.int8), .optional(.string), .array(.double), .fields(("flag", .bool)),
      .optional(.integer(.uint32)),
    ])
  }

  /// Anything, skipped.
  struct GeneratedAny: Decodable {
    init(from decoder: any Decoder) throws {}
  }

  struct Parent: Decodable, Equatable, Sendable {
    let id: Int
    let tag: String?
  }

  /// A value decoded from its container's super decoder, as a subclass decodes its
  /// superclass.
  struct Child: Decodable, Equatable, Sendable {
    let name: String
    let extra: [UInt32]?
    let parent: Parent
    let keyed: Parent?

    enum CodingKeys: String, CodingKey { case name, extra, `super`, keyed }

    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      name = try container.decode(String.self, forKey: .name)
      extra = try container.decodeIfPresent([UInt32].self, forKey: .extra)
      parent = try Parent(from: container.superDecoder())
      keyed = try? Parent(from: container.superDecoder(forKey: .keyed))
    }

    static let parent = Schema.fields(("id", .integer(.int)), ("tag", .optional(.string)))

    static let schema = Schema.fields(
      ("name", .string), ("extra", .optional(.array(.integer(.uint32)))), ("super", parent),
      ("keyed", parent))
  }

  /// Any JSON value, read by trying one type after another with `try?`.
  indirect enum AnyJSON: Decodable, Equatable, Sendable {
    case null, bool(Bool), integer(Int128), number(Double), string(String)
    case array([AnyJSON]), object([String: AnyJSON])

    init(from decoder: any Decoder) throws {
      let container = try decoder.singleValueContainer()
      if container.decodeNil() {
        self = .null
      } else if let value = try? container.decode(Bool.self) {
        self = .bool(value)
      } else if let value = try? container.decode(Int128.self) {
        self = .integer(value)
      } else if let value = try? container.decode(Double.self) {
        self = .number(value)
      } else if let value = try? container.decode(String.self) {
        self = .string(value)
      } else if let value = try? container.decode([AnyJSON].self) {
        self = .array(value)
      } else {
        self = .object(try container.decode([String: AnyJSON].self))
      }
    }
  }

  /// A value that records the coding path it was decoded at.
  struct Path: Decodable, Equatable, Sendable {
    let path: [String]

    init(from decoder: any Decoder) throws {
      path = decoder.codingPath.map { "\($0.stringValue)|\($0.intValue.map(String.init) ?? "-")" }
    }
  }

  struct Paths: Decodable, Equatable, Sendable {
    let list: [Path]
    let map: [String: Path]
    let nested: [String: [Path]]?

    static let schema = Schema.fields(
      ("list", .array(.anything)), ("map", .dictionary(.anything, keys: ["a", "1", "-1", "01"])),
      ("nested", .optional(.dictionary(.array(.anything), keys: ["x", "2"]))))
  }

  /// Dates (seconds since 2001, by default) and URLs.
  struct Stamped: Decodable, Equatable, Sendable {
    let date: Date
    let link: URL?
    let dates: [Date]?

    static let schema = Schema.fields(
      ("date", .double), ("link", .optional(.url)), ("dates", .optional(.array(.double))))
  }
}
