extension CircuitBreakerMiddleware {
  /// A state-change handler that makes every circuit's state visible in `sink`, for the
  /// breaker's `onStateChange`:
  ///
  /// | metric | kind | dimensions | value |
  /// | --- | --- | --- | --- |
  /// | `courier_circuit_not_closed` | gauge | `host` | 1 while the host's circuit is open or half-open, 0 once it closes |
  /// | `courier_circuit_transitions_total` | counter | `host`, `from`, `to` | one per change of state |
  ///
  /// `host` is the breaker's key, `host:port`: no path, query or id.
  ///
  /// ```swift
  /// let sink = InMemoryMetricsSink()  // or your adapter to swift-metrics
  /// let breaker = CircuitBreakerMiddleware(
  ///   onStateChange: CircuitBreakerMiddleware.recordingState(in: sink))
  /// ```
  public static func recordingState(in sink: any MetricsSink) -> StateChange {
    { host, old, new in
      sink.makeCounter(
        label: "courier_circuit_transitions_total",
        dimensions: [("host", host), ("from", old.rawValue), ("to", new.rawValue)]
      )
      .increment(by: 1)
      let wasClosed = old == .closed
      let isClosed = new == .closed
      guard wasClosed != isClosed else { return }
      let gauge = sink.makeGauge(label: "courier_circuit_not_closed", dimensions: [("host", host)])
      if wasClosed { gauge.increment(by: 1) } else { gauge.decrement(by: 1) }
    }
  }
}
