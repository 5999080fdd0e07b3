import Foundation

/// How an ``Endpoint`` turns the (possibly envelope-narrowed) response payload into its
/// `Value`.
///
/// The endpoint initialisers pick one from `Value`: JSON for `Decodable`, raw bytes for
/// `Data`, text in the response's charset for `String`, nothing for `Void`. Use ``custom(_:)`` for anything else.
public struct ResponseDecoding<Value: Sendable>: Sendable {
  let decode: @Sendable (ResponseContext, JSONDecoder) throws -> Value

  /// A decoding of your own from the pipeline's context and the client's decoder.
  public static func custom(
    _ decode: @escaping @Sendable (ResponseContext, JSONDecoder) throws -> Value
  ) -> Self {
    Self(decode: decode)
  }
}

extension ResponseDecoding where Value: Decodable {
  /// Decodes JSON with the client's `JSONDecoder`, from the payload or from the value at a
  /// dotted key path inside it.
  ///
  /// An empty payload, a missing key and `null` decode as `nil` when `Value` is optional and
  /// fail with ``CourierError/Kind/decoding`` otherwise.
  ///
  /// With a `JSONDecoder` at its default settings, Courier first decodes with a faster
  /// decoder of its own that gives the same values, and hands the body to `JSONDecoder`
  /// whenever it could disagree (<doc:ResponsePipelineAndEnvelopes> lists when); the value
  /// or error you get is then `JSONDecoder`'s. A model's `init(from:)` may therefore run
  /// twice for one body. Set `CodingUserInfoKey.courierJSONDecoderOnly` (or any other
  /// setting) on the decoder to decode with `JSONDecoder` alone.
  public static func json(at keyPath: String? = nil) -> Self {
    // Split once, when the endpoint is made, not for every response.
    let path = keyPath?.split(separator: ".", omittingEmptySubsequences: false)
    return Self { context, decoder in
      try context.checkDecodableSize()
      var payload = context.payload
      var missing = context.payloadIsMissing
      if let path, !missing {
        do {
          if let range = try JSONScanner.locate([path], in: payload)[0] {
            payload = payload[range]
          } else {
            missing = true
          }
        } catch {
          throw CourierError(
            kind: .decoding,
            debugMessage: "body is not a JSON object: \(error)"
              + context.response.undecodedEncodingNote)
        }
      }
      let isEmpty = payload.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
      if missing || isEmpty {
        if let optional = Value.self as? any OptionalDecodingSupport.Type,
          let none = optional.absentValue as? Value
        {
          return none
        }
        throw CourierError(
          kind: .decoding,
          debugMessage: missing
            ? "no value at \((keyPath ?? "the payload key").debugDescription) for \(Value.self)"
            : "empty body where \(Value.self) was expected")
      }
      // Courier's own decoder when it is sure to agree with JSONDecoder; else JSONDecoder.
      if let value = FastJSONDecoder.decode(Value.self, from: payload, like: decoder) {
        return value
      }
      do {
        return try decoder.decode(Value.self, from: payload)
      } catch {
        var message = "could not decode \(Value.self)"
        if case DecodingError.dataCorrupted(let corrupted) = error, corrupted.codingPath.isEmpty,
          let problem = FastJSONDecoder.numberProblem(Value.self, from: payload, like: decoder)
        {
          message +=
            ": the JSON is valid, but \(problem) (JSONDecoder says \"not valid JSON\" "
            + "for a number it cannot convert)"
        }
        throw CourierError(
          kind: .decoding, debugMessage: message + context.response.undecodedEncodingNote,
          underlying: error)
      }
    }
  }
}

extension ResponseDecoding where Value == Data {
  /// The payload bytes as they are.
  public static var data: Self {
    Self { context, _ in context.payload }
  }
}

extension ResponseDecoding where Value == String {
  /// The payload as text, in the charset the response's `Content-Type` names.
  ///
  /// - No `charset`: UTF-8. A byte order mark is dropped, and picks UTF-8 or UTF-16 over the
  ///   label, as browsers decode.
  /// - Supported: UTF-8, US-ASCII, ISO-8859-1 (latin1), UTF-16 (little-endian without a byte
  ///   order mark), UTF-16LE, UTF-16BE, GBK, GB2312 (decoded as GBK, its superset), GB18030,
  ///   Big5, Big5-HKSCS, Shift_JIS, EUC-JP, EUC-KR and windows-1252, under their usual labels.
  /// - A payload cut from a JSON envelope is JSON text, so UTF-8 whatever the label; a JSON
  ///   string there is unquoted.
  ///
  /// An empty payload is `""`. An unknown charset, and bytes that are not valid in the
  /// charset, fail with ``CourierError/Kind/decoding`` naming the charset
  /// (`"body is not valid GBK"`).
  public static var string: Self {
    Self { context, decoder in
      try context.checkDecodableSize()
      if context.payloadIsJSONMember {
        if context.payload.first == UInt8(ascii: "\"") {
          do {
            return try decoder.decode(String.self, from: context.payload)
          } catch {
            throw CourierError(
              kind: .decoding, debugMessage: "payload is not a JSON string", underlying: error)
          }
        }
        return try TextCharset.decode(context.payload, contentType: nil)
      }
      return try TextCharset.decode(
        context.payload, contentType: context.response.headers[.contentType])
    }
  }
}

extension ResponseDecoding where Value == Void {
  /// Ignores the body.
  public static var none: Self {
    Self { _, _ in () }
  }
}

/// Lets JSON decoding produce `nil` for an empty or missing optional payload.
protocol OptionalDecodingSupport {
  static var absentValue: Any { get }
}

extension Optional: OptionalDecodingSupport {
  static var absentValue: Any { Wrapped?.none as Any }
}
