import Foundation

/// The part of a validated ``ResponseContext`` that decoding needs, kept on the response.
///
/// It holds for the response that carries it (``Response`` drops it when a field the stages
/// read changes) and for one set of checks only: the plan it names, which a ``Client``
/// compares with the plan it put on the request it sent for the endpoint being decoded.
struct ValidatedPayload: Sendable {
  var payload: Data
  var payloadIsMissing: Bool
  var payloadIsJSONMember: Bool
  var envelopeMessage: String?
  /// The ``ResponseValidationPlan/identity`` of the plan whose checks found it.
  var plan: UInt64

  init(_ context: ResponseContext, plan: UInt64) {
    payload = context.payload
    payloadIsMissing = context.payloadIsMissing
    payloadIsJSONMember = context.payloadIsJSONMember
    envelopeMessage = context.envelopeMessage
    self.plan = plan
  }

  /// The validated context for `response`, the response that carries this payload.
  func context(
    for response: Response, overrides: PipelineOverrides, maximumDecodedBodySize: Int
  ) -> ResponseContext {
    var context = ResponseContext(
      response: response, overrides: overrides, maximumDecodedBodySize: maximumDecodedBodySize)
    context.payload = payload
    context.payloadIsMissing = payloadIsMissing
    context.payloadIsJSONMember = payloadIsJSONMember
    context.envelopeMessage = envelopeMessage
    return context
  }
}
