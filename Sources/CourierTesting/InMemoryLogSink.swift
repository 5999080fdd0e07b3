import CourierCore
import Synchronization

/// A ``LogSink`` that keeps every event in memory, for tests that assert on what was logged
/// — and on what was not (a secret must never appear).
///
/// Copies share one store, so keep a copy and hand another to the middleware:
///
/// ```swift
/// let sink = InMemoryLogSink()
/// let client = Client(baseURL: base, transport: stub,
///                     middleware: [LoggingMiddleware(level: .body, sink: sink)])
/// _ = try await client.send(Endpoint<Data>(.get, "me"))
/// #expect(!sink.text.contains("s3cret"))
/// ```
public struct InMemoryLogSink: LogSink {
  private final class Store: Sendable {
    let events = Mutex<[LogEvent]>([])
  }

  /// Default ``LogSeverity/debug``: keeps everything the middleware builds.
  public var logLevel: LogSeverity
  /// Added to every event's metadata as it is stored.
  public var metadata: [String: String]
  private let store = Store()

  /// Creates an empty sink.
  public init(logLevel: LogSeverity = .debug, metadata: [String: String] = [:]) {
    self.logLevel = logLevel
    self.metadata = metadata
  }

  /// Stores `event`.
  public func log(_ event: LogEvent) {
    var event = event
    event.metadata.merge(metadata) { own, _ in own }
    store.events.withLock { $0.append(event) }
  }

  /// The events so far, in order.
  public var events: [LogEvent] { store.events.withLock { $0 } }

  /// Every event as ``StandardErrorLogSink`` and ``JSONLinesLogSink`` would write it, one
  /// after the other: search this for strings that must or must not have been logged.
  public var text: String {
    events.map {
      StandardErrorLogSink.line(for: $0) + "\n" + JSONLinesLogSink.line(for: $0)
    }.joined(separator: "\n")
  }

  /// Forgets every event.
  public func removeAll() {
    store.events.withLock { $0.removeAll() }
  }
}
