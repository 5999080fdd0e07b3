import CourierCore
import Synchronization

/// A ``RequestTracer`` that keeps every span, for tests of what a client records.
///
/// Copies share one store. A span's context continues its parent's trace (a new span id),
/// or starts a new trace without a parent.
///
/// ```swift
/// let tracer = InMemoryTracer()
/// let client = Client(baseURL: base, transport: stub, tracer: tracer)
/// _ = try await client.send(Endpoint<Data>(.get, "me"))
/// #expect(tracer.spans.map(\.name) == ["GET attempt", "GET"])  // in the order they ended
/// ```
public struct InMemoryTracer: RequestTracer {
  /// A span as the tracer recorded it.
  public final class Span: TraceSpan, CustomStringConvertible {
    private struct State {
      var attributes: [String: TraceAttributeValue] = [:]
      var errors: [CourierError] = []
      var status = TraceSpanStatus.unset
      var ended = false
    }

    /// The name it was started with.
    public let name: String
    /// Its kind.
    public let kind: TraceSpanKind
    /// The context of its parent; `nil` for a root.
    public let parent: TraceContext?
    /// Its own context.
    public let context: TraceContext
    private let state = Mutex(State())
    private let onEnd: @Sendable (Span) -> Void

    init(
      name: String, kind: TraceSpanKind, parent: TraceContext?,
      onEnd: @escaping @Sendable (Span) -> Void
    ) {
      self.name = name
      self.kind = kind
      self.parent = parent
      self.context = parent?.child() ?? TraceContext.random()
      self.onEnd = onEnd
    }

    /// Its attributes so far.
    public var attributes: [String: TraceAttributeValue] { state.withLock { $0.attributes } }
    /// The errors recorded on it.
    public var errors: [CourierError] { state.withLock { $0.errors } }
    /// Its status.
    public var status: TraceSpanStatus { state.withLock { $0.status } }
    /// Whether it ended.
    public var isEnded: Bool { state.withLock { $0.ended } }

    /// Sets an attribute.
    public func setAttribute(_ key: String, _ value: TraceAttributeValue) {
      state.withLock { $0.attributes[key] = value }
    }

    /// Records an error.
    public func recordError(_ error: CourierError) {
      state.withLock { $0.errors.append(error) }
    }

    /// Sets the status.
    public func setStatus(_ status: TraceSpanStatus) {
      state.withLock { $0.status = status }
    }

    /// Ends the span; a second end is ignored.
    public func end() {
      let first = state.withLock { state -> Bool in
        defer { state.ended = true }
        return !state.ended
      }
      if first { onEnd(self) }
    }

    /// `name [span id ← parent id] attributes`.
    public var description: String {
      "\(name) [\(context.parentID) ← \(parent?.parentID ?? "root")] \(attributes)"
    }
  }

  private final class Store: Sendable {
    let started = Mutex<[Span]>([])
    let ended = Mutex<[Span]>([])
  }

  private let store = Store()

  /// Creates an empty tracer.
  public init() {}

  /// Starts and keeps a span.
  public func startSpan(
    _ name: String, kind: TraceSpanKind, parent: TraceContext?
  ) -> any TraceSpan {
    let store = store
    let span = Span(name: name, kind: kind, parent: parent) { span in
      store.ended.withLock { $0.append(span) }
    }
    store.started.withLock { $0.append(span) }
    return span
  }

  /// Every span started, in the order they started.
  public var spans: [Span] { store.started.withLock { $0 } }

  /// Every span ended, in the order they ended.
  public var endedSpans: [Span] { store.ended.withLock { $0 } }

  /// The spans whose parent is `span`, in the order they started.
  public func children(of span: Span) -> [Span] {
    spans.filter { $0.parent == span.context }
  }

  /// Forgets every span.
  public func removeAll() {
    store.started.withLock { $0.removeAll() }
    store.ended.withLock { $0.removeAll() }
  }
}
