// libFuzzer target: Courier's JSON decoding against JSONDecoder, on arbitrary bytes.
//
// The input is a response body. It is decoded into each of a set of models — every integer
// type with Int128 and UInt128, optionals (missing, null, present), keys that other Unicode
// normalisation forms spell differently, dictionaries keyed by String and Int, arrays of
// strings, Ints, Doubles and Bools, an enum with associated values, and hand-written
// init(from:) that use decodeIfPresent, try?, nested containers, superDecoder and
// allKeys — with Courier's fast decoding path, with
// ResponseDecoding.json (what every Endpoint<Value> uses) and with a plain JSONDecoder.
//
// Where the fast path answers, the value must be JSONDecoder's and ResponseDecoding must
// return it. Where it does not, ResponseDecoding hands the body to JSONDecoder, whose value
// or error then stands (GeneratedJSONDifferentialTests checks that side); so a fast answer that
// JSONDecoder does not give is the bug looked for here.

import Foundation

@testable import CourierCore

private let request = Request(url: URL(fileURLWithPath: "/"))
private let decoder = JSONDecoder()

/// Every leaf type, optional: missing, null and present are three different documents.
private struct Leaves: Decodable, Equatable, Sendable {
  let b: Bool?
  let s: String?
  let d: Double?
  let i: Int?
  let i8: Int8?
  let i16: Int16?
  let i32: Int32?
  let i64: Int64?
  let i128: Int128?
  let u: UInt?
  let u8: UInt8?
  let u16: UInt16?
  let u32: UInt32?
  let u64: UInt64?
  let u128: UInt128?
  let url: URL?
  let date: Date?
}

/// Required members, and 128-bit integers read with `try?` and in arrays.
private struct Required: Decodable, Equatable, Sendable {
  let id: Int128
  let count: UInt128
  let name: String
  let flags: [Bool]
  let tried: UInt128?
  let list: [Int128?]

  enum CodingKeys: String, CodingKey { case id, count, name, flags, tried, list }

  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    id = try container.decode(Int128.self, forKey: .id)
    count = try container.decode(UInt128.self, forKey: .count)
    name = try container.decode(String.self, forKey: .name)
    flags = try container.decode([Bool].self, forKey: .flags)
    tried = try? container.decode(UInt128.self, forKey: .tried)
    list = try container.decodeIfPresent([Int128?].self, forKey: .list) ?? []
  }
}

/// 128-bit integers read with `try?`: a value where `JSONDecoder` gives one, else `nil`.
private struct Tried: Decodable, Equatable, Sendable {
  let signed: Int128?
  let unsigned: UInt128?
  let elements: [Int128]?

  enum CodingKeys: String, CodingKey { case signed, unsigned, elements }

  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    signed = try? container.decode(Int128.self, forKey: .signed)
    unsigned = try? container.decode(UInt128.self, forKey: .unsigned)
    if var elements = try? container.nestedUnkeyedContainer(forKey: .elements) {
      var values: [Int128] = []
      while !elements.isAtEnd, let value = try? elements.decode(Int128.self) {
        values.append(value)
      }
      self.elements = values
    } else {
      elements = nil
    }
  }
}

/// Keys with characters that have other spellings (`é` and `e` + U+0301, `K` and U+212A).
private struct Accented: Decodable, Equatable, Sendable {
  let cafe: String?
  let kelvin: Int?
  let angstrom: Double?
  let marks: Bool?
  let decomposed: Int8?

  enum CodingKeys: String, CodingKey {
    case cafe = "caf\u{E9}"
    case kelvin = "Key"
    case angstrom = "\u{C5}"
    case marks = "e\u{302}\u{323}"
    case decomposed = "nai\u{308}ve"
  }
}

/// An enum with associated values: one member naming the case, its values inside.
private enum Figure: Decodable, Equatable, Sendable {
  case circle(radius: Double)
  case square(side: UInt16, label: String?)
  case empty
}

private enum Color: String, Decodable, Sendable { case red, green, cafe = "caf\u{E9}" }

/// Collections and enums.
private struct Collections: Decodable, Equatable, Sendable {
  let map: [String: Int]?
  let byNumber: [Int: String]?
  let nested: [String: [String: Double?]]?
  let grid: [[Int64?]]?
  let figures: [Figure]?
  let colors: [Color]?
  let set: Set<String>?
  // Arrays of the leaves the fast path reads without an unkeyed container.
  let ints: [Int]?
  let strings: [String]?
  let doubles: [[Double]]?
  let bools: [Bool]?
}

/// Every keyed and unkeyed container call a hand-written `init(from:)` makes.
private struct Custom: Decodable, Equatable, Sendable {
  let id: Int128
  let hasName: Bool
  let nameIsNull: Bool?
  let number: String
  let inner: [UInt8]
  let list: [Int16?]
  let parent: String?
  let superValue: Int?
  let keys: Int
  let path: [String]

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
    } else {
      number = (try? container.decode(String.self, forKey: .number)) ?? "none"
    }
    if let inner = try? container.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner) {
      self.inner =
        [try inner.decode(UInt8.self, forKey: .a)]
        + (try inner.decodeIfPresent([UInt8].self, forKey: .b) ?? [])
    } else {
      inner = []
    }
    var values: [Int16?] = []
    if var list = try? container.nestedUnkeyedContainer(forKey: .list) {
      while !list.isAtEnd {
        values.append(try list.decodeNil() ? nil : try list.decode(Int16.self))
      }
    }
    list = values
    parent = try? container.superDecoder(forKey: .parent).singleValueContainer().decode(
      String?.self)
    superValue = try? container.superDecoder().singleValueContainer().decode(Int.self)
    keys = container.allKeys.count
    path = decoder.codingPath.map { "\($0.stringValue)|\($0.intValue.map(String.init) ?? "-")" }
  }
}

/// An array read element by element.
private struct Elements: Decodable, Equatable, Sendable {
  let first: Int8
  let second: String?
  let third: [Double]
  let rest: [Custom]

  init(from decoder: any Decoder) throws {
    var container = try decoder.unkeyedContainer()
    first = try container.decode(Int8.self)
    second = try container.decodeIfPresent(String.self)
    var third = try container.nestedUnkeyedContainer()
    var doubles: [Double] = []
    while !third.isAtEnd { doubles.append(try third.decode(Double.self)) }
    self.third = doubles
    var rest: [Custom] = []
    while !container.isAtEnd { rest.append(try container.decode(Custom.self)) }
    self.rest = rest
  }
}

/// Any JSON value, read by trying one type after another with `try?`.
private indirect enum AnyJSON: Decodable, Equatable, Sendable {
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

/// Fails when the fast path answers differently from JSONDecoder, or ResponseDecoding
/// differently from the fast path.
private func compare<Value: Decodable & Equatable & Sendable>(_ type: Value.Type, _ body: Data) {
  guard let fast = FastJSONDecoder.decode(type, from: body, like: decoder) else { return }
  let foundation: Value
  do {
    foundation = try decoder.decode(type, from: body)
  } catch {
    fatalError("the fast path decoded \(Value.self) \(fast) where JSONDecoder throws \(error)")
  }
  guard foundation == fast else {
    fatalError("the fast path decoded \(fast), JSONDecoder \(foundation)")
  }
  let context = ResponseContext(response: Response(status: 200, body: body, request: request))
  guard let courier = try? ResponseDecoding<Value>.json().decode(context, decoder),
    courier == fast
  else { fatalError("ResponseDecoding.json did not return the fast path's \(fast)") }
}

/// libFuzzer's entry point: runs one input of `size` bytes at `data`; returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let body = Data(bytes: data, count: size)
  compare(Leaves.self, body)
  compare(Required.self, body)
  compare(Tried.self, body)
  compare(Accented.self, body)
  compare(Collections.self, body)
  compare(Custom.self, body)
  compare(Elements.self, body)
  compare(AnyJSON.self, body)
  compare([String: Int128].self, body)
  compare([Int: UInt8].self, body)
  compare([Leaves].self, body)
  return 0
}
