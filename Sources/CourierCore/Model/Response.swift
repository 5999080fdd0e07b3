import Foundation

/// An HTTP response as it comes back through the middleware chain.
public struct Response: Sendable {
  /// The status code, for example `200`.
  public var status: Int
  /// The header fields as received.
  public var headers: HTTPHeaders
  /// The body bytes, after any decoding the transport or a middleware applied.
  public var body: Data
  /// The request as it was finally sent (after every middleware changed it).
  public var request: Request
  /// How many times the request went to a transport to produce this response (1 without
  /// retries). Set by retrying middleware.
  public var attempts: Int
  /// When sending started and how long it took, as measured by the ``Client``.
  public var timings: Timings
  /// Where the transport wrote the body instead of ``body``, for a request with a
  /// ``DownloadAttribute`` answered `2xx`; `nil` otherwise.
  public var downloadedFile: DownloadedFile?
  /// What ``ResponseValidation`` found when the response pipeline ran inside the chain, so the
  /// body is scanned once; `nil` when it did not run.
  var validated: ValidatedPayload?

  /// Creates a response.
  public init(
    status: Int,
    headers: HTTPHeaders = HTTPHeaders(),
    body: Data = Data(),
    request: Request,
    attempts: Int = 1,
    timings: Timings = Timings()
  ) {
    self.status = status
    self.headers = headers
    self.body = body
    self.request = request
    self.attempts = attempts
    self.timings = timings
  }

  /// Whether the status is in `200..<300`.
  public var isSuccess: Bool { (200..<300).contains(status) }

  /// The body decoded as UTF-8, or `nil` when it is not valid UTF-8.
  public var bodyText: String? { String(bytes: body, encoding: .utf8) }

  /// Timing facts about one logical request.
  public struct Timings: Sendable, Hashable {
    /// The total time from entering the client to the response leaving the chain.
    public var total: Duration?

    /// Creates timings.
    public init(total: Duration? = nil) {
      self.total = total
    }
  }
}

/// The part of a validated ``ResponseContext`` that decoding needs, kept on the response.
struct ValidatedPayload: Sendable {
  var payload: Data
  var payloadIsMissing: Bool
  var payloadIsJSONMember: Bool
  var envelopeMessage: String?
  /// The body size it was computed from: a middleware that replaced the body since makes it
  /// stale.
  var bodyCount: Int

  init(_ context: ResponseContext) {
    payload = context.payload
    payloadIsMissing = context.payloadIsMissing
    payloadIsJSONMember = context.payloadIsJSONMember
    envelopeMessage = context.envelopeMessage
    bodyCount = context.response.body.count
  }

  /// The context for `response`, or `nil` when the body changed since validation.
  func context(
    for response: Response, pipeline: ResponsePipeline, overrides: PipelineOverrides
  )
    -> ResponseContext?
  {
    guard response.body.count == bodyCount else { return nil }
    var context = ResponseContext(
      response: response, overrides: overrides,
      maximumDecodedBodySize: pipeline.maximumDecodedBodySize)
    context.payload = payload
    context.payloadIsMissing = payloadIsMissing
    context.payloadIsJSONMember = payloadIsJSONMember
    context.envelopeMessage = envelopeMessage
    return context
  }
}
