// libFuzzer target: the envelope scanner and key paths over arbitrary bytes.
//
// The input is an optional key path line (`data.items\n`, at most 64 bytes) followed by a
// response body. The body goes through JSONScanner.locate, the built-in and a key-path
// EnvelopeRule, and the ResponsePipeline's validate and decode path with
// `Endpoint.decoded(at:)`'s decoding, `.string` and `.data`, for a 200 and a 400.
//
// The body is also decoded into a few models by Courier's fast decoding path and by
// JSONDecoder: the fast path answering where JSONDecoder does not, or with a different value,
// is a bug.
//
// Errors are expected; a crash, a range outside the body, or the scanner rejecting an object
// Foundation's parser accepts (below the nesting limit) is a bug.

import Foundation

@testable import CourierCore

private let request = Request(url: URL(fileURLWithPath: "/"))
private let decoder = JSONDecoder()

/// Any JSON value, decoded as a model would be.
private indirect enum JSONValue: Decodable, Sendable {
  case null, bool(Bool), number(Double), string(String), array([JSONValue])
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
}

/// A response model with optional members, nested objects, arrays and a dictionary.
private struct Model: Decodable, Equatable {
  struct Item: Decodable, Equatable {
    let id: Int
    let name: String?
    let price: Double?
    let tags: [String]?
    let small: Int8?
    let large: UInt64?
  }
  let code: Int?
  let msg: String?
  let status: String?
  let ok: Bool?
  let data: [Item]?
  let items: [String: Int64]?
  let url: URL?
}

/// Fails when the fast path answers and JSONDecoder does not, or answers differently.
private func compareFastPath<Value: Decodable & Equatable>(_ type: Value.Type, _ body: Data) {
  guard let fast = FastJSONDecoder.decode(type, from: body, like: decoder) else { return }
  guard let foundation = try? decoder.decode(type, from: body) else {
    fatalError("the fast path decoded \(Value.self) where JSONDecoder throws: \(fast)")
  }
  guard foundation == fast else {
    fatalError("the fast path decoded \(fast), JSONDecoder \(foundation)")
  }
}

/// libFuzzer's entry point: runs one input of `size` bytes at `data`; returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let input = Data(bytes: data, count: size)
  var keyPath = "data"
  var body = input
  if let newline = input.prefix(65).firstIndex(of: UInt8(ascii: "\n")) {
    keyPath = String(decoding: input[..<newline], as: UTF8.self)
    // A slice whose indices do not start at 0, as a body cut from a larger buffer is.
    body = input[(newline + 1)...]
  }

  scan(body, keyPath: keyPath)
  compareFastPath(Model.self, body)
  compareFastPath([Model.Item].self, body)
  compareFastPath([String: String].self, body)
  compareFastPath([[Double]].self, body)
  compareFastPath([Int32?].self, body)

  let keyPathRule = EnvelopeRule(
    code: keyPath, success: [0, "ok", true], message: ["msg", keyPath], payload: keyPath,
    matchesAcrossTypes: true)
  let rules: [EnvelopeRule?] = [nil, .codeZero, .statusOK, keyPathRule]
  for rule in rules {
    let pipeline = rule.map { ResponsePipeline.envelope($0) } ?? .standard
    for status in [200, 400] {
      let response = Response(
        status: status,
        headers: HTTPHeaders(received: [("Content-Type", "application/json; charset=utf-8")]),
        body: body, request: request)
      _ = try? rule?.evaluate(response)
      // The pipeline's entry point after the chain: the stages, then each decoding.
      let overrides = PipelineOverrides()
      let keyed = Endpoint<JSONValue>(.get, "/").decoded(at: keyPath).decoding
      _ = try? pipeline.value(
        of: response, overrides: overrides, decoding: keyed, decoder: decoder, checkedUnder: nil)
      _ = try? pipeline.value(
        of: response, overrides: overrides, decoding: ResponseDecoding<JSONValue?>.json(),
        decoder: decoder, checkedUnder: nil)
      _ = try? pipeline.value(
        of: response, overrides: overrides, decoding: ResponseDecoding<String>.string,
        decoder: decoder, checkedUnder: nil)
      _ = try? pipeline.value(
        of: response, overrides: overrides, decoding: ResponseDecoding<Data>.data,
        decoder: decoder, checkedUnder: nil)
      // And inside the chain: the stages under a plan, the verdict left on the response.
      let plan = ResponseValidationPlan(pipeline: pipeline, overrides: overrides)
      if let checked = try? pipeline.check(response, under: plan) {
        _ = try? pipeline.value(
          of: checked, overrides: overrides, decoding: keyed, decoder: decoder,
          checkedUnder: plan.identity)
      }
    }
  }
  return 0
}

/// Runs the scanner directly and checks what it returns.
private func scan(_ body: Data, keyPath: String) {
  let paths = [keyPath, "code", "msg", "data.items"].map {
    $0.split(separator: ".", omittingEmptySubsequences: false)
  }
  let ranges: [Range<Int>?]
  do {
    ranges = try JSONScanner.locate(paths, in: body)
  } catch {
    // Foundation accepting an object the scanner rejects is a disagreement, unless the
    // nesting passes the scanner's documented limit or the text is not UTF-8 (Foundation also
    // reads UTF-16 and UTF-32, which hold NUL bytes or start with a UTF-16 byte order mark).
    let nesting = body.lazy.filter { $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "{") }.count
    let mayBeUTF16 = body.contains(0) || body.first == 0xFE || body.first == 0xFF
    if nesting < JSONScanner.maximumDepth, !mayBeUTF16,
      let object = try? JSONSerialization.jsonObject(with: body), object is [String: Any]
    {
      fatalError("scanner rejected an object JSONSerialization accepts: \(error)")
    }
    return
  }
  guard ranges.count == paths.count else { fatalError("wrong number of ranges") }
  for range in ranges {
    guard let range else { continue }
    guard !range.isEmpty, range.lowerBound >= body.startIndex, range.upperBound <= body.endIndex
    else { fatalError("range \(range) outside the body \(body.indices)") }
    let kind = JSONScanner.kind(of: range, in: body)
    if kind == .string, JSONScanner.string(at: range, in: body) == nil {
      fatalError("a string the scanner validated does not decode")
    }
    _ = JSONScanner.scalarText(at: range, in: body)
  }
}
