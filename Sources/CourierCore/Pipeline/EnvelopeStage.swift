import Foundation

/// Checks the business envelope with an ``EnvelopeRule``: a failure code throws
/// ``CourierError/Kind/business`` with the server's code and message; on success the payload
/// becomes what is decoded.
///
/// Empty bodies of 204, 205, 304 and `HEAD` responses pass without an envelope.
public struct EnvelopeStage: ResponseStage {
  /// The rule.
  public var rule: EnvelopeRule

  /// Creates the stage.
  public init(_ rule: EnvelopeRule) {
    self.rule = rule
  }

  /// `"envelope"`.
  public var name: String { "envelope" }

  /// Checks the envelope.
  public func process(_ context: inout ResponseContext) throws {
    if context.response.body.isEmpty && context.mayHaveEmptyBody { return }
    try context.checkDecodableSize()
    let verdict = try rule.evaluate(context.response)
    guard verdict.isSuccess else {
      throw CourierError(
        kind: .business,
        debugMessage: verdict.detail.map { "envelope reports failure; \($0)" }
          ?? "envelope reports failure",
        code: verdict.code, serverMessage: verdict.message,
        request: context.response.request, response: context.response,
        attempts: context.response.attempts, stage: name)
    }
    context.envelopeMessage = verdict.message
    if let payload = verdict.payload {
      context.payload = payload
      context.payloadIsJSONMember = verdict.payloadIsJSONMember
    }
    if verdict.payloadIsMissing {
      context.payload = Data()
      context.payloadIsMissing = true
    }
  }
}
