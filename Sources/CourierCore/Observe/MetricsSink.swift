/// Makes the counters, recorders, timers and gauges ``MetricsObserver`` records into: shaped
/// like swift-metrics' `MetricsFactory`, so an adapter to it (and to Prometheus or StatsD
/// behind it) is a few lines.
///
/// ## When to use it
/// Give a sink to a ``MetricsObserver`` and install the observer on a client. The sink
/// decides where the figures go; the observer decides what is recorded and keeps labels
/// low-cardinality (method, host, status class or error kind — never a path, query or id).
///
/// ## A built-in sink
/// `InMemoryMetricsSink` (module `CourierTesting`) keeps exact values for tests.
///
/// ## Writing your own
/// Return a handler for a label and its dimensions. The observer asks again for every event,
/// so a sink that builds something costly per handler should keep one per label and
/// dimensions, as swift-metrics' backends do. The Adapters article has the sink that
/// forwards to swift-metrics; one that prints every figure:
///
/// ```swift
/// import Courier
///
/// struct PrintingSink: MetricsSink {
///   struct Handler: MetricsCounter, MetricsRecorder, MetricsTimer, MetricsGauge {
///     let label: String
///     func increment(by amount: Int64) { print(label, "+\(amount)") }
///     func record(_ value: Double) { print(label, value) }
///     func recordNanoseconds(_ duration: Int64) { print(label, "\(duration) ns") }
///     func increment(by amount: Double) { print(label, "+\(amount)") }
///     func decrement(by amount: Double) { print(label, "-\(amount)") }
///   }
///
///   func makeCounter(label: String, dimensions: [(String, String)]) -> any MetricsCounter {
///     Handler(label: label)
///   }
///   func makeRecorder(
///     label: String, dimensions: [(String, String)], aggregate: Bool
///   ) -> any MetricsRecorder {
///     Handler(label: label)
///   }
///   func makeTimer(label: String, dimensions: [(String, String)]) -> any MetricsTimer {
///     Handler(label: label)
///   }
///   func makeGauge(label: String, dimensions: [(String, String)]) -> any MetricsGauge {
///     Handler(label: label)
///   }
/// }
/// ```
public protocol MetricsSink: Sendable {
  /// A counter: a value that only goes up.
  func makeCounter(label: String, dimensions: [(String, String)]) -> any MetricsCounter
  /// A recorder: a value recorded many times; `aggregate` asks for a histogram or summary.
  func makeRecorder(
    label: String, dimensions: [(String, String)], aggregate: Bool
  ) -> any MetricsRecorder
  /// A timer: durations, in nanoseconds.
  func makeTimer(label: String, dimensions: [(String, String)]) -> any MetricsTimer
  /// A gauge that goes up and down (swift-metrics' `Meter`), such as requests in flight.
  func makeGauge(label: String, dimensions: [(String, String)]) -> any MetricsGauge
}

/// A counter a ``MetricsSink`` made (swift-metrics' `CounterHandler`).
public protocol MetricsCounter: Sendable {
  /// Adds `amount` (never negative).
  func increment(by amount: Int64)
}

/// A recorder a ``MetricsSink`` made (swift-metrics' `RecorderHandler`).
public protocol MetricsRecorder: Sendable {
  /// Records one value.
  func record(_ value: Double)
}

/// A timer a ``MetricsSink`` made (swift-metrics' `TimerHandler`).
public protocol MetricsTimer: Sendable {
  /// Records one duration, in nanoseconds.
  func recordNanoseconds(_ duration: Int64)
}

/// A gauge a ``MetricsSink`` made (swift-metrics' `MeterHandler`).
public protocol MetricsGauge: Sendable {
  /// Adds `amount`.
  func increment(by amount: Double)
  /// Subtracts `amount`.
  func decrement(by amount: Double)
}

extension MetricsTimer {
  /// Records `duration`.
  public func record(_ duration: Duration) {
    let (seconds, attoseconds) = duration.components
    let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
    recordNanoseconds(overflow ? .max : scaled &+ attoseconds / 1_000_000_000)
  }
}
