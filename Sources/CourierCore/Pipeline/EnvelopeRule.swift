import Foundation

/// Where a server's business envelope keeps its code, its message and its payload, and which
/// codes mean success.
///
/// Many APIs answer `200 OK` for failures too and put the outcome in the body:
/// `{"code": 40101, "msg": "Token expired", "data": null}` or
/// `{"status": "error", "error": "Post ID '61355' not found."}`. A rule describes that shape
/// as a value, so an ``EnvelopeStage`` can turn failures into ``CourierError/Kind/business``
/// errors carrying the server's code and message, and hand the payload to the decoder.
///
/// ```swift
/// // {"code": 0, "msg": "ok", "data": {...}}
/// let client = Client(baseURL: base, transport: transport, pipeline: .envelope(.codeZero))
///
/// // {"meta": {"status": 200, "message": "..."}, "result": {...}}
/// let rule = EnvelopeRule(code: "meta.status", success: [200],
///                         message: ["meta.message"], payload: "result")
/// ```
///
/// Paths are dotted member names from the root object. When a key appears twice, the first
/// member counts, as in `JSONDecoder`.
///
/// **Success** is decided by the success codes alone: the code must have the type and exact
/// value of one of them (numbers by exact decimal value, so codes beyond 2^53 never round;
/// see ``EnvelopeCode``). `"0"` counts as `0` only when ``matchesAcrossTypes`` is on.
///
/// **Every other code is a ``CourierError/Kind/business`` failure** carrying the server's
/// code and message: another number, a string (`"E1001"`), a boolean, `null`, an object or an
/// array. The error's `code` is the text as written: a string without its quotes, `null` as
/// `"null"`, an object or array as its JSON text. When only the type differs from the success
/// codes, `debugDescription` says so. The server's message is what the user needs, so a code
/// of an unexpected type must not hide it.
///
/// A **missing code** and a body that is **not a JSON object** are
/// ``CourierError/Kind/decoding`` errors: without a code nothing says whether the request
/// succeeded, and such a body is usually not this kind of envelope at all (a gateway's error
/// page, or an endpoint that needs another rule), which is a mismatch for developers to see,
/// not a refusal from the server.
public struct EnvelopeRule: Sendable {
  /// The dotted path of the business code, such as `"code"` or `"meta.status"`.
  public var codePath: String { didSet { splitPaths() } }
  /// The codes that mean success.
  public var successCodes: [EnvelopeCode]
  /// Paths of the message, tried in order; the first string present wins.
  public var messagePaths: [String] { didSet { splitPaths() } }
  /// The path of the payload to decode, or `nil` to decode the whole body.
  public var payloadPath: String? { didSet { splitPaths() } }
  /// Whether a string code may match a number success value of the same decimal value
  /// (`"0"`, `"00"` or `"0.0"` matches `0`; spaces, hex and `inf` never do), or a boolean
  /// with the same text, and the other way round. Default `false`.
  public var matchesAcrossTypes: Bool

  private var evaluator: (@Sendable (Response) throws -> EnvelopeVerdict)?
  /// The code, message and payload paths split at dots once, not on every response: code
  /// first, then the messages, then the payload when there is one.
  private var keyPaths: [[Substring]] = []

  /// Creates a rule from paths and success codes.
  public init(
    code: String, success: [EnvelopeCode], message: [String], payload: String?,
    matchesAcrossTypes: Bool = false
  ) {
    self.codePath = code
    self.successCodes = success
    self.messagePaths = message
    self.payloadPath = payload
    self.matchesAcrossTypes = matchesAcrossTypes
    splitPaths()
  }

  private mutating func splitPaths() {
    let split = { (path: String) in path.split(separator: ".", omittingEmptySubsequences: false) }
    keyPaths = [split(codePath)] + messagePaths.map(split) + (payloadPath.map { [split($0)] } ?? [])
  }

  /// `{"code": 0, "msg": "…", "data": …}`: success when `code` is `0`; the message is `msg` or
  /// `message`; the payload is `data`.
  public static let codeZero = EnvelopeRule(
    code: "code", success: [0], message: ["msg", "message"], payload: "data")

  /// `{"status": "ok", …}`: success when `status` is `"ok"`; the message is `error`,
  /// `message` or `msg`; the payload is the whole body (its other members).
  public static let statusOK = EnvelopeRule(
    code: "status", success: ["ok"], message: ["error", "message", "msg"], payload: nil)

  /// A rule computed by a closure, for envelopes paths cannot describe.
  ///
  /// ```swift
  /// let rule = EnvelopeRule.custom { response in
  ///   response.headers["X-Result"] == "fail"
  ///     ? .failure(code: response.headers["X-Code"], message: nil)
  ///     : .success(payload: nil)
  /// }
  /// ```
  public static func custom(
    _ evaluate: @escaping @Sendable (Response) throws -> EnvelopeVerdict
  ) -> EnvelopeRule {
    var rule = EnvelopeRule(code: "", success: [], message: [], payload: nil)
    rule.evaluator = evaluate
    return rule
  }

  /// Reads the envelope of `response`.
  ///
  /// - Returns: Success when the code is one of the success codes; a failure with the code
  ///   as written and the server's message for any other code, of any type.
  /// - Throws: ``CourierError`` of kind ``CourierError/Kind/decoding`` when the body is not a
  ///   JSON object or has no code.
  public func evaluate(_ response: Response) throws -> EnvelopeVerdict {
    if let evaluator { return try evaluator(response) }
    let body = response.body
    let ranges: [Range<Int>?]
    do {
      ranges = try JSONScanner.locate(keyPaths, in: body)
    } catch {
      throw Self.malformed(
        "body is not a JSON envelope: \(error)" + response.undecodedEncodingNote)
    }
    guard let codeRange = ranges[0] else {
      throw Self.malformed("envelope has no \(codePath.debugDescription)")
    }
    let message = messagePaths.indices.lazy.compactMap { index -> String? in
      guard let range = ranges[index + 1],
        JSONScanner.kind(of: range, in: body) == .string
      else { return nil }
      return JSONScanner.string(at: range, in: body)
    }.first
    let kind = JSONScanner.kind(of: codeRange, in: body)
    var code: EnvelopeCode?
    if kind == .number || kind == .string || kind == .bool,
      let text = JSONScanner.scalarText(at: codeRange, in: body)
    {
      code = EnvelopeCode(token: text, kind: kind)
    }
    guard let code,
      successCodes.contains(where: { $0.matches(code, acrossTypes: matchesAcrossTypes) })
    else {
      // The scanner validated the UTF-8 of the whole body.
      let text = code?.text ?? String(decoding: body[codeRange], as: UTF8.self)
      var verdict = EnvelopeVerdict.failure(code: text, message: message)
      verdict.detail = typeMismatch(code, kind: kind)
      return verdict
    }
    var verdict = EnvelopeVerdict.success(payload: nil)
    verdict.message = message
    verdict.code = code.text
    if payloadPath != nil {
      if let range = ranges[ranges.count - 1] {
        verdict.payload = body[range]
        verdict.payloadIsJSONMember = true
      } else {
        verdict.payloadIsMissing = true
      }
    }
    return verdict
  }

  /// A note for developers when the code's type differs from every success code's, so that a
  /// failure for `"0"` against `0` is not a riddle.
  private func typeMismatch(_ code: EnvelopeCode?, kind: JSONScanner.ValueKind) -> String? {
    guard !successCodes.isEmpty else { return nil }
    if let code, successCodes.contains(where: { $0.hasSameType(as: code) }) { return nil }
    let found =
      code?.typeName
      ?? (kind == .null ? "null" : kind == .object ? "an object" : "an array")
    let expected = Set(successCodes.map(\.typeName)).sorted().joined(separator: " or ")
    let comparable = code.map { $0.typeName == "a string" || $0.typeName == "a number" } ?? false
    let hint =
      comparable && !matchesAcrossTypes
      ? " (set matchesAcrossTypes to compare a string's value with a number)" : ""
    return "envelope \(codePath.debugDescription) is \(found), the rule's success codes are "
      + expected + hint
  }

  private static func malformed(_ message: String) -> CourierError {
    CourierError(kind: .decoding, debugMessage: message, stage: "envelope")
  }
}
