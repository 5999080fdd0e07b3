/// Starts the spans a ``Client`` records for its requests: shaped like
/// swift-distributed-tracing's `Tracer`, so an adapter to it (or to OpenTelemetry) is a few
/// lines.
///
/// ## When to use it
/// Give a client a tracer (`Client(…, tracer: myTracer)`, or the same parameter of
/// `Client.standard`) when your service exports traces. For each logical request the client
/// starts one span, and under it one span per attempt, with OpenTelemetry's HTTP client
/// attributes:
///
/// | attribute | on | value |
/// | --- | --- | --- |
/// | `http.request.method` | both | `GET`, `POST`, … |
/// | `server.address` | both | the host |
/// | `server.port` | both | the port, explicit or the scheme's |
/// | `url.full` | both | the URL with user info and secret query values as `***` (``Redaction/standard``) |
/// | `http.response.status_code` | both | when a response came |
/// | `error.type` | both | the ``CourierError/Kind`` name, or the status for a status ≥ 400 |
/// | `http.request.resend_count` | attempts after the first | `1`, `2`, … |
///
/// The request span's parent is ``TraceContext/current`` (the context your service set for
/// the request it is handling), else the request's ``RequestIDAttribute`` or its
/// `traceparent` header; with none the span starts a trace. Each attempt goes out with
/// `traceparent` naming its attempt span, so the server's span is the attempt span's child.
///
/// ## A built-in tracer
/// `InMemoryTracer` (module `CourierTesting`) keeps every span for tests.
///
/// ## Writing your own
/// Return a ``TraceSpan`` whose ``TraceSpan/context`` is the span's W3C context: the
/// parent's trace id (when there is a parent) and an id of its own. The Adapters article has
/// the tracer that records through swift-distributed-tracing; one that prints its spans:
///
/// ```swift
/// import Courier
///
/// final class PrintedSpan: TraceSpan {
///   let name: String
///   let context: TraceContext
///
///   init(name: String, context: TraceContext) {
///     self.name = name
///     self.context = context
///   }
///
///   func setAttribute(_ key: String, _ value: TraceAttributeValue) { print(name, key, value) }
///   func recordError(_ error: CourierError) { print(name, "failed:", error.kind) }
///   func setStatus(_ status: TraceSpanStatus) {}
///   func end() { print(name, "ended", context.traceparent) }
/// }
///
/// struct PrintingTracer: RequestTracer {
///   func startSpan(_ name: String, kind: TraceSpanKind, parent: TraceContext?) -> any TraceSpan {
///     PrintedSpan(name: name, context: parent?.child() ?? .random())
///   }
/// }
/// ```
public protocol RequestTracer: Sendable {
  /// Starts a span named `name` of `kind` under `parent` (`nil`: a new trace).
  func startSpan(_ name: String, kind: TraceSpanKind, parent: TraceContext?) -> any TraceSpan
}

/// A span a ``RequestTracer`` started: swift-distributed-tracing's `Span`, reduced to what
/// the client uses.
///
/// The client calls it from the request's task, one call at a time, and ends it exactly once.
public protocol TraceSpan: AnyObject, Sendable {
  /// The span's W3C context: what the `traceparent` of an attempt sends.
  var context: TraceContext { get }
  /// Sets an attribute (an OpenTelemetry name such as `http.request.method`).
  func setAttribute(_ key: String, _ value: TraceAttributeValue)
  /// Records an error event on the span.
  func recordError(_ error: CourierError)
  /// Sets the span's status.
  func setStatus(_ status: TraceSpanStatus)
  /// Ends the span now.
  func end()
}

/// What kind of span: the client starts only ``client`` spans.
public enum TraceSpanKind: Sendable, Hashable {
  /// The caller's side of a remote call.
  case client
  /// Work inside the process.
  case `internal`
}

/// A span's status, as OpenTelemetry defines it.
public enum TraceSpanStatus: Sendable, Hashable {
  /// Not set: the default, and what a successful HTTP client span keeps.
  case unset
  /// Completed successfully.
  case ok
  /// Failed, with a short description.
  case error(String)
}

/// A span attribute's value.
public enum TraceAttributeValue: Sendable, Hashable, CustomStringConvertible {
  /// A string.
  case string(String)
  /// An integer.
  case int(Int)

  /// The value as text.
  public var description: String {
    switch self {
    case .string(let text): text
    case .int(let number): String(number)
    }
  }
}

extension TraceContext {
  /// The trace context of the work the current task does for its caller — the incoming
  /// request a service handles — which the client's request spans continue.
  ///
  /// ```swift
  /// let incoming = TraceContext(traceparent: headers["traceparent"] ?? "")
  /// try await TraceContext.$current.withValue(incoming) {
  ///   try await client.send(endpoint)  // its spans join the caller's trace
  /// }
  /// ```
  @TaskLocal public static var current: TraceContext?
}
