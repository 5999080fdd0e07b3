import Foundation

/// One thing ``LoggingMiddleware`` reports: a message line and named fields, with every
/// credential already hidden.
public struct LogEvent: Sendable, Hashable {
  /// How severe it is.
  public var severity: LogSeverity
  /// One line for people: `GET https://api.test/users?token=*** → 200 (12 ms)`.
  public var message: String
  /// Named fields: `method`, `url`, `status`, `duration_ms`, `attempt`, `request_id`,
  /// `request_bytes`, `response_bytes`, `error_kind`, `timings` (the transport's phases, in
  /// short), and at higher levels `request_headers`, `response_headers`, `remote_address`,
  /// `request_body`, `response_body`.
  public var metadata: [String: String]
  /// When it happened.
  public var date: Date

  /// Creates an event.
  public init(
    severity: LogSeverity, message: String, metadata: [String: String] = [:], date: Date = Date()
  ) {
    self.severity = severity
    self.message = message
    self.metadata = metadata
    self.date = date
  }
}
