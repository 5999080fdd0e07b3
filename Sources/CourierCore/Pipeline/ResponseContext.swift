import Foundation

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
    self.maximumDecodedBodySize = max(0, maximumDecodedBodySize)
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
