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
///
/// ## The three places a pipeline acts
/// 1. **When the request is built.** ``Client`` turns an endpoint into a request that carries
///    the endpoint's pipeline and overrides as a ``ResponseValidationPlan``
///    (``ResponseValidationAttribute``).
/// 2. **Inside the middleware chain.** ``ResponseValidation`` runs the stages on the response
///    the layers below it returned and leaves their verdict on it, so middleware outside it
///    see a rejected response as a thrown ``CourierError`` (retry on 503, auth refresh on 401).
/// 3. **After the chain.** ``Client`` decodes the value from that verdict when it is the one
///    the request's own plan produced and nothing changed the response since; otherwise it
///    runs the stages again first, on the response as it left the chain.
///
/// A JSON body in a legacy charset that a stage or the decoder could not read is tried once
/// more, re-encoded as UTF-8 (`JSONCharset`), in both places the stages run.
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

  /// Runs the stages: the status and envelope checks and any stage of your own. A failure is
  /// a ``CourierError`` naming the stage; an error status whose body holds a failing envelope
  /// carries its code and message.
  private func validate(
    _ response: Response, overrides: PipelineOverrides
  ) throws -> ResponseContext {
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
  private func decode<Value>(
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

// MARK: - The pipeline's entry points inside and after the chain

extension ResponsePipeline {
  /// Inside the chain (``ResponseValidation``): runs the stages of `plan` on `response` and
  /// returns it carrying their verdict — re-encoded as UTF-8 when that is what let the stages
  /// pass (see `JSONCharset`).
  func check(_ response: Response, under plan: ResponseValidationPlan) throws -> Response {
    try withCharsetRetry(response) { response in
      var checked = response
      let context = try validate(response, overrides: plan.overrides)
      checked.validated = ValidatedPayload(context, plan: plan.identity)
      return checked
    }
  }

  /// After the chain (``Client``): the value of `response` for an endpoint with these
  /// `overrides` and this `decoding`. Reuses the verdict ``check(_:under:)`` left on the
  /// response when it was found under `plan` — the plan the client put on the request it sent
  /// for this very call — and the response has not changed since; otherwise the stages run
  /// here first.
  func value<Value>(
    of response: Response, overrides: PipelineOverrides, decoding: ResponseDecoding<Value>,
    decoder: JSONDecoder, checkedUnder plan: UInt64?
  ) throws -> Value {
    try withCharsetRetry(response) { response in
      let context: ResponseContext
      if let plan, let verdict = response.validated, verdict.plan == plan {
        context = verdict.context(
          for: response, overrides: overrides, maximumDecodedBodySize: maximumDecodedBodySize)
      } else {
        context = try validate(response, overrides: overrides)
      }
      return try decode(context, decoding: decoding, decoder: decoder)
    }
  }

  /// Runs `body` on `response`; when it throws and the response is a JSON body in a legacy
  /// charset (see `JSONCharset`), once more on the body re-encoded as UTF-8, whose failure
  /// then stands. A re-encoded response carries no verdict: its body changed.
  private func withCharsetRetry<Result>(
    _ response: Response, _ body: (Response) throws -> Result
  ) throws -> Result {
    do {
      return try body(response)
    } catch {
      guard
        let reencoded = JSONCharset.reencodedAsUTF8(response, limit: maximumDecodedBodySize)
      else { throw error }
      return try body(reencoded)
    }
  }
}
