import CourierTesting
import Foundation
import Testing

@testable import CourierCore

@Suite("JSON scanner", .timeLimit(.minutes(5)))
struct JSONScannerTests {
  static let seeds: [String] = [
    #"{"code":0,"msg":"ok","data":{"name":"Li","age":30,"tags":["a","b"],"x":null}}"#,
    #"{"status":"ok","posts":[{"id":1,"t":"a\"b\\c\u00e9"},{"id":2.5e3,"t":""}],"n":-0.1}"#,
    #"{"meta":{"status":200,"message":"m"},"result":{"items":[[],{},[{}],true,false]}}"#,
    #"{"code":0,"msg":"你好，世界","data":{"名字":"李雷","e":"é😀","z":"\ud83d\ude00"}}"#,
    #"{"code":1,"msg":"a","code":0,"data":{"z":1},"msg":"b","data":[2]}"#,
    #"{"data":{"z":"\u00e9","z":2},"code":"E1","data":null,"code":3,"msg":null}"#,
  ]

  /// What a mutation inserts: JSON punctuation and ASCII, well-formed multi-byte UTF-8,
  /// malformed UTF-8 (a lone continuation byte, bytes that never occur, truncated sequences,
  /// overlong forms, an encoded surrogate, a code point above U+10FFFF), `\u` escapes with
  /// paired, lone high and lone low surrogates, and whole members that duplicate the keys
  /// the scanner looks for, with other values.
  static let insertions: [[UInt8]] = {
    var pieces = #"{}[]:,"\ 0123456789-+.eEtrufalsn"#.utf8.map { [$0] }
    pieces += ["é", "你", "😀", "\u{7F}"].map { Array($0.utf8) }
    pieces += [
      [0x80], [0xBF], [0xC0], [0xC1], [0xF5], [0xFF], [0xFE],
      [0xC3], [0xE4, 0xBD], [0xF0, 0x9F, 0x98],
      [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xF0, 0x80, 0x80, 0xAF],
      [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
    ]
    pieces += [
      #"\ud800"#, #"\udbff"#, #"\udc00"#, #"\ud83d\ude00"#, #"\u00e9"#, #"\u0000"#,
      #"\ud800\u0041"#, #"\ud83d"#,
    ].map { Array($0.utf8) }
    pieces += [
      #""code":1,"#, #""code":"E1","#, #""code":0,"#, #""msg":"m2","#, #""msg":7,"#,
      #""data":{"z":9},"#, #""data":[],"#, #""data":"é","#, #","code":null"#,
    ].map { Array($0.utf8) }
    return pieces
  }()

  /// A JSON value as `JSONDecoder` sees it, to compare what the scanner located with what
  /// Foundation decodes.
  indirect enum JSONValue: Decodable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
      let container = try decoder.singleValueContainer()
      if container.decodeNil() {
        self = .null
      } else if let value = try? container.decode(Bool.self) {
        self = .bool(value)
      } else if let value = try? container.decode(Double.self) {
        self = .number(value)
      } else if let value = try? container.decode(String.self) {
        self = .string(value)
      } else if let value = try? container.decode([JSONValue].self) {
        self = .array(value)
      } else {
        self = .object(try container.decode([String: JSONValue].self))
      }
    }

    subscript(key: String) -> JSONValue? {
      if case .object(let members) = self { return members[key] }
      return nil
    }
  }

  static let differentialPaths: [[Substring]] = [["code"], ["msg"], ["data"], ["data", "z"]]

  @Test(
    "accepts exactly what JSONSerialization accepts, and locates what JSONDecoder decodes, on 20,000 mutants"
  )
  func agreesWithFoundation() async throws {
    // Seconds of computing with no suspension point: on the compute thread, so the global
    // executor's few threads stay free for the tests that wait.
    try await withTaskExecutorPreference(ComputeExecutor.shared) {
      var generator = SplitMix64(seed: 0xC0FF_EE00)
      var accepted = 0
      var compared = 0
      for round in 0..<20_000 {
        let bytes = mutant(
          of: Array(Self.seeds[round % Self.seeds.count].utf8), insertions: Self.insertions,
          using: &generator)
        let data = Data(bytes)
        let shown = String(decoding: bytes, as: UTF8.self).debugDescription
        let ranges = try? JSONScanner.locate(Self.differentialPaths, in: data)
        let parsed = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] != nil
        #expect(
          (ranges != nil) == parsed, "\(shown): scanner \(ranges != nil), Foundation \(parsed)")
        guard let ranges else { continue }
        accepted += 1
        // Where JSONDecoder can decode every value (it rejects numbers beyond Double), each
        // located range must hold the value it sees, first duplicate included.
        guard let root = try? JSONDecoder().decode(JSONValue.self, from: data) else { continue }
        compared += 1
        let expected = [root["code"], root["msg"], root["data"], root["data"]?["z"]]
        for (path, (range, value)) in zip(Self.differentialPaths, zip(ranges, expected)) {
          let located = try range.map { try JSONDecoder().decode(JSONValue.self, from: data[$0]) }
          #expect(located == value, "\(shown): \(path.joined(separator: "."))")
        }
      }
      // The mutants must exercise both outcomes for the comparison to mean something.
      #expect(accepted > 1_000)
      #expect(accepted < 19_000)
      #expect(compared > accepted * 9 / 10)
    }
  }

  @Test(
    "strings must be well-formed UTF-8 with paired surrogate escapes, as Foundation requires",
    arguments: [
      [0x80], [0xC0, 0x80], [0xC1, 0xBF], [0xC3], [0xE0, 0x9F, 0xBF], [0xED, 0xA0, 0x80],
      [0xF0, 0x8F, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xFF],
      [0xE4, 0xBD, 0x41], Array(#"\ud800"#.utf8), Array(#"\udc00"#.utf8),
      Array(#"\ud800\u0041"#.utf8), Array(#"\ud800\ud800"#.utf8), Array(#"\ude00\ud83d"#.utf8),
    ] as [[UInt8]])
  func rejectsMalformedStrings(inner: [UInt8]) throws {
    // In a member the scanner skips, in a key, and in a value it locates.
    for document in [
      Array(#"{"code":0,"x":""#.utf8) + inner + Array(#""}"#.utf8),
      Array(#"{""#.utf8) + inner + Array(#"":1,"code":0}"#.utf8),
      Array(#"{"code":""#.utf8) + inner + Array(#""}"#.utf8),
    ] {
      let data = Data(document)
      #expect(throws: JSONScanner.Failure.self) { try JSONScanner.locate([["code"]], in: data) }
      #expect((try? JSONSerialization.jsonObject(with: data)) == nil)
    }
  }

  @Test("well-formed multi-byte UTF-8 and paired surrogates are accepted")
  func acceptsWellFormedStrings() throws {
    let data = Data(
      #"{"名":"你好 é 😀 \ud83d\ude00 \uDBFF\uDFFF \u0000 \u007f","code":"✓"}"#.utf8)
    let range = try #require(try JSONScanner.locate([["code"]], in: data)[0])
    #expect(JSONScanner.string(at: range, in: data) == "✓")
  }

  @Test("duplicate keys: the first member wins, for nested paths too, as in JSONDecoder")
  func duplicateKeysFirstWins() throws {
    struct Envelope: Decodable {
      struct Meta: Decodable {
        let status: Int?
        let message: String?
      }
      let code: Int?
      let meta: Meta?
    }
    for body in [
      #"{"code":1,"code":0}"#,
      #"{"meta":{"status":1},"meta":{"status":0,"message":"x"}}"#,
      #"{"meta":{"message":"first"},"meta":{"status":0}}"#,
      #"{"meta":null,"meta":{"status":0}}"#,
    ] {
      let data = Data(body.utf8)
      let decoded = try JSONDecoder().decode(Envelope.self, from: data)
      let ranges = try JSONScanner.locate(
        [["code"], ["meta", "status"], ["meta", "message"]], in: data)
      let text = { (index: Int) in
        ranges[index].flatMap { JSONScanner.scalarText(at: $0, in: data) }
      }
      #expect(text(0) == decoded.code.map(String.init), "\(body)")
      #expect(text(1) == decoded.meta?.status.map(String.init), "\(body)")
      #expect(text(2) == decoded.meta?.message, "\(body)")
    }
    // A first member that is not an object hides later ones, as JSONDecoder fails on it.
    let data = Data(#"{"meta":1,"meta":{"status":0}}"#.utf8)
    #expect(try JSONScanner.locate([["meta", "status"]], in: data) == [nil])
  }

  @Test("keys compare as JSONDecoder compares them: by canonical equivalence")
  func keysCompareCanonically() throws {
    // U+212A KELVIN SIGN is canonically equivalent to "K", written raw and escaped.
    for body in ["{\"\u{212A}ey\":1,\"Key\":2}", #"{"\u212Aey":1,"Key":2}"#] {
      let data = Data(body.utf8)
      struct Keyed: Decodable {
        let key: Int
        enum CodingKeys: String, CodingKey { case key = "Key" }
      }
      let range = try #require(try JSONScanner.locate([["Key"]], in: data)[0])
      #expect(JSONScanner.scalarText(at: range, in: data) == "1")
      #expect(try JSONDecoder().decode(Keyed.self, from: data).key == 1)
    }
  }

  @Test("a UTF-8 byte order mark before the object is skipped, as Foundation does")
  func byteOrderMark() throws {
    let data = Data([0xEF, 0xBB, 0xBF] + Array(#"{"code":0}"#.utf8))
    let range = try #require(try JSONScanner.locate([["code"]], in: data)[0])
    #expect(JSONScanner.scalarText(at: range, in: data) == "0")
    #expect((try? JSONSerialization.jsonObject(with: data)) != nil)
  }

  @Test("finds nested members and reports their kinds")
  func locatesNestedMembers() throws {
    let data = Data(#"{"a":{"b":[1,2]},"c":"x\"y","d":-1.5e2,"a2":true}"#.utf8)
    let ranges = try JSONScanner.locate(
      [["a", "b"], ["c"], ["d"], ["missing"], ["c", "z"]], in: data)
    let b = try #require(ranges[0])
    #expect(String(decoding: data[b], as: UTF8.self) == "[1,2]")
    #expect(JSONScanner.kind(of: b, in: data) == .array)
    let c = try #require(ranges[1])
    #expect(JSONScanner.string(at: c, in: data) == "x\"y")
    let d = try #require(ranges[2])
    #expect(JSONScanner.scalarText(at: d, in: data) == "-1.5e2")
    #expect(ranges[3] == nil)
    #expect(ranges[4] == nil)
  }

  @Test("keys with escapes match their decoded names")
  func escapedKeys() throws {
    let data = Data(#"{"co\u0064e":7}"#.utf8)
    let range = try #require(try JSONScanner.locate([["code"]], in: data)[0])
    #expect(JSONScanner.scalarText(at: range, in: data) == "7")
  }

  @Test("works on a Data slice that does not start at index 0")
  func dataSlice() throws {
    let whole = Data(#"xx{"code":0,"data":[1]}"#.utf8)
    let slice = whole[2...]
    let range = try #require(try JSONScanner.locate([["data"]], in: slice)[0])
    #expect(String(decoding: slice[range], as: UTF8.self) == "[1]")
  }
}
