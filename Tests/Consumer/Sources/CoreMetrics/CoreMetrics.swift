// A stand-in for swift-metrics 2.5's CoreMetrics (https://github.com/apple/swift-metrics),
// which `Metrics` re-exports as there; the package cannot be fetched here. Only the
// declarations Courier's documented adapter calls, with swift-metrics' own signatures, so
// `.ci/consumer-check` compiles the adapter and fails when it drifts from the API it was
// written for. It records nothing.

/// swift-metrics' `Counter`.
public final class Counter: Sendable {
  /// As in swift-metrics.
  public let label: String
  /// As in swift-metrics.
  public let dimensions: [(String, String)]

  /// Creates it, as swift-metrics does.
  public init(label: String, dimensions: [(String, String)] = []) {
    self.label = label
    self.dimensions = dimensions
  }

  /// As in swift-metrics.
  public func increment<DataType: BinaryInteger>(by amount: DataType) {}
  /// As in swift-metrics.
  public func increment() {}
}

/// swift-metrics' `Recorder` (a histogram when `aggregate` is `true`).
public final class Recorder: Sendable {
  /// As in swift-metrics.
  public let label: String
  /// As in swift-metrics.
  public let dimensions: [(String, String)]
  /// As in swift-metrics.
  public let aggregate: Bool

  /// Creates it, as swift-metrics does.
  public init(label: String, dimensions: [(String, String)] = [], aggregate: Bool = true) {
    self.label = label
    self.dimensions = dimensions
    self.aggregate = aggregate
  }

  /// As in swift-metrics.
  public func record<DataType: BinaryInteger>(_ value: DataType) {}
  /// As in swift-metrics.
  public func record<DataType: BinaryFloatingPoint>(_ value: DataType) {}
}

/// swift-metrics' `Timer`.
public final class Timer: Sendable {
  /// As in swift-metrics.
  public let label: String
  /// As in swift-metrics.
  public let dimensions: [(String, String)]

  /// Creates it, as swift-metrics does.
  public init(label: String, dimensions: [(String, String)] = []) {
    self.label = label
    self.dimensions = dimensions
  }

  /// As in swift-metrics.
  public func recordNanoseconds(_ duration: Int64) {}
}

/// swift-metrics' `Gauge`: the last value recorded.
public final class Gauge: Sendable {
  /// As in swift-metrics.
  public let label: String
  /// As in swift-metrics.
  public let dimensions: [(String, String)]

  /// Creates it, as swift-metrics does.
  public init(label: String, dimensions: [(String, String)] = []) {
    self.label = label
    self.dimensions = dimensions
  }

  /// As in swift-metrics.
  public func record<DataType: BinaryInteger>(_ value: DataType) {}
  /// As in swift-metrics.
  public func record<DataType: BinaryFloatingPoint>(_ value: DataType) {}
}

/// swift-metrics' `Meter`: a value that goes up and down.
public final class Meter: Sendable {
  /// As in swift-metrics.
  public let label: String
  /// As in swift-metrics.
  public let dimensions: [(String, String)]

  /// Creates it, as swift-metrics does.
  public init(label: String, dimensions: [(String, String)] = []) {
    self.label = label
    self.dimensions = dimensions
  }

  /// As in swift-metrics.
  public func set<DataType: BinaryInteger>(_ value: DataType) {}
  /// As in swift-metrics.
  public func set<DataType: BinaryFloatingPoint>(_ value: DataType) {}
  /// As in swift-metrics.
  public func increment<DataType: BinaryFloatingPoint>(by amount: DataType) {}
  /// As in swift-metrics.
  public func decrement<DataType: BinaryFloatingPoint>(by amount: DataType) {}
}
