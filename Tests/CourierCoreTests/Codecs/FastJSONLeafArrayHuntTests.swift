import Foundation
import Testing

@testable import CourierCore

/// The direct paths for `[String]`, `[Int]`, `[Double]` and `[Bool]` (and `Int` without generic
/// dispatch) answer exactly as `JSONDecoder` answers, or leave the document to it.
@Suite("FastJSON arrays of leaves agree with JSONDecoder", .timeLimit(.minutes(5)))
struct FastJSONLeafArrayHuntTests {
  /// What one document gave on each path.
  struct Outcome {
    /// A disagreement, described; `nil` when the two agree (or the fast path left it).
    var disagreement: String?
    var fastAnswered: Bool
  }

  /// Compares the fast path with `JSONDecoder` on `data`. `exact` also compares the values'
  /// descriptions, which tells `-0.0` from `0.0` (not for sets and dictionaries, whose
  /// descriptions follow their hash order).
  static func compare<Value: Decodable & Equatable>(
    _ type: Value.Type, _ data: Data, exact: Bool = true
  ) -> Outcome {
    let foundation = try? JSONDecoder().decode(Value.self, from: data)
    guard let fast = FastJSONDecoder.decode(Value.self, from: data, like: JSONDecoder()) else {
      return Outcome(disagreement: nil, fastAnswered: false)
    }
    let document = String(decoding: data, as: UTF8.self)
    guard let foundation else {
      return Outcome(
        disagreement: "\(Value.self) \(document): fast \(fast), JSONDecoder threw",
        fastAnswered: true)
    }
    let same =
      fast == foundation
      && (!exact || String(reflecting: fast) == String(reflecting: foundation))
    return Outcome(
      disagreement: same
        ? nil : "\(Value.self) \(document): fast \(fast), JSONDecoder \(foundation)",
      fastAnswered: true)
  }

  static func compare<Value: Decodable & Equatable>(
    _ type: Value.Type, _ json: String, exact: Bool = true
  ) -> Outcome {
    compare(type, Data(json.utf8), exact: exact)
  }

  static let numbers = [
    "0", "-0", "1", "-1", "1.0", "1e2", "1E2", "-1e2", "0.5", "1e400", "1e-400", "5e-324",
    "2.2250738585072014e-308", "2.225073858507201e-308", "9223372036854775807",
    "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
    "99999999999999999999", "123456789012345678901234567890", "1.7976931348623157e308",
    "1.7976931348623159e308", "0e0", "0e1", "0.0", "-0.0", "0e10", "1e-5", "-1.5e+3",
    "18446744073709551615", "18446744073709551616", "0.1",
    "170141183460469231731687303715884105727", "-170141183460469231731687303715884105729",
  ]

  static let strings = [
    #""a""#, #""""#, #""\u00e9""#, #""\ud83d\ude00""#, #""\u0000""#, #""\/""#, #""e\u0301""#,
    "\"é\"", #""a\"b""#, #""\ud800""#, #""\udc00\ud800""#, #""\uFEFF""#, "\"\u{FEFF}x\"",
  ]

  static let others = ["true", "false", "null", "[]", "{}", "[1]", #"["a"]"#, #"{"a":1}"#]

  struct Holder<Value: Decodable & Equatable>: Decodable, Equatable { let v: Value }
  struct OptionalHolder<Value: Decodable & Equatable>: Decodable, Equatable { let v: Value? }

  @Test("every leaf literal, in every array shape and type near the four, as JSONDecoder reads it")
  func literals() {
    var disagreements: [String] = []
    var answered = 0
    for element in Self.numbers + Self.strings + Self.others {
      for array in [
        "[\(element)]", "[1, \(element)]", #"["a", \#(element)]"#, "[true,\(element)]",
        "[[\(element)]]", " [ \(element) , \(element) ] ",
      ] {
        let keyed = #"{"v": \#(array)}"#
        let outcomes = [
          Self.compare([String].self, array), Self.compare([Int].self, array),
          Self.compare([Double].self, array), Self.compare([Bool].self, array),
          Self.compare([[Int]].self, array), Self.compare([[String]].self, array),
          Self.compare([[Double]].self, array), Self.compare([Int?].self, array),
          Self.compare([String?].self, array), Self.compare([Int64].self, array),
          Self.compare([UInt].self, array), Self.compare(ContiguousArray<Int>.self, array),
          Self.compare(Set<String>.self, array, exact: false),
          Self.compare(Holder<[String]>.self, keyed), Self.compare(Holder<[Int]>.self, keyed),
          Self.compare(Holder<[Double]>.self, keyed), Self.compare(Holder<[Bool]>.self, keyed),
          Self.compare(OptionalHolder<[Int]>.self, keyed),
          Self.compare(OptionalHolder<[Double]>.self, keyed),
          Self.compare(Holder<Int>.self, #"{"v": \#(element)}"#),
          Self.compare(OptionalHolder<Int>.self, #"{"v": \#(element)}"#),
        ]
        disagreements += outcomes.compactMap(\.disagreement)
        answered += outcomes.filter(\.fastAnswered).count
      }
    }
    #expect(disagreements.isEmpty, "\(disagreements.joined(separator: "\n"))")
    // The comparison means something only if the fast path answered often.
    #expect(answered > 500, "the fast path answered \(answered) times")
  }

  @Test("top-level leaf arrays: plain ones answered, values and signs as JSONDecoder's")
  func topLevel() throws {
    let doubles = try #require(
      FastJSONDecoder.decode(
        [Double].self, from: Data("[-0, 0, -0.5, 1e2, 3]".utf8), like: JSONDecoder()))
    #expect(doubles.map(\.bitPattern) == [-0.0, 0, -0.5, 100, 3].map(\.bitPattern))
    let ints = try #require(
      FastJSONDecoder.decode(
        [Int].self, from: Data("[-0, -9223372036854775808, 9223372036854775807]".utf8),
        like: JSONDecoder()))
    #expect(ints == [0, Int.min, Int.max])
    #expect(Self.compare([Bool].self, "[false, true]").fastAnswered)
    #expect(Self.compare([String].self, #"["a\n", "\u00e9"]"#).fastAnswered)
    for document in ["[]", "[ ]", "\n[\t]\r\n"] {
      for outcome in [
        Self.compare([String].self, document), Self.compare([Int].self, document),
        Self.compare([Double].self, document), Self.compare([Bool].self, document),
      ] {
        #expect(outcome.fastAnswered && outcome.disagreement == nil, "\(document)")
      }
    }
    // Not an array, or invalid UTF-8 in an element: JSONDecoder decides.
    let invalid: [[UInt8]] = [
      [0x5B, 0x22, 0xC3, 0x22, 0x5D], [0x5B, 0x22, 0xC0, 0xAF, 0x22, 0x5D],
      [0x5B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x5D], [0x5B, 0x22, 0xF4, 0x90, 0x80, 0x80, 0x22, 0x5D],
    ]
    for bytes in invalid {
      #expect(FastJSONDecoder.decode([String].self, from: Data(bytes), like: JSONDecoder()) == nil)
    }
    #expect(FastJSONDecoder.decode([Int].self, from: Data(#"{"0":1}"#.utf8), like: .init()) == nil)
    #expect(FastJSONDecoder.decode([String].self, from: Data(#"{}"#.utf8), like: .init()) == nil)
  }

  struct Tolerant: Decodable, Equatable {
    let tags: [String]
    let ids: [Int]
    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      tags = (try? container.decode([String].self, forKey: .tags)) ?? ["fallback"]
      if let ids = try? container.decodeIfPresent([Int].self, forKey: .ids) {
        self.ids = ids
      } else {
        self.ids = try container.decode([Double].self, forKey: .ids).map { Int($0) }
      }
    }
    enum CodingKeys: CodingKey { case tags, ids }
  }

  class Base: Decodable {
    let tags: [String]
    enum CodingKeys: CodingKey { case tags }
    required init(from decoder: any Decoder) throws {
      tags = try decoder.container(keyedBy: CodingKeys.self).decode([String].self, forKey: .tags)
    }
  }

  final class Derived: Base, Equatable {
    let flags: [Bool]
    // `super` among the keys, so that `superDecoder()` finds its member on the fast path.
    enum Keys: String, CodingKey { case flags, base = "super" }
    required init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: Keys.self)
      flags = try container.decode([Bool].self, forKey: .flags)
      try super.init(from: try container.superDecoder())
    }
    static func == (left: Derived, right: Derived) -> Bool {
      left.tags == right.tags && left.flags == right.flags
    }
  }

  struct Single: Decodable, Equatable {
    let values: [Double]
    init(from decoder: any Decoder) throws {
      values = try decoder.singleValueContainer().decode([Double].self)
    }
  }

  struct Unkeyed: Decodable, Equatable {
    let a: [Int]
    let b: [String]
    init(from decoder: any Decoder) throws {
      var container = try decoder.unkeyedContainer()
      a = try container.decode([Int].self)
      b = try container.decode([String].self)
    }
  }

  enum Shape: Decodable, Equatable { case poly(points: [Double], names: [String]?), none }

  @Test("leaf arrays read through try?, superDecoder, single-value, unkeyed and enum containers")
  func throughContainers() {
    var outcomes: [Outcome] = []
    for json in [
      #"{"tags":["a"],"ids":[1,2]}"#, #"{"tags":[1],"ids":[1,2]}"#, #"{"tags":["a"],"ids":[1.0]}"#,
      #"{"tags":["a"],"ids":[1.5]}"#, #"{"tags":["a"],"ids":null}"#, #"{"tags":["a"]}"#,
      #"{"tags":null,"ids":[]}"#, #"{"tags":["a"],"ids":[1],"ids":[2]}"#,
      #"{"tags":["a",null],"ids":[1]}"#,
    ] {
      outcomes.append(Self.compare(Tolerant.self, json))
    }
    for json in [
      #"{"flags":[true],"super":{"tags":["x"]}}"#, #"{"flags":[true],"super":{"tags":[1]}}"#,
      #"{"flags":[1],"super":{"tags":["x"]}}"#, #"{"flags":[],"super":{"tags":[]}}"#,
      #"{"flags":[true],"super":["x"]}"#,
    ] {
      outcomes.append(Self.compare(Derived.self, json))
    }
    for json in [#"[1, -0, 2e0]"#, #"[]"#, #"{}"#, #"[[1]]"#, #"[0e1]"#] {
      outcomes += [Self.compare(Single.self, json), Self.compare([Single].self, "[\(json)]")]
    }
    for json in [#"[[1],["a"]]"#, #"[[],[]]"#, #"[[1]]"#, #"[[1],["a"],3]"#, #"[["a"],[1]]"#] {
      outcomes.append(Self.compare(Unkeyed.self, json))
    }
    for json in [
      #"{"poly":{"points":[1,2.5],"names":["a"]}}"#, #"{"poly":{"points":[1,2.5]}}"#,
      #"{"poly":{"points":[1,2.5],"names":null}}"#, #"{"none":{}}"#, #"{"poly":{"points":["1"]}}"#,
    ] {
      outcomes.append(Self.compare(Shape.self, json))
    }
    for json in [#"{"a":[1,2],"b":[]}"#, #"{"a":[1,"2"]}"#, #"{"1":[1],"01":[2]}"#] {
      outcomes += [
        Self.compare([String: [Int]].self, json, exact: false),
        Self.compare([Int: [Int]].self, json, exact: false),
      ]
    }
    let disagreements = outcomes.compactMap(\.disagreement)
    #expect(disagreements.isEmpty, "\(disagreements.joined(separator: "\n"))")
    // A recovered error leaves the document to JSONDecoder; a clean one is answered.
    #expect(!Self.compare(Tolerant.self, #"{"tags":[1],"ids":[1,2]}"#).fastAnswered)
    #expect(!Self.compare(Tolerant.self, #"{"tags":["a"],"ids":[1.0]}"#).fastAnswered)
    #expect(Self.compare(Tolerant.self, #"{"tags":["a"],"ids":[1,2]}"#).fastAnswered)
    #expect(Self.compare(Derived.self, #"{"flags":[true],"super":{"tags":["x"]}}"#).fastAnswered)
    #expect(Self.compare(Unkeyed.self, #"[[1],["a"]]"#).fastAnswered)
  }

  @Test("a number in a nested leaf array is named by its full path")
  func numberProblems() {
    struct Page: Decodable {
      let a: [[Int]]
      let d: [Double]?
    }
    let cases: [(String, String?)] = [
      (#"{"a":[[1],[2,1.5]]}"#, #"1.5 at "a.1.1" is not a whole number, which Int needs"#),
      (#"{"a":[[1]],"d":[1,2,1e400]}"#, #"1e400 at "d.2" is out of Double's range"#),
      (#"{"a":[[99999999999999999999]]}"#, #"99999999999999999999 at "a.0.0" does not fit in Int"#),
      (
        #"{"a":[[-9223372036854775809]]}"#,
        #"-9223372036854775809 at "a.0.0" does not fit in Int"#
      ),
      (#"{"a":[[1]],"d":[1]}"#, nil),
    ]
    for (json, expected) in cases {
      #expect(
        FastJSONDecoder.numberProblem(Page.self, from: Data(json.utf8), like: JSONDecoder())
          == expected, "\(json)")
    }
    #expect(
      FastJSONDecoder.numberProblem([[Bool]].self, from: Data("[[true],[1]]".utf8), like: .init())
        == nil)
  }

  @Test("a long array decodes whole and in order, as JSONDecoder decodes it")
  func longArrays() throws {
    let count = 30_000
    let ints =
      "[" + (0..<count).map { String($0 &* 7919 &- 1_000_000) }.joined(separator: ",") + "]"
    let strings = "[" + (0..<count).map { "\"s\\u00e9\($0)\"" }.joined(separator: " ,\n ") + "]"
    for outcome in [Self.compare([Int].self, ints), Self.compare([String].self, strings)] {
      #expect(outcome.fastAnswered)
      #expect(outcome.disagreement == nil)
    }
    let decoded = try #require(
      FastJSONDecoder.decode([String].self, from: Data(strings.utf8), like: JSONDecoder()))
    #expect(decoded.count == count)
    #expect(decoded.last == "sé\(count - 1)")
  }
}
