import Foundation

/// Writes each event as one JSON object on its own line (JSON Lines), for log pipelines:
/// `{"date":"2026-11-30T16:40:00Z","level":"info","message":"…","metadata":{…}}`.
///
/// Lines go to a closure, so they can be appended to a file, sent to a collector, or kept:
///
/// ```swift
/// let sink = JSONLinesLogSink { line in print(line) }
/// ```
public struct JSONLinesLogSink: LogSink {
  /// Default ``LogSeverity/debug``: the middleware's level already decides what is built.
  public var logLevel: LogSeverity
  /// Added to every line's `metadata`.
  public var metadata: [String: String]
  private let write: @Sendable (String) -> Void

  /// Creates the sink; `write` receives each line without its line break. Default: standard
  /// output.
  public init(
    logLevel: LogSeverity = .debug, metadata: [String: String] = [:],
    write: @escaping @Sendable (String) -> Void = { print($0) }
  ) {
    self.logLevel = logLevel
    self.metadata = metadata
    self.write = write
  }

  /// Writes `event` as one JSON line.
  public func log(_ event: LogEvent) {
    write(Self.line(for: event, metadata: metadata))
  }

  private struct Line: Encodable {
    let date: String
    let level: String
    let message: String
    let metadata: [String: String]
  }

  /// The JSON line for `event`, keys sorted.
  public static func line(for event: LogEvent, metadata: [String: String] = [:]) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let line = Line(
      date: ISO8601DateFormatter.string(
        from: event.date, timeZone: .gmt, formatOptions: .withInternetDateTime),
      level: event.severity.description, message: event.message,
      metadata: event.metadata.merging(metadata) { own, _ in own })
    guard let data = try? encoder.encode(line) else {
      return #"{"level":"error","message":"log event could not be encoded"}"#
    }
    return String(decoding: data, as: UTF8.self)
  }
}
