/// Where ``LoggingMiddleware`` writes its events: stderr, a log pipeline, swift-log, a test.
///
/// ## When to use it
/// Pick a built-in sink to see what Courier sends, or write one to feed your own logging
/// system. The middleware decides what an event holds (and hides credentials first); a sink
/// only decides where it goes and how it looks.
///
/// ## Built-in sinks
/// - ``StandardErrorLogSink``: one human-readable line per event on stderr.
/// - ``JSONLinesLogSink``: one JSON object per line, for log pipelines.
/// - `InMemoryLogSink` (module `CourierTesting`): keeps events for tests to inspect.
///
/// ## Writing your own
/// Like swift-log's `LogHandler`, a sink is a small value with a level and metadata. Events
/// below ``logLevel`` are never built; ``metadata`` is added to every event. The lines
/// that forward Courier's events to swift-log:
///
/// ```swift
/// import Courier
/// import Logging
///
/// struct SwiftLogSink: LogSink {
///   var logger: Logger
///   var logLevel: LogSeverity = .info
///   var metadata: [String: String] = [:]
///   func log(_ event: LogEvent) {
///     let level: Logger.Level = event.severity == .error ? .error : .info
///     let fields = event.metadata.merging(metadata) { event, _ in event }
///     logger.log(level: level, "\(event.message)", metadata: fields.mapValues { .string($0) })
///   }
/// }
/// ```
public protocol LogSink: Sendable {
  /// Events less severe than this are not delivered (nor built).
  var logLevel: LogSeverity { get set }
  /// Fields added to every event (service name, environment); an event's own fields win.
  var metadata: [String: String] { get set }
  /// Writes one event. Called from the request's task: keep it fast and never throw.
  func log(_ event: LogEvent)
}
