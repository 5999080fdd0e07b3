import CourierCore
import Synchronization

/// A ``MetricsSink`` that keeps every figure in memory, exactly, for tests that assert on
/// counts — and on labels that must never appear (a path id, a query value).
///
/// Copies share one store. Dimensions are matched whatever their order.
///
/// ```swift
/// let sink = InMemoryMetricsSink()
/// let client = Client(baseURL: base, transport: stub, observers: [MetricsObserver(sink: sink)])
/// _ = try await client.send(Endpoint<Data>(.get, "me"))
/// #expect(sink.counter("courier_requests_total",
///                      ["method": "GET", "host": "127.0.0.1:8080", "outcome": "2xx"]) == 1)
/// ```
public struct InMemoryMetricsSink: MetricsSink {
  /// One metric series: its kind, label and dimensions.
  public struct Series: Sendable, Hashable, CustomStringConvertible {
    /// `counter`, `recorder`, `timer` or `gauge`.
    public let kind: String
    /// The metric's label, such as `courier_requests_total`.
    public let label: String
    /// The dimensions, sorted by name.
    public let dimensions: [String: String]

    /// `label{name=value,…}`.
    public var description: String {
      let pairs = dimensions.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
      return "\(label){\(pairs.joined(separator: ","))}"
    }
  }

  private final class Store: Sendable {
    let values = Mutex<[Series: [Double]]>([:])
  }

  /// Records into one series of the store: every handler this sink makes.
  private struct Handler: MetricsCounter, MetricsRecorder, MetricsTimer, MetricsGauge {
    let store: Store
    let series: Series

    func increment(by amount: Int64) { add(Double(amount)) }
    func record(_ value: Double) { append(value) }
    func recordNanoseconds(_ duration: Int64) { append(Double(duration)) }
    func increment(by amount: Double) { add(amount) }
    func decrement(by amount: Double) { add(-amount) }

    private func add(_ amount: Double) {
      store.values.withLock { values in
        let total = (values[series]?.first ?? 0) + amount
        values[series] = [total]
      }
    }

    private func append(_ value: Double) {
      store.values.withLock { $0[series, default: []].append(value) }
    }
  }

  private let store = Store()

  /// Creates an empty sink.
  public init() {}

  /// Makes a counter.
  public func makeCounter(label: String, dimensions: [(String, String)]) -> any MetricsCounter {
    handler("counter", label, dimensions)
  }

  /// Makes a recorder (`aggregate` is not kept: every value is).
  public func makeRecorder(
    label: String, dimensions: [(String, String)], aggregate: Bool
  ) -> any MetricsRecorder {
    handler("recorder", label, dimensions)
  }

  /// Makes a timer.
  public func makeTimer(label: String, dimensions: [(String, String)]) -> any MetricsTimer {
    handler("timer", label, dimensions)
  }

  /// Makes a gauge.
  public func makeGauge(label: String, dimensions: [(String, String)]) -> any MetricsGauge {
    handler("gauge", label, dimensions)
  }

  private func handler(
    _ kind: String, _ label: String, _ dimensions: [(String, String)]
  ) -> Handler {
    let series = Series(
      kind: kind, label: label,
      dimensions: Dictionary(dimensions, uniquingKeysWith: { _, last in last }))
    // A series exists from the moment it is made, as in swift-metrics.
    store.values.withLock { values in
      if values[series] == nil { values[series] = kind == "counter" || kind == "gauge" ? [0] : [] }
    }
    return Handler(store: store, series: series)
  }

  /// Every series made so far.
  public var series: [Series] { store.values.withLock { Array($0.keys) } }

  /// The counter's value; 0 when it was never made.
  public func counter(_ label: String, _ dimensions: [String: String]) -> Int64 {
    Int64(value("counter", label, dimensions)?.first ?? 0)
  }

  /// The sum of the counter over every series with that label.
  public func counterTotal(_ label: String) -> Int64 {
    store.values.withLock { values in
      values.filter { $0.key.kind == "counter" && $0.key.label == label }
        .reduce(0) { $0 + Int64($1.value.first ?? 0) }
    }
  }

  /// The gauge's value; 0 when it was never made.
  public func gauge(_ label: String, _ dimensions: [String: String]) -> Double {
    value("gauge", label, dimensions)?.first ?? 0
  }

  /// Every duration the timer recorded, in nanoseconds, in order.
  public func timer(_ label: String, _ dimensions: [String: String]) -> [Int64] {
    (value("timer", label, dimensions) ?? []).map { Int64($0) }
  }

  /// Every value the recorder recorded, in order.
  public func recorder(_ label: String, _ dimensions: [String: String]) -> [Double] {
    value("recorder", label, dimensions) ?? []
  }

  /// Forgets every series.
  public func removeAll() {
    store.values.withLock { $0.removeAll() }
  }

  private func value(_ kind: String, _ label: String, _ dimensions: [String: String]) -> [Double]? {
    store.values.withLock { $0[Series(kind: kind, label: label, dimensions: dimensions)] }
  }
}
