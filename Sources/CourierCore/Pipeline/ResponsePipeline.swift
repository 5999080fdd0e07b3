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
/// error's reason is the server's message when ``ReasonCatalog/serverMessages`` allows it
/// (the default does).
public struct ResponsePipeline: Sendable {
  /// The stages, run in order.
  public var stages: [any ResponseStage]
  /// The largest body that is decoded as JSON or text, in bytes; larger bodies fail with
  /// ``CourierError/Kind/bodyTooLarge``. Default 32 MiB (33,554,432 bytes); a negative value
  /// counts as 0.
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
    try decode(validate(response, overrides: overrides), decoding: decoding, decoder: decoder)
  }

  /// Runs the stages: the status and envelope checks and any stage of your own. A failure is
  /// a ``CourierError`` naming the stage; an error status whose body holds a failing envelope
  /// carries its code and message.
  func validate(_ response: Response, overrides: PipelineOverrides) throws -> ResponseContext {
    var context = ResponseContext(
      response: response, overrides: overrides, maximumDecodedBodySize: maximumDecodedBodySize)
    for stage in effectiveStages(overrides) {
      do {
        try stage.process(&context)
      } catch {
        var failure = CourierError(
          error, request: response.request, stage: stage.name, otherwise: .badResponse)
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
    return context
  }

  /// Decodes the value from a validated context.
  func decode<Value>(
    _ context: ResponseContext, decoding: ResponseDecoding<Value>, decoder: JSONDecoder
  ) throws -> Value {
    do {
      return try decoding.decode(context, decoder)
    } catch {
      var failure = CourierError(
        error, request: context.response.request, stage: "decoding", otherwise: .decoding)
      if failure.response == nil { failure.response = context.response }
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
