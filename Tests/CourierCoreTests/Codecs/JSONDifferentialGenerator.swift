import CourierTesting
import Foundation

@testable import CourierCore

// A seeded generator of JSON documents shaped like a model's schema — mostly fitting it,
// with wrong types, nulls, missing and extra members, duplicate keys and keys spelt in
// another Unicode normalisation form, numbers at and beyond each type's range — and the
// comparison of Courier's JSON decoding with `JSONDecoder`'s on each document.

/// A JSON value as the generator writes it: numbers keep their literal, objects their
/// members in order, duplicates included.
indirect enum GeneratedJSON: Sendable {
  case null
  case bool(Bool)
  case number(String)
  case string(String)
  case array([GeneratedJSON])
  case object([Member])

  struct Member: Sendable {
    let key: String
    let value: GeneratedJSON
  }
}

/// The integer types a schema names, with their ranges as decimal text.
enum IntegerKind: Sendable, CaseIterable {
  case int, int8, int16, int32, int64, int128, uint, uint8, uint16, uint32, uint64, uint128

  var range: (minimum: String, maximum: String) {
    switch self {
    case .int: (String(Int.min), String(Int.max))
    case .int8: (String(Int8.min), String(Int8.max))
    case .int16: (String(Int16.min), String(Int16.max))
    case .int32: (String(Int32.min), String(Int32.max))
    case .int64: (String(Int64.min), String(Int64.max))
    case .int128: (String(Int128.min), String(Int128.max))
    case .uint: ("0", String(UInt.max))
    case .uint8: ("0", String(UInt8.max))
    case .uint16: ("0", String(UInt16.max))
    case .uint32: ("0", String(UInt32.max))
    case .uint64: ("0", String(UInt64.max))
    case .uint128: ("0", String(UInt128.max))
    }
  }
}

/// What a model expects at one place of a document.
indirect enum Schema: Sendable {
  case bool, string, double, url
  case integer(IntegerKind)
  case optional(Schema)
  case array(Schema)
  /// An object of any keys (`[String: Value]`, `[Int: Value]`).
  case dictionary(Schema, keys: [String])
  case object([Field])
  /// One of several shapes (an enum with associated values, a value read with `try?`).
  case choice([Schema])
  /// One of fixed values (an enum's raw values).
  case literal([GeneratedJSON])
  /// An array of these elements in this order (a value read with an unkeyed container).
  case sequence([Schema])
  /// Any value at all.
  case anything

  struct Field: Sendable {
    let key: String
    let schema: Schema
    init(_ key: String, _ schema: Schema) {
      self.key = key
      self.schema = schema
    }
  }

  static func fields(_ fields: (String, Schema)...) -> Schema {
    .object(fields.map { Field($0.0, $0.1) })
  }
}

/// Writes documents for a schema from a seeded random sequence.
///
/// Every document varies what a model must accept (members in any order, keys spelt in
/// another normalisation form, escapes, white space, unknown members, `null` or nothing for
/// an optional, integers anywhere in their type's range), and some documents also hold
/// faults (a wrong type, a required member missing or `null`, a duplicate key, a number out
/// of range or with a fraction), a few or many, so that both values and errors are common.
struct JSONDocumentGenerator {
  var random: SplitMix64
  /// A fault at each place one can go, one time in this many; never when 0.
  private var faultOdds = 0

  init(seed: UInt64) {
    random = SplitMix64(seed: seed)
  }

  /// True one time in `odds`.
  mutating func chance(_ odds: Int) -> Bool { Int.random(in: 0..<odds, using: &random) == 0 }

  /// Whether to put a fault here, at the document's rate.
  mutating func fault() -> Bool { faultOdds != 0 && chance(faultOdds) }

  mutating func pick<Element>(_ elements: [Element]) -> Element {
    elements[Int.random(in: 0..<elements.count, using: &random)]
  }

  /// A document for `schema` as JSON text.
  mutating func document(_ schema: Schema) -> String {
    faultOdds = pick([0, 0, 60, 25, 8])
    var text = ""
    write(value(schema, depth: 0), into: &text)
    return text
  }

  // MARK: - Values

  mutating func value(_ schema: Schema, depth: Int) -> GeneratedJSON {
    if fault() { return noise(depth: depth) }
    switch schema {
    case .bool: return .bool(chance(2))
    case .string: return .string(text())
    case .double: return .number(floatingLiteral())
    case .url: return .string(pick(Self.urls))
    case .integer(let kind): return .number(integerLiteral(kind))
    case .optional(let wrapped): return chance(5) ? .null : value(wrapped, depth: depth)
    case .array(let element):
      return .array(
        (0..<Int.random(in: 0...4, using: &random)).map { _ in
          value(element, depth: depth + 1)
        })
    case .dictionary(let element, let keys):
      return .object(
        (0..<Int.random(in: 0...4, using: &random)).map { _ in
          GeneratedJSON.Member(key: spelling(pick(keys)), value: value(element, depth: depth + 1))
        })
    case .object(let fields): return object(fields, depth: depth)
    case .choice(let schemas): return value(pick(schemas), depth: depth)
    case .literal(let values): return pick(values)
    case .sequence(let elements):
      var values = elements.map { value($0, depth: depth + 1) }
      if fault() { values.removeLast() }
      if chance(4) { values.append(noise(depth: depth + 1)) }
      return .array(values)
    case .anything: return noise(depth: depth)
    }
  }

  /// The fields in order, each sometimes missing, null, repeated under another spelling of
  /// its key, with unknown members between them and the order sometimes shuffled.
  mutating func object(_ fields: [Schema.Field], depth: Int) -> GeneratedJSON {
    var members: [GeneratedJSON.Member] = []
    for field in fields {
      let isOptional = if case .optional = field.schema { true } else { false }
      if isOptional ? chance(6) : fault() { continue }
      if fault() {
        members.append(.init(key: spelling(field.key), value: .null))
        continue
      }
      members.append(.init(key: spelling(field.key), value: value(field.schema, depth: depth + 1)))
      if fault() {
        members.append(
          .init(key: spelling(field.key), value: value(field.schema, depth: depth + 1)))
      }
      if chance(8) {
        members.append(.init(key: nearMiss(field.key), value: noise(depth: depth + 1)))
      }
    }
    if chance(4) { members.shuffle(using: &random) }
    return .object(members)
  }

  /// Any value, nested a little.
  mutating func noise(depth: Int) -> GeneratedJSON {
    switch Int.random(in: 0..<(depth < 3 ? 8 : 6), using: &random) {
    case 0: return .null
    case 1: return .bool(chance(2))
    case 2: return .number(integerLiteral(pick(IntegerKind.allCases)))
    case 3: return .number(floatingLiteral())
    case 4, 5: return .string(chance(3) ? pick(Self.keys) : text())
    case 6:
      return .array(
        (0..<Int.random(in: 0...3, using: &random)).map { _ in
          noise(depth: depth + 1)
        })
    default:
      return .object(
        (0..<Int.random(in: 0...3, using: &random)).map { _ in
          GeneratedJSON.Member(key: spelling(pick(Self.keys)), value: noise(depth: depth + 1))
        })
    }
  }

  // MARK: - Numbers

  /// An integer in `kind`'s range (at its ends, small, any number of digits); with a fault,
  /// also one just past the range, a huge one, or one written with a fraction or an
  /// exponent.
  mutating func integerLiteral(_ kind: IntegerKind) -> String {
    let (minimum, maximum) = kind.range
    if !fault() {
      switch Int.random(in: 0..<6, using: &random) {
      case 0: return maximum
      case 1: return minimum
      case 2:
        // Fewer digits than the largest value: always in range.
        var text = minimum != "0" && chance(2) ? "-" : ""
        text += String(Int.random(in: 1...9, using: &random))
        for _ in 0..<Int.random(in: 0..<(maximum.count - 1), using: &random) {
          text += String(Int.random(in: 0...9, using: &random))
        }
        return text
      default: return String(Int.random(in: 0...127, using: &random))
      }
    }
    switch Int.random(in: 0..<8, using: &random) {
    case 0: return Self.incremented(maximum)
    case 1: return minimum == "0" ? "-1" : "-" + Self.incremented(String(minimum.dropFirst()))
    case 2: return pick(["-0", "1.0", "1e2", "1E+2", "-1.5", "0.0", "1e-2", "100e-2", "-0.0"])
    case 3: return maximum + pick([".0", "e0", ".5"])
    case 4: return pick(["9223372036854775808", "-9223372036854775808", "-9223372036854775809"])
    case 5: return "-" + String(Int.random(in: 0...32_768, using: &random))
    default:
      let digits = Int.random(in: 1...45, using: &random)
      var text = chance(3) ? "-" : ""
      text += String(Int.random(in: 1...9, using: &random))
      for _ in 1..<digits { text += String(Int.random(in: 0...9, using: &random)) }
      return text
    }
  }

  /// A number with a fraction or an exponent, at the edges of `Double` and beyond.
  mutating func floatingLiteral() -> String {
    switch Int.random(in: 0..<6, using: &random) {
    case 0:
      return pick([
        "0", "-0", "0.1", "1e308", "1.7976931348623157e308", "1e309", "-1e309", "1e-400",
        "4.9e-324", "2.2250738585072014e-308", "1e-320", "123456789012345678901234567890",
        "0.30000000000000004", "3.4028235e38", "3.5e38", "1E-7", "-2.5e+3",
      ])
    case 1: return String(Int.random(in: -1_000...1_000, using: &random))
    default:
      var text = chance(3) ? "-" : ""
      text += String(Int.random(in: 0...99_999, using: &random))
      if chance(2) { text += "." + String(Int.random(in: 0...99_999, using: &random)) }
      if chance(3) {
        text += pick(["e", "E", "e+", "e-"]) + String(Int.random(in: 0...330, using: &random))
      }
      return text
    }
  }

  /// `digits` (a non-negative decimal) plus one.
  static func incremented(_ digits: String) -> String {
    var bytes = Array(digits.utf8)
    var index = bytes.count - 1
    while index >= 0 {
      if bytes[index] == UInt8(ascii: "9") {
        bytes[index] = UInt8(ascii: "0")
        index -= 1
      } else {
        bytes[index] += 1
        return String(decoding: bytes, as: UTF8.self)
      }
    }
    return "1" + String(decoding: bytes, as: UTF8.self)
  }

  // MARK: - Text

  static let keys = [
    "a", "b", "id", "", "super", "1", "01", "caf\u{E9}", "cafe\u{301}", "K", "\u{212A}",
    "\u{C5}", "A\u{30A}", "\u{212B}", "e\u{323}\u{302}", "\u{1EC7}", "na\u{EF}ve",
  ]

  static let urls = [
    "https://a.test/x?y=1", "", "not a url", "http://[::1]:8080/p", "caf\u{E9}", "a b", "//x",
    "https://a.test/%zz", "mailto:x@y.test",
  ]

  /// Spellings of the same text: `String` calls each of a row's entries equal.
  static let equivalents: [[String]] = [
    ["\u{E9}", "e\u{301}"], ["\u{C5}", "A\u{30A}", "\u{212B}"], ["K", "\u{212A}"],
    ["\u{EF}", "i\u{308}"], ["\u{F1}", "n\u{303}"], ["\u{3A9}", "\u{2126}"], [";", "\u{37E}"],
    ["\u{1EC7}", "e\u{323}\u{302}", "e\u{302}\u{323}", "\u{1EB9}\u{302}"],
  ]

  /// `key` with each of its characters that has other spellings spelt at random.
  mutating func spelling(_ key: String) -> String {
    guard chance(2) else { return key }
    var result = ""
    for character in key {
      if let row = Self.equivalents.first(where: { $0.contains { Character($0) == character } }) {
        result += pick(row)
      } else {
        result.append(character)
      }
    }
    return result
  }

  /// A key that looks like `key` and is not equal to it.
  mutating func nearMiss(_ key: String) -> String {
    switch Int.random(in: 0..<4, using: &random) {
    case 0: return key + "\u{301}"
    case 1: return key.uppercased()
    case 2: return key + " "
    default: return "x" + key
    }
  }

  static let textPieces = [
    "a", "latte", "caf\u{E9}", "cafe\u{301}", "\u{1F600}", "\u{0}", "\n", "\t", "\"", "\\",
    "/", "\u{2028}", "\u{7F}", "\u{FFFF}", "\u{10FFFF}", "\u{212A}", " ", "\u{FEFF}",
  ]

  mutating func text() -> String {
    var text = ""
    for _ in 0..<Int.random(in: 0...4, using: &random) { text += pick(Self.textPieces) }
    return text
  }

  // MARK: - Writing

  mutating func space(into text: inout String) {
    if chance(6) { text += pick([" ", "\n", "\t", "\r\n", "  "]) }
  }

  mutating func write(_ value: GeneratedJSON, into text: inout String) {
    space(into: &text)
    switch value {
    case .null: text += "null"
    case .bool(let bool): text += bool ? "true" : "false"
    case .number(let literal): text += literal
    case .string(let string): writeString(string, into: &text)
    case .array(let elements):
      text += "["
      for (index, element) in elements.enumerated() {
        if index > 0 { text += "," }
        write(element, into: &text)
      }
      space(into: &text)
      text += "]"
    case .object(let members):
      text += "{"
      for (index, member) in members.enumerated() {
        if index > 0 { text += "," }
        space(into: &text)
        writeString(member.key, into: &text)
        space(into: &text)
        text += ":"
        write(member.value, into: &text)
      }
      space(into: &text)
      text += "}"
    }
    space(into: &text)
  }

  /// A JSON string, each character raw or escaped at random (what must be escaped always is).
  mutating func writeString(_ string: String, into text: inout String) {
    text += "\""
    for scalar in string.unicodeScalars {
      switch scalar {
      case "\"": text += "\\\""
      case "\\": text += "\\\\"
      case "\n": text += chance(2) ? "\\n" : "\\u000a"
      case "\t": text += chance(2) ? "\\t" : "\\u0009"
      case "/": text += chance(2) ? "/" : "\\/"
      default:
        if scalar.value < 0x20 || chance(8) {
          for unit in String(scalar).utf16 {
            let hex = String(unit, radix: 16)
            text +=
              "\\u" + String(repeating: "0", count: 4 - hex.count)
              + (chance(2) ? hex : hex.uppercased())
          }
        } else {
          text.unicodeScalars.append(scalar)
        }
      }
    }
    text += "\""
  }
}

// MARK: - Comparing with JSONDecoder

/// How Courier's decoding of one document compared with `JSONDecoder`'s.
struct DecodingComparison: Sendable {
  /// What differed, or `nil` when both gave equal values or both failed alike.
  var disagreement: String?
  /// Courier's own decoding path answered (rather than handing the body to `JSONDecoder`).
  var fastPathAnswered: Bool
  /// `JSONDecoder` decoded a value.
  var foundationDecoded: Bool
}

/// A `DecodingError`'s case and coding path, the parts two decoders must agree on.
func decodingErrorSummary(_ error: any Error) -> String {
  let (name, context): (String, DecodingError.Context?) =
    switch error as? DecodingError {
    case .typeMismatch(let type, let context): ("typeMismatch(\(type))", context)
    case .valueNotFound(let type, let context): ("valueNotFound(\(type))", context)
    case .keyNotFound(let key, let context): ("keyNotFound(\(key.stringValue))", context)
    case .dataCorrupted(let context): ("dataCorrupted", context)
    case .none: ("not a DecodingError: \(type(of: error))", nil)
    @unknown default: ("unknown DecodingError", nil)
    }
  let path = context?.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue } ?? []
  return "\(name) at \(path)"
}

private let differentialRequest = Request(url: URL(fileURLWithPath: "/"))

/// A decoding's value, or its error as ``decodingErrorSummary(_:)`` gives it.
enum DecodingOutcome<Value: Equatable>: Equatable {
  case value(Value)
  case failure(String)

  init(_ body: () throws -> Value) {
    do {
      self = .value(try body())
    } catch let error as CourierError {
      self = .failure(decodingErrorSummary(error.underlying ?? error))
    } catch {
      self = .failure(decodingErrorSummary(error))
    }
  }
}

/// Decodes `data` as `Value` with Courier's JSON decoding (`ResponseDecoding.json`, what
/// every `Endpoint<Value>` uses) and with a plain `JSONDecoder`, and compares: equal values,
/// or both failing with the same `DecodingError` case at the same coding path.
///
/// `JSONDecoder` itself does not always answer alike: it visits an object's members in its
/// dictionary's order, which changes between dictionaries, so which of two bad members it
/// reports, and which of `"1"` and `"01"` an `[Int: Value]` keeps, can change from one call
/// to the next. Where Courier handed the body to `JSONDecoder`, its answer is accepted when
/// any of a few more `JSONDecoder` calls gives it; where Courier's own path answered, it
/// must be the answer of the first.
func compareWithJSONDecoder<Value: Decodable & Equatable & Sendable>(
  _ type: Value.Type, _ data: Data
) -> DecodingComparison {
  let decoder = JSONDecoder()
  let foundation = DecodingOutcome { try decoder.decode(Value.self, from: data) }
  let fast = FastJSONDecoder.decode(Value.self, from: data, like: decoder)
  let context = ResponseContext(
    response: Response(status: 200, body: data, request: differentialRequest))
  let courier = DecodingOutcome { try ResponseDecoding<Value>.json().decode(context, decoder) }
  var comparison = DecodingComparison(
    disagreement: nil, fastPathAnswered: fast != nil,
    foundationDecoded: { if case .value = foundation { true } else { false } }())
  if let fast, courier != .value(fast) {
    comparison.disagreement = "the fast path decoded \(fast), but Courier gave \(courier)"
  } else if courier != foundation {
    // The order follows the dictionary's address. The allocator hands a freed block back to
    // the next request of its size, so each call would get its dictionaries where the last
    // one had them: blocks of every small size, held between the calls, move the next ones.
    // When Courier left the body to JSONDecoder, its answer is one JSONDecoder gives: a
    // document JSONDecoder itself answers differently from call to call (two keys of one
    // `intValue`, two bad members) is only checked to be answered as JSONDecoder may.
    var ballast: [[UInt8]] = []
    var answers: [DecodingOutcome<Value>] = []
    for _ in 0..<32 where fast == nil {
      ballast += (1...128).map { [UInt8](repeating: 0, count: $0 * 8) }
      answers.append(DecodingOutcome { try JSONDecoder().decode(Value.self, from: data) })
      if answers.last == courier { break }
    }
    let retried =
      fast == nil && (answers.contains(courier) || answers.contains { $0 != foundation })
    if !retried {
      comparison.disagreement =
        "Courier (\(fast == nil ? "by JSONDecoder" : "on its fast path")) gave \(courier), "
        + "JSONDecoder \(foundation)"
    }
  }
  return comparison
}
