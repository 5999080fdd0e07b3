import Foundation
import Testing

@testable import CourierCore

@Suite("JSON scanner")
struct JSONScannerTests {
  /// A small deterministic generator, so a failure can be replayed.
  struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return z ^ (z >> 31)
    }
  }

  static let seeds: [String] = [
    #"{"code":0,"msg":"ok","data":{"name":"Li","age":30,"tags":["a","b"],"x":null}}"#,
    #"{"status":"ok","posts":[{"id":1,"t":"a\"b\\c\u00e9"},{"id":2.5e3,"t":""}],"n":-0.1}"#,
    #"{"meta":{"status":200,"message":"m"},"result":{"items":[[],{},[{}],true,false]}}"#,
  ]

  static let alphabet = Array(#"{}[]:,"\ 0123456789-+.eEtrufalsn"#.utf8)

  @Test("accepts exactly what JSONSerialization accepts, and never crashes, on 20,000 mutants")
  func agreesWithJSONSerialization() throws {
    var generator = SplitMix64(state: 0xC0FF_EE00)
    var accepted = 0
    for round in 0..<20_000 {
      var bytes = Array(Self.seeds[round % Self.seeds.count].utf8)
      for _ in 0...Int.random(in: 0...3, using: &generator) {
        let position = Int.random(in: 0..<bytes.count, using: &generator)
        switch Int.random(in: 0..<3, using: &generator) {
        case 0: bytes[position] = Self.alphabet.randomElement(using: &generator) ?? 0x20
        case 1: bytes.remove(at: position)
        default: bytes.insert(Self.alphabet.randomElement(using: &generator) ?? 0x20, at: position)
        }
        if bytes.isEmpty { bytes = [0x7B] }
      }
      let data = Data(bytes)
      let scanned = (try? JSONScanner.locate([["code"], ["data"]], in: data)) != nil
      let parsed = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] != nil
      #expect(
        scanned == parsed,
        "\(String(decoding: bytes, as: UTF8.self)): scanner \(scanned), Foundation \(parsed)")
      if scanned { accepted += 1 }
    }
    // The mutants must exercise both outcomes for the comparison to mean something.
    #expect(accepted > 1_000)
    #expect(accepted < 19_000)
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
