// A stand-in for swift-distributed-tracing 1.1 (https://github.com/apple/swift-distributed-tracing)
// and the ServiceContext it re-exports, which cannot be fetched here: only the declarations
// Courier's documented adapter calls, with the same signatures as far as a call site can
// tell, so `.ci/consumer-check` compiles the adapter and fails when it drifts from the API it
// was written for. It traces nothing.

/// As in swift-service-context: values that travel with a task.
public struct ServiceContext: Sendable {
  /// As in swift-service-context: the task's context, if any.
  @TaskLocal public static var current: ServiceContext?

  /// As in swift-service-context: a context for work that has no parent.
  public static var topLevel: ServiceContext { ServiceContext() }
}

/// As in swift-distributed-tracing.
public enum SpanKind: Sendable {
  /// As in swift-distributed-tracing.
  case server, client, producer, consumer, `internal`
}

/// As in swift-distributed-tracing.
public struct SpanStatus: Sendable {
  /// As in swift-distributed-tracing.
  public enum Code: Sendable {
    /// As in swift-distributed-tracing.
    case ok, error
  }

  /// As in swift-distributed-tracing.
  public let code: Code
  /// As in swift-distributed-tracing.
  public let message: String?

  /// Creates it, as swift-distributed-tracing does.
  public init(code: Code, message: String? = nil) {
    self.code = code
    self.message = message
  }
}

/// As in swift-distributed-tracing (the cases the adapter can produce).
public enum SpanAttribute: Sendable {
  /// As in swift-distributed-tracing.
  case int64(Int64)
  /// As in swift-distributed-tracing.
  case double(Double)
  /// As in swift-distributed-tracing.
  case bool(Bool)
  /// As in swift-distributed-tracing.
  case string(String)
}

/// As in swift-distributed-tracing.
public protocol SpanAttributeConvertible {
  /// As in swift-distributed-tracing.
  func toSpanAttribute() -> SpanAttribute
}

extension String: SpanAttributeConvertible {
  /// As in swift-distributed-tracing.
  public func toSpanAttribute() -> SpanAttribute { .string(self) }
}

extension Int: SpanAttributeConvertible {
  /// As in swift-distributed-tracing.
  public func toSpanAttribute() -> SpanAttribute { .int64(Int64(self)) }
}

extension Int64: SpanAttributeConvertible {
  /// As in swift-distributed-tracing.
  public func toSpanAttribute() -> SpanAttribute { .int64(self) }
}

extension Double: SpanAttributeConvertible {
  /// As in swift-distributed-tracing.
  public func toSpanAttribute() -> SpanAttribute { .double(self) }
}

extension Bool: SpanAttributeConvertible {
  /// As in swift-distributed-tracing.
  public func toSpanAttribute() -> SpanAttribute { .bool(self) }
}

/// As in swift-distributed-tracing.
public struct SpanAttributes: Sendable {
  private var values: [String: SpanAttribute] = [:]

  /// Creates it empty, as swift-distributed-tracing does.
  public init() {}

  /// As in swift-distributed-tracing.
  public subscript(_ name: String) -> (any SpanAttributeConvertible)? {
    get { nil }
    set { values[name] = newValue?.toSpanAttribute() }
  }
}

/// As in swift-distributed-tracing.
public protocol Span: Sendable {
  /// As in swift-distributed-tracing.
  var context: ServiceContext { get }
  /// As in swift-distributed-tracing.
  var attributes: SpanAttributes { get nonmutating set }
  /// As in swift-distributed-tracing.
  func setStatus(_ status: SpanStatus)
  /// As in swift-distributed-tracing.
  func recordError(_ error: any Error)
  /// As in swift-distributed-tracing.
  func end()
}

/// As in swift-distributed-tracing.
public protocol Injector: Sendable {
  /// As in swift-distributed-tracing.
  associatedtype Carrier: Sendable
  /// As in swift-distributed-tracing.
  func inject(_ value: String, forKey key: String, into carrier: inout Carrier)
}

/// As in swift-distributed-tracing.
public protocol Extractor: Sendable {
  /// As in swift-distributed-tracing.
  associatedtype Carrier: Sendable
  /// As in swift-distributed-tracing.
  func extract(key: String, from carrier: Carrier) -> String?
}

/// As in swift-distributed-tracing.
public protocol Instrument: Sendable {
  /// As in swift-distributed-tracing.
  func extract<Carrier, Extract>(
    _ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
  where Extract: Extractor, Extract.Carrier == Carrier

  /// As in swift-distributed-tracing.
  func inject<Carrier, Inject>(
    _ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
  where Inject: Injector, Inject.Carrier == Carrier
}

/// As in swift-distributed-tracing.
public protocol Tracer: Instrument {
  /// As in swift-distributed-tracing.
  associatedtype Span: Tracing.Span
  /// As in swift-distributed-tracing (its other parameters have defaults there).
  func startSpan(
    _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind
  ) -> Self.Span
}

/// As in swift-distributed-tracing: the process's tracer.
public enum InstrumentationSystem {
  /// As in swift-distributed-tracing.
  public static var tracer: any Tracer { NoOpTracer() }
  /// As in swift-distributed-tracing.
  public static var instrument: any Instrument { NoOpTracer() }
}

/// As in swift-distributed-tracing.
public struct NoOpTracer: Tracer {
  /// As in swift-distributed-tracing.
  public struct NoOpSpan: Tracing.Span {
    /// As in swift-distributed-tracing.
    public let context: ServiceContext
    /// As in swift-distributed-tracing.
    public var attributes: SpanAttributes {
      get { SpanAttributes() }
      nonmutating set {}
    }
    /// As in swift-distributed-tracing.
    public func setStatus(_ status: SpanStatus) {}
    /// As in swift-distributed-tracing.
    public func recordError(_ error: any Error) {}
    /// As in swift-distributed-tracing.
    public func end() {}
  }

  /// Creates it, as swift-distributed-tracing does.
  public init() {}

  /// As in swift-distributed-tracing.
  public func startSpan(
    _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind
  ) -> NoOpSpan {
    NoOpSpan(context: context())
  }

  /// As in swift-distributed-tracing.
  public func extract<Carrier, Extract>(
    _ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract
  )
  where Extract: Extractor, Extract.Carrier == Carrier {}

  /// As in swift-distributed-tracing.
  public func inject<Carrier, Inject>(
    _ context: ServiceContext, into carrier: inout Carrier, using injector: Inject
  )
  where Inject: Injector, Inject.Carrier == Carrier {}
}
