/// Rejects responses whose status is not accepted, with ``CourierError/Kind/httpStatus``.
///
/// For 429 and 503 the `Retry-After` wait is kept in ``CourierError/retryAfter`` and shown in
/// the reason. The wait is parsed by ``RetryAfter/parse(_:now:)``, so it is never more than
/// ``RetryAfter/maximumWait`` whatever the server sends; a malformed header is ignored.
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
