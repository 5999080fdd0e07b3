import CourierTesting
import Foundation
import Testing

@testable import CourierCore

/// Courier's fast JSON decoding path agrees with `JSONDecoder` wherever it answers, and
/// leaves everything it is not sure of to `JSONDecoder`.
@Suite("Fast JSON decoding path", .timeLimit(.minutes(5)))
struct FastJSONDecoderTests {
  struct Owner: Codable, Equatable {
    let id: Int
    let login: String
    let verified: Bool
  }

  struct Item: Codable, Equatable {
    let id: Int
    let name: String
    let price: Double
    let tags: [String]
    let owner: Owner
    let note: String?
  }

  enum Color: String, Codable, Equatable { case red, green }
  enum Level: Int, Codable, Equatable { case low = 1, high = 2 }

  struct Everything: Codable, Equatable {
    var int8: Int8
    var int16: Int16
    var int32: Int32
    var int64: Int64
    var uint: UInt
    var uint8: UInt8
    var uint16: UInt16
    var uint32: UInt32
    var uint64: UInt64
    var doubles: [Double]
    var color: Color
    var level: Level
    var date: Date
    var url: URL
    var map: [String: [Int]]
    var nested: [[Owner?]]
    var optional: Int?
    var missing: String?
  }

  static let decoder = JSONDecoder()

  /// What `JSONDecoder` decodes, or `nil` when it throws.
  static func foundation<Value: Decodable>(_ type: Value.Type, _ json: String) -> Value? {
    try? JSONDecoder().decode(type, from: Data(json.utf8))
  }

  static func fast<Value: Decodable>(_ type: Value.Type, _ json: String) -> Value? {
    FastJSONDecoder.decode(type, from: Data(json.utf8), like: decoder)
  }

  static let itemJSON = #"""
    {"id":1024,"name":"Courier test item","price":129.5,
     "tags":["network","swift"],"owner":{"id":77,"login":"courier","verified":true},
     "description":"unused", "note" : null}
    """#

  @Test("the usual shapes decode on the fast path, equal to JSONDecoder's")
  func usualShapes() throws {
    let item = try #require(Self.fast(Item.self, Self.itemJSON))
    #expect(item == Self.foundation(Item.self, Self.itemJSON))
    #expect(item.note == nil)
    let everything = #"""
      { "int8": -128, "int16": 32767, "int32": -2147483648, "int64": 9223372036854775807,
        "uint": 0, "uint8": 255, "uint16": 65535, "uint32": 4294967295,
        "uint64": 9999999999999999999,
        "doubles": [0, -0, 0.1, 1e5, 1E-5, -2.5e+3, 123456789012345678901234567890, 1.7976931348623157e308],
        "color": "green", "level": 2, "date": 700000000.25, "url": "https://example.com/a?b=c",
        "map": {"a": [1, 2], "": [], "é\u00e9": [3]},
        "nested": [[{"id": 1, "login": "a\"b\\c\/d\b\f\n\r\t\u0000", "verified": false}, null], []],
        "optional": 5 }
      """#
    let fast = try #require(Self.fast(Everything.self, everything))
    let foundation = try #require(Self.foundation(Everything.self, everything))
    #expect(fast == foundation)
    #expect(fast.doubles[1].sign == .minus)
    #expect(fast.map["éé"] == [3])
    #expect(fast.missing == nil)
  }

  @Test("strings: raw UTF-8, escapes and surrogate pairs read as JSONDecoder reads them")
  func strings() throws {
    let json = #"["héllo wörld ✓ 😀", "\ud83d\ude00", "\u4e2d\u6587", "tab\there", "", "\/"]"#
    let fast = try #require(Self.fast([String].self, json))
    #expect(fast == Self.foundation([String].self, json))
    #expect(fast[1] == "😀")
    // Escaped keys are found by what they mean.
    let keyed = #"{"id":1,"log\u0069n":"x","verified":true}"#
    #expect(try #require(Self.fast(Owner.self, keyed)).login == "x")
  }

  @Test(
    "whatever the fast path is unsure of is left to JSONDecoder",
    arguments: [
      ("Float", #"{"value": 1.5}"#),
      ("Decimal", #"{"value": 1.5}"#),
      ("Data", #"{"value": "AAE="}"#),
      ("Int from 1.0", #"{"value": 1.0}"#),
      ("Int from 1e2", #"{"value": 1e2}"#),
      ("Int too large", #"{"value": 99999999999999999999}"#),
      ("duplicate key", #"{"value": 1, "value": 2}"#),
      ("Double beyond range", #"{"value": 1e400}"#),
      ("Double underflow", #"{"value": 1e-400}"#),
      ("negative zero with fraction and exponent", #"{"value": -0.0e+3}"#),
      ("bare zero with a one-digit exponent", #"{"value": 0e9}"#),
      ("UInt from -0", #"{"value": -0}"#),
      ("lone surrogate", #"{"value": 1, "x": "\ud800"}"#),
      ("top-level scalar", #"1"#),
      ("byte order mark", "\u{FEFF}{\"value\": 1}"),
      ("trailing comma", #"{"value": 1,}"#),
      ("type mismatch", #"{"value": "1"}"#),
      ("missing key", #"{"other": 1}"#),
    ])
  func leftToFoundation(name: String, json: String) {
    struct Holder<Value: Decodable>: Decodable { let value: Value }
    let fast: Any? =
      switch name {
      case "Float": Self.fast(Holder<Float>.self, json)
      case "Decimal": Self.fast(Holder<Decimal>.self, json)
      case "Data": Self.fast(Holder<Data>.self, json)
      case "Double beyond range", "Double underflow", "negative zero with fraction and exponent",
        "bare zero with a one-digit exponent":
        Self.fast(Holder<Double>.self, json)
      case "UInt from -0": Self.fast(Holder<UInt>.self, json)
      default: Self.fast(Holder<Int>.self, json)
      }
    #expect(fast == nil, "\(name) was decoded on the fast path")
  }

  @Test(
    "zeros with exponents: the fast path answers as JSONDecoder does",
    arguments: [
      "0e0", "0e1", "0e9", "0E5", "0e10", "0e01", "0e+1", "0E+9", "0e-1", "-0e1", "0.0e1",
      "0.00E72", "0.00e7", "-0.0e3", "0.000", "-0.0",
    ])
  func zerosWithExponents(number: String) {
    struct Holder: Decodable, Equatable { let value: Double }
    let json = Data(#"{"value": \#(number)}"#.utf8)
    let foundation = try? JSONDecoder().decode(Holder.self, from: json)
    let fast = Self.fast(Holder.self, #"{"value": \#(number)}"#)
    // Where JSONDecoder refuses, the fast path leaves the number to it; where the fast path
    // answers, it answers as JSONDecoder, sign of zero included.
    if foundation == nil {
      #expect(fast == nil, "\(number) was decoded on the fast path")
    } else if let fast {
      #expect(
        fast == foundation, "\(number): fast \(fast), JSONDecoder \(String(describing: foundation))"
      )
      #expect(fast.value.sign == foundation?.value.sign)
    }
  }

  @Test("a model that asks for Float is remembered and goes straight to JSONDecoder")
  func rememberedModel() throws {
    struct Reading: Decodable, Equatable {
      let id: Int
      let level: Float
    }
    let json = #"{"id": 3, "level": 0.5}"#
    let model = ObjectIdentifier(Reading.self)
    #expect(!FastJSONDecoder.modelsLeftToFoundation.withLock { $0.contains(model) })
    #expect(Self.fast(Reading.self, json) == nil)
    #expect(FastJSONDecoder.modelsLeftToFoundation.withLock { $0.contains(model) })
    #expect(Self.fast(Reading.self, json) == nil)
    // The pipeline still decodes it, with JSONDecoder.
    let context = ResponseContext(
      response: Response(
        status: 200, body: Data(json.utf8), request: Request(url: URL(string: "https://a.test/")!)))
    let value = try ResponseDecoding<Reading>.json().decode(context, JSONDecoder())
    #expect(value == Reading(id: 3, level: 0.5))
    // A model whose members the fast path reads is not remembered.
    #expect(Self.fast(Owner.self, #"{"id":1,"login":"a","verified":true}"#) != nil)
    #expect(
      !FastJSONDecoder.modelsLeftToFoundation.withLock { $0.contains(ObjectIdentifier(Owner.self)) }
    )
  }

  @Test("a key more than once, at any depth, is left to JSONDecoder (which keeps the first)")
  func duplicateKeys() throws {
    let json = #"{"id":1,"login":"a","verified":true,"login":"b"}"#
    #expect(Self.fast(Owner.self, json) == nil)
    #expect(Self.foundation(Owner.self, json)?.login == "a")
  }

  @Test("keys that name the same Int are left to JSONDecoder, whose dictionary order picks one")
  func sameIntegerKeys() {
    // JSONDecoder visits members in its dictionary's order, which differs between calls:
    // [Int: String] over these keeps "a" or "b". Document order would always keep "b".
    for json in [#"{"1":"a","01":"b"}"#, #"{"-0":"a","0":"b","2":"c"}"#] {
      #expect(Self.fast([Int: String].self, json) == nil, "\(json)")
    }
    #expect(
      Self.fast([Int: String].self, #"{"1":"a","2":"b","-3":"c"}"#) == [1: "a", 2: "b", -3: "c"])
  }

  @Test(
    "decoding every member of a large object costs about what JSONDecoder pays",
    .timeLimit(.minutes(5)), arguments: [("k", 20_000), ("clé", 10_000)])
  func largeObject(prefix: String, count: Int) async throws {
    // Keys whose hashes all differ, so that the fast path answers (checked last): an object
    // with two equal hashes goes to JSONDecoder whole.
    let json = "{" + (0..<count).map { "\"\(prefix)\($0)\":\($0)" }.joined(separator: ",") + "}"
    let client = Client(baseURL: testBase, transport: StubTransport(fallback: .json(json)))
    let clock = ContinuousClock()
    var sent: [String: Int] = [:]
    let courier = try await clock.measure {
      sent = try await client.send(Endpoint<[String: Int]>(.get, "members"))
    }
    var decoded: [String: Int] = [:]
    let foundation = try clock.measure {
      decoded = try JSONDecoder().decode([String: Int].self, from: Data(json.utf8))
    }
    #expect(sent == decoded)
    // Scanning the object for every member takes minutes here; a lookup per member takes a small
    // multiple of JSONDecoder's time even in a debug build.
    #expect(
      courier < foundation * 10 + .seconds(1), "Courier \(courier), JSONDecoder \(foundation)")
    #expect(Self.fast([String: Int].self, json)?.count == count)
  }

  @Test("a type that recovers from an error with try? is decoded by JSONDecoder")
  func recoveringType() throws {
    struct Loose: Decodable, Equatable {
      let value: String
      init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let number = try? container.decode(Int.self, forKey: .value) {
          value = "int \(number)"
        } else {
          value = "double \(try container.decode(Double.self, forKey: .value))"
        }
      }
      enum CodingKeys: String, CodingKey { case value }
    }
    // JSONDecoder reads 1.0 as the Int 1; a fast path that gave up on Int would have said
    // "double 1.0".
    let json = #"{"value": 1.0}"#
    #expect(Self.fast(Loose.self, json) == nil)
    #expect(Self.foundation(Loose.self, json)?.value == "int 1")
    #expect(Self.fast(Loose.self, #"{"value": 7}"#)?.value == "int 7")
  }

  @Test("a decoder with any setting changed is left alone")
  func settings() {
    let data = Data(Self.itemJSON.utf8)
    let snake = JSONDecoder()
    snake.keyDecodingStrategy = .convertFromSnakeCase
    let dates = JSONDecoder()
    dates.dateDecodingStrategy = .secondsSince1970
    let info = JSONDecoder()
    info.userInfo[CodingUserInfoKey(rawValue: "k")!] = 1
    let only = JSONDecoder()
    only.userInfo[.courierJSONDecoderOnly] = true
    for decoder in [snake, dates, info, only] {
      #expect(FastJSONDecoder.decode(Item.self, from: data, like: decoder) == nil)
    }
    #expect(FastJSONDecoder.decode(Item.self, from: data, like: JSONDecoder()) != nil)
  }

  @Test("nesting deeper than the fast path's limit is left to JSONDecoder")
  func depth() {
    struct Nest: Decodable { let next: [Nest] }
    let deep = String(repeating: "[", count: 300) + String(repeating: "]", count: 300)
    #expect(FastJSONDocument(Data(deep.utf8)) == nil)
    let shallow = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
    #expect(FastJSONDocument(Data(shallow.utf8)) != nil)
  }

  @Test(
    "a number its type cannot hold is named with its path, where JSONDecoder says the JSON is not valid",
    arguments: [
      (
        #"{"id":1.5,"login":"a","verified":true}"#,
        #"1.5 at "id" is not a whole number, which Int needs"#
      ),
      (
        #"{"id":123456789012345678901234567890,"login":"a","verified":true}"#,
        #"123456789012345678901234567890 at "id" does not fit in Int"#
      ),
    ])
  func numberProblem(json: String, expected: String) async throws {
    #expect(Self.foundation(Owner.self, json) == nil, "JSONDecoder refuses it")
    #expect(
      FastJSONDecoder.numberProblem(Owner.self, from: Data(json.utf8), like: Self.decoder)
        == expected)
    let client = Client(
      baseURL: URL(string: "https://api.example.test/"), transport: StubTransport([.json(json)]))
    let error = await courierError { try await client.send(Endpoint<Owner>(.get, "owner")) }
    #expect(error?.kind == .decoding)
    #expect(error?.debugDescription.contains("the JSON is valid, but \(expected)") == true)
  }

  @Test("a nested number's path counts array indices; a number that converts notes nothing")
  func nestedNumberProblem() {
    struct Page: Decodable { let items: [UInt8] }
    let json = Data(#"{"items":[1,2,300]}"#.utf8)
    #expect(
      FastJSONDecoder.numberProblem(Page.self, from: json, like: Self.decoder)
        == #"300 at "items.2" does not fit in UInt8"#)
    #expect(
      FastJSONDecoder.numberProblem(
        Page.self, from: Data(#"{"items":[1]}"#.utf8), like: Self.decoder)
        == nil)
  }

  @Test(
    "arrays of strings, Ints, Doubles and Bools decode as JSONDecoder decodes them",
    arguments: [
      #"{"s":["a","\u00e9",""],"i":[0,-1,9223372036854775807],"d":[0.5,-2,1e3],"b":[true,false]}"#,
      #"{"s":[],"i":[],"d":[],"b":[]}"#,
      #"{"s":[["a"]],"i":[1],"d":[1],"b":[true]}"#,
      #"{"s":["a",null],"i":[1],"d":[1],"b":[true]}"#,
      #"{"s":"a","i":[1],"d":[1],"b":[true]}"#,
      #"{"s":{"0":"a"},"i":[1],"d":[1],"b":[true]}"#,
      #"{"s":["a"],"i":[1,"2"],"d":[1],"b":[true]}"#,
      #"{"s":["a"],"i":[1,2.5],"d":[1],"b":[true]}"#,
      #"{"s":["a"],"i":[99999999999999999999],"d":[1],"b":[true]}"#,
      #"{"s":["a"],"i":[1],"d":[1e400],"b":[true]}"#,
      #"{"s":["a"],"i":[1],"d":[0e1],"b":[true]}"#,
      #"{"s":["a"],"i":[1],"d":[1],"b":[1]}"#,
      #"{"s":["a"],"i":[1],"d":[1],"b":null}"#,
    ])
  func leafArrays(json: String) throws {
    struct Lists: Decodable, Equatable {
      let s: [[String]]?
      let i: [Int]
      let d: [Double]
      let b: [Bool]
      init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        // `s` is `[String]` in most documents and `[[String]]` in one: both shapes are read.
        if let strings = try? container.decode([String].self, forKey: .s) {
          s = [strings]
        } else {
          s = try container.decode([[String]].self, forKey: .s)
        }
        i = try container.decode([Int].self, forKey: .i)
        d = try container.decode([Double].self, forKey: .d)
        b = try container.decode([Bool].self, forKey: .b)
      }
      enum CodingKeys: CodingKey { case s, i, d, b }
    }
    let foundation = Self.foundation(Lists.self, json)
    let fast = Self.fast(Lists.self, json)
    // Where the fast path answers, it answers as JSONDecoder; where JSONDecoder refuses, the
    // fast path leaves the document to it.
    if let fast { #expect(fast == foundation) }
    if foundation == nil { #expect(fast == nil) }
    // The two plain documents are answered on the fast path itself.
    if json.hasPrefix(#"{"s":["a","\u00e9""#) || json.hasPrefix(#"{"s":[],"#) {
      #expect(fast != nil)
    }
    // The top-level arrays too.
    let top = #"["x","y"]"#
    #expect(try #require(Self.fast([String].self, top)) == ["x", "y"])
    #expect(try #require(Self.fast([Int].self, "[3, -4]")) == [3, -4])
    #expect(try #require(Self.fast([Bool].self, "[true]")) == [true])
    #expect(try #require(Self.fast([Double].self, "[0.25]")) == [0.25])
    #expect(Self.fast([Int].self, "[1, null]") == nil)
  }

  @Test("a number in an [Int] that does not convert is named with its index")
  func leafArrayNumberProblem() {
    struct Page: Decodable { let items: [Int] }
    #expect(
      FastJSONDecoder.numberProblem(
        Page.self, from: Data(#"{"items":[1,2,1.5]}"#.utf8), like: Self.decoder)
        == #"1.5 at "items.2" is not a whole number, which Int needs"#)
    #expect(
      FastJSONDecoder.numberProblem(
        [Double].self, from: Data(#"[1,1e999]"#.utf8), like: Self.decoder)
        == #"1e999 at "1" is out of Double's range"#)
  }

  static let insertions: [[UInt8]] =
    [
      "{", "}", "[", "]", ",", ":", "\"", "\\", "\\u", "\\ud800", "0", "-", ".", "e", "1e400",
      "null", "true", "1.5", "\u{00e9}", "\u{1F600}", " ", "\n", "\t", "\"id\":1,", "\"name\":",
      "99999999999999999999", "-0", "0.0000001",
    ].map { Array($0.utf8) } + [[0xFF], [0xC3], [0x00], [0xEF, 0xBB, 0xBF]]

  @Test("on 20,000 mutants of a response, every fast answer is JSONDecoder's answer")
  func mutants() async {
    // Seconds of computing with no suspension point: on the compute thread, so the global
    // executor's few threads stay free for the tests that wait.
    await withTaskExecutorPreference(ComputeExecutor.shared) {
      var generator = SplitMix64(seed: 0xFA57_0001)
      let seed = Array(Self.itemJSON.utf8)
      var fastAnswers = 0
      var foundationAnswers = 0
      for _ in 0..<20_000 {
        let bytes = mutant(
          of: seed, insertions: Self.insertions, maximumEdits: 3, using: &generator)
        let data = Data(bytes)
        let foundation = try? JSONDecoder().decode(Item.self, from: data)
        let fast = FastJSONDecoder.decode(Item.self, from: data, like: Self.decoder)
        if foundation != nil { foundationAnswers += 1 }
        guard let fast else { continue }
        fastAnswers += 1
        #expect(fast == foundation, "\(String(decoding: bytes, as: UTF8.self).debugDescription)")
      }
      // Both outcomes must be common for the comparison to mean something.
      #expect(fastAnswers > 2_000)
      #expect(fastAnswers <= foundationAnswers)
      #expect(foundationAnswers < 19_000)
    }
  }

  @Test("on 20,000 random numbers, Double and the integer types read as JSONDecoder reads them")
  func numbers() async {
    // Seconds of computing with no suspension point: on the compute thread, so the global
    // executor's few threads stay free for the tests that wait.
    await withTaskExecutorPreference(ComputeExecutor.shared) {
      var generator = SplitMix64(seed: 0xFA57_0002)
      var fastAnswers = 0
      for _ in 0..<20_000 {
        var text = Int.random(in: 0..<4, using: &generator) == 0 ? "-" : ""
        let digits = Int.random(in: 1...22, using: &generator)
        for index in 0..<digits {
          let digit = Int.random(in: (index == 0 && digits > 1 ? 1 : 0)...9, using: &generator)
          text += String(digit)
        }
        if Bool.random(using: &generator) {
          text += "." + String(Int.random(in: 0...99_999, using: &generator))
        }
        if Int.random(in: 0..<3, using: &generator) == 0 {
          text += "e" + String(Int.random(in: -330...330, using: &generator))
        }
        let json = "[\(text)]"
        func check<Value: Decodable & Equatable>(_ type: Value.Type) {
          guard let fast = Self.fast([Value].self, json) else { return }
          fastAnswers += 1
          #expect(fast == Self.foundation([Value].self, json), "\(Value.self) \(text)")
        }
        check(Double.self)
        check(Int.self)
        check(Int8.self)
        check(Int32.self)
        check(UInt64.self)
        check(UInt16.self)
      }
      #expect(fastAnswers > 20_000)
    }
  }
}
