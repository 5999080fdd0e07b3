import Foundation

/// The ordered checks every endpoint response passes after the middleware chain and before
/// its value is decoded: HTTP status, business envelope, your own stages.
///
/// ```swift
/// // Accept 2xx, then require {"code": 0, "msg": …, "data": …} and decode `data`.
/// let client = Client(baseURL: base, transport: transport, pipeline: .envelope(.codeZero))
///
/// // Or spell the stages out and add your own.
/// let pipeline = ResponsePipeline([StatusStage(), SignatureStage(key: key),
///                                  EnvelopeStage(.statusOK)])
/// ```
///
/// An endpoint may replace the whole pipeline (``Endpoint/pipeline(_:)``), or change the
/// accepted statuses (``Endpoint/accepting(_:)``) or the envelope rule
/// (``Endpoint/envelope(_:)``) for itself only.
///
/// When the status stage rejects a response whose body carries a business envelope (a 400
/// with `{"code": 1001, "msg": "Phone number invalid"}`), the error keeps kind
/// ``CourierError/Kind/httpStatus`` but gains the envelope's code and message, and a 4xx
/// error's reason is the server's message.
public struct ResponsePipeline: Sendable {
  /// The stages, run in order.
  public var stages: [any ResponseStage]
  /// The largest body that is decoded as JSON or text, in bytes; larger bodies fail with
  /// ``CourierError/Kind/bodyTooLarge``. Default 32 MiB (33,554,432 bytes).
  public var maximumDecodedBodySize: Int

  /// The default limit on decoded bodies: 32 MiB.
  public static let defaultMaximumDecodedBodySize = 32 * 1024 * 1024

  /// Creates a pipeline from stages.
  public init(
    _ stages: [any ResponseStage],
    maximumDecodedBodySize: Int = ResponsePipeline.defaultMaximumDecodedBodySize
  ) {
    self.stages = stages
    self.maximumDecodedBodySize = maximumDecodedBodySize
  }

  /// Accept `200..<300`, no envelope.
  public static let standard = ResponsePipeline([StatusStage()])

  /// Accept `200..<300`, then check a business envelope and decode its payload.
  public static func envelope(_ rule: EnvelopeRule) -> ResponsePipeline {
    ResponsePipeline([StatusStage(), EnvelopeStage(rule)])
  }

  /// The envelope rule this pipeline applies, after an endpoint's override.
  func envelopeRule(_ overrides: PipelineOverrides) -> EnvelopeRule? {
    if let override = overrides.envelope { return override }
    for stage in stages {
      if let envelope = stage as? EnvelopeStage { return envelope.rule }
    }
    return nil
  }

  /// Runs the stages and decodes the value.
  func run<Value>(
    _ response: Response, overrides: PipelineOverrides, decoding: ResponseDecoding<Value>,
    decoder: JSONDecoder
  ) throws -> Value {
    var context = ResponseContext(
      response: response, overrides: overrides, maximumDecodedBodySize: maximumDecodedBodySize)
    for stage in effectiveStages(overrides) {
      do {
        try stage.process(&context)
      } catch {
        var failure = CourierError(error, request: response.request, stage: stage.name)
        if failure.response == nil { failure.response = response }
        if failure.kind == .httpStatus, failure.code == nil,
          response.body.count <= maximumDecodedBodySize,
          let rule = envelopeRule(overrides),
          let verdict = try? rule.evaluate(response), !verdict.isSuccess
        {
          failure.code = verdict.code
          failure.serverMessage = verdict.message
        }
        throw failure
      }
    }
    do {
      return try decoding.decode(context, decoder)
    } catch {
      var failure = CourierError(error, request: response.request, stage: "decoding")
      if failure.response == nil { failure.response = response }
      throw failure
    }
  }

  /// The stages with an endpoint's envelope override applied.
  private func effectiveStages(_ overrides: PipelineOverrides) -> [any ResponseStage] {
    guard let override = overrides.envelope else { return stages }
    var result = stages.filter { !($0 is EnvelopeStage) }
    if let rule = override {
      let position = result.lastIndex { $0 is StatusStage }.map { $0 + 1 } ?? 0
      result.insert(EnvelopeStage(rule), at: position)
    }
    return result
  }
}

/// One check or transformation a ``ResponsePipeline`` applies to each endpoint response.
///
/// ## When to use it
/// For rules about the response itself that hold for many endpoints: a signature header that
/// must verify, a maintenance flag, a custom envelope. Use ``Middleware`` instead when the rule
/// needs to resend the request or change it.
///
/// ## Built-in stages
/// - ``StatusStage``: the HTTP status must be in an accepted set (default `200..<300`).
/// - ``EnvelopeStage``: the business envelope (`{"code": 0, "msg": …, "data": …}`) must say
///   success; its payload becomes what is decoded.
///
/// ## Writing your own
/// Throw a ``CourierError`` (or any error, which becomes kind
/// ``CourierError/Kind/transport`` with your stage's ``name``) to reject the response; set
/// ``ResponseContext/payload`` to change what gets decoded.
///
/// ```swift
/// struct SignatureStage: ResponseStage {
///   let key: SymmetricKey
///   func process(_ context: inout ResponseContext) throws {
///     guard let signature = context.response.headers["X-Signature"],
///           verify(signature, context.response.body, key) else {
///       throw CourierError(kind: .badResponse, debugMessage: "bad signature")
///     }
///   }
/// }
/// let pipeline = ResponsePipeline([StatusStage(), SignatureStage(key: key)])
/// ```
public protocol ResponseStage: Sendable {
  /// A short name for ``CourierError/stage`` and debugging; defaults to the type's name.
  var name: String { get }
  /// Checks the response, or changes what will be decoded; throws to reject it.
  func process(_ context: inout ResponseContext) throws
}

extension ResponseStage {
  /// The type's name.
  public var name: String { String(describing: Self.self) }
}

/// What a ``ResponseStage`` sees and may change.
public struct ResponseContext: Sendable {
  /// The response as it left the middleware chain.
  public let response: Response
  /// The endpoint's changes to the built-in stages.
  public let overrides: PipelineOverrides
  /// The bytes that will be decoded: the whole body at first, the envelope's payload after an
  /// ``EnvelopeStage``.
  public var payload: Data
  /// Whether the payload was required to be at a key that is absent (`data` missing); decoding
  /// a non-optional value then fails.
  public var payloadIsMissing = false
  /// Whether ``payload`` was cut from inside a JSON document (so a JSON string payload is
  /// quoted).
  public var payloadIsJSONMember = false
  /// The envelope's message on success, when it has one.
  public var envelopeMessage: String?
  /// The largest body decoded as JSON or text (see
  /// ``ResponsePipeline/maximumDecodedBodySize``).
  public let maximumDecodedBodySize: Int

  /// Creates a context for `response`.
  public init(
    response: Response, overrides: PipelineOverrides = PipelineOverrides(),
    maximumDecodedBodySize: Int = ResponsePipeline.defaultMaximumDecodedBodySize
  ) {
    self.response = response
    self.overrides = overrides
    self.payload = response.body
    self.maximumDecodedBodySize = maximumDecodedBodySize
  }

  /// Whether the response may have an empty body: 204, 205, 304, or a `HEAD` request.
  public var mayHaveEmptyBody: Bool {
    [204, 205, 304].contains(response.status) || response.request.method == .head
  }

  /// Throws ``CourierError/Kind/bodyTooLarge`` when the body exceeds the decoding limit.
  func checkDecodableSize() throws {
    guard response.body.count <= maximumDecodedBodySize else {
      throw CourierError(
        kind: .bodyTooLarge,
        debugMessage: "response body of \(response.body.count) bytes is over the decoding limit"
          + " of \(maximumDecodedBodySize) bytes (ResponsePipeline.maximumDecodedBodySize)")
    }
  }
}

/// An endpoint's changes to the built-in stages of its client's pipeline.
public struct PipelineOverrides: Sendable {
  /// Statuses to accept instead of the ``StatusStage``'s.
  public var acceptedStatuses: AcceptedStatuses?
  /// `nil`: keep the pipeline's envelope rule; `.some(nil)`: no envelope check;
  /// `.some(rule)`: this rule instead.
  public var envelope: EnvelopeRule??

  /// No changes.
  public init() {}
}

/// A set of accepted HTTP statuses, as ranges.
public struct AcceptedStatuses: Sendable, Hashable {
  /// The accepted ranges.
  public var ranges: [ClosedRange<Int>]

  /// Accepts statuses in any of `ranges`.
  public init(_ ranges: [ClosedRange<Int>]) {
    self.ranges = ranges
  }

  /// Accepts exactly these statuses.
  public init(codes: Int...) {
    self.ranges = codes.map { $0...$0 }
  }

  /// `200...299`.
  public static let successful = AcceptedStatuses([200...299])

  /// Whether `status` is accepted.
  public func contains(_ status: Int) -> Bool {
    ranges.contains { $0.contains(status) }
  }
}

/// Rejects responses whose status is not accepted, with ``CourierError/Kind/httpStatus``.
///
/// For 429 and 503 the `Retry-After` wait is kept in ``CourierError/retryAfter`` and shown in
/// the reason.
public struct StatusStage: ResponseStage {
  /// The accepted statuses unless the endpoint overrides them.
  public var accepted: AcceptedStatuses

  /// Creates the stage; default `200...299`.
  public init(accepting accepted: AcceptedStatuses = .successful) {
    self.accepted = accepted
  }

  /// `"status"`.
  public var name: String { "status" }

  /// Throws when the status is not accepted.
  public func process(_ context: inout ResponseContext) throws {
    let accepted = context.overrides.acceptedStatuses ?? accepted
    let status = context.response.status
    guard !accepted.contains(status) else { return }
    var error = CourierError(
      kind: .httpStatus,
      debugMessage: "status \(status) is not accepted (\(accepted.ranges.map { "\($0)" }))",
      request: context.response.request, response: context.response,
      attempts: context.response.attempts, stage: name)
    if let header = context.response.headers[.retryAfter] {
      error.retryAfter = RetryAfter.parse(header)
    }
    throw error
  }
}
