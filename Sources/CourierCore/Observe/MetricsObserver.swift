/// Records a client's requests into a ``MetricsSink``: counts by method, host and outcome,
/// durations, requests in flight, retries, auth refreshes and body bytes.
///
/// ```swift
/// let client = Client.standard(
///   baseURL: URL(string: "https://api.example.com/")!,
///   observers: [MetricsObserver(sink: SwiftMetricsSink())])
/// ```
///
/// Every metric, its kind and its dimensions (in this order):
///
/// | label | kind | dimensions |
/// | --- | --- | --- |
/// | `courier_requests_total` | counter | `method`, `host`, `outcome` |
/// | `courier_request_duration` | timer | `method`, `host`, `outcome` |
/// | `courier_time_to_first_byte` | timer | `method`, `host` (when the transport measured it) |
/// | `courier_requests_in_flight` | gauge | `method`, `host` |
/// | `courier_attempts_total` | counter | `method`, `host`, `outcome` |
/// | `courier_retries_total` | counter | `method`, `host`, `reason` |
/// | `courier_auth_refreshes_total` | counter | `method`, `host`, `outcome` (`succeeded`, `failed`) |
/// | `courier_request_body_bytes_total` | counter | `method`, `host` (bodies held in memory) |
/// | `courier_response_body_bytes_total` | counter | `method`, `host` |
/// | `courier_pool_connections_open` | gauge (recorder, not aggregated) | `transport` |
/// | `courier_pool_connections_idle` | gauge (recorder, not aggregated) | `transport` |
/// | `courier_pool_connections_in_use` | gauge (recorder, not aggregated) | `transport` |
/// | `courier_pool_requests_waiting` | gauge (recorder, not aggregated) | `transport` |
///
/// - `method` is the request's method (`GET`).
/// - `host` is the URL's host, with `:port` when the URL names one (`api.example.com`,
///   `127.0.0.1:8080`); never a path, query or user info, whose values (ids, tokens) would
///   make a series per request.
/// - `outcome` is the status class (`1xx` … `5xx`) of a response, or the name of the
///   ``CourierError/Kind`` of a failure (`timedOut`, `cancelled`, `httpStatus` when the response
///   pipeline rejected a status — the attempt's own `outcome` then holds its status class).
/// - `reason` is what a retry answers: a status class for a retryable status, else the
///   error kind's name.
/// - `transport` names the transport whose ``Transport/connectionPool`` figures these are:
///   its type (`CurlTransport`) unless you give a name.
///
/// A request counts once in `courier_requests_total` and `courier_request_duration`, when it
/// ends (a streamed body: when the stream ends); each of its attempts counts in
/// `courier_attempts_total`.
///
/// The `courier_pool_` figures are recorded only for an observer given the transport
/// (`connectionPoolOf:`), when each request starts and ends, and whenever you call
/// ``recordConnectionPool()``: call it from a timer, so that the figures also move while no
/// request does (connections closing idle). A transport that does not know its pool
/// (``Transport/connectionPool`` is `nil`) records none.
///
/// ```swift
/// let transport = CurlTransport()
/// let metrics = MetricsObserver(sink: SwiftMetricsSink(), connectionPoolOf: transport)
/// let client = Client.standard(
///   baseURL: URL(string: "https://api.example.com/")!, transport: transport,
///   observers: [metrics])
/// ```
public struct MetricsObserver: ClientObserver {
  /// Where the figures go.
  public let sink: any MetricsSink
  /// The transport whose connection pool is recorded, and its `transport` dimension.
  private let pool: (transport: any Transport, name: String)?

  /// Creates an observer recording into `sink`; with `transport`, also its connection pool
  /// figures, under `transportName` (default: the transport's type name). Give each
  /// transport a name of its own when the process has several of one type: two under one
  /// name record into the same gauges, each overwriting the other's figures.
  public init(
    sink: any MetricsSink, connectionPoolOf transport: (any Transport)? = nil,
    transportName: String? = nil
  ) {
    self.sink = sink
    pool = transport.map { ($0, transportName ?? String(describing: type(of: $0))) }
  }

  /// Records the transport's connection pool figures now; does nothing without a transport,
  /// or when it does not know them.
  public func recordConnectionPool() {
    guard let pool, let figures = pool.transport.connectionPool else { return }
    let dimensions = [("transport", pool.name)]
    for (label, value) in [
      ("courier_pool_connections_open", figures.open),
      ("courier_pool_connections_idle", figures.idle),
      ("courier_pool_connections_in_use", figures.inUse),
      ("courier_pool_requests_waiting", figures.waiting),
    ] {
      sink.makeRecorder(label: label, dimensions: dimensions, aggregate: false)
        .record(Double(value))
    }
  }

  /// Counts the request in flight, and records the connection pool.
  public func requestStarted(_ request: ObservedRequest) {
    recordConnectionPool()
    sink.makeGauge(label: "courier_requests_in_flight", dimensions: dimensions(request))
      .increment(by: 1)
    if let bytes = request.request.body.data?.count, bytes > 0 {
      sink.makeCounter(label: "courier_request_body_bytes_total", dimensions: dimensions(request))
        .increment(by: Int64(bytes))
    }
  }

  /// Counts the attempt by its outcome.
  public func attemptEnded(
    _ request: ObservedRequest, attempt: Int, result: Result<Response, CourierError>
  ) {
    sink.makeCounter(
      label: "courier_attempts_total", dimensions: dimensions(request, outcome: result)
    ).increment(by: 1)
  }

  /// Counts the retry by its reason.
  public func retryScheduled(
    _ request: ObservedRequest, attempt: Int, delay: Duration, reason: CourierError.Kind,
    status: Int?
  ) {
    let why = status.map(Self.statusClass) ?? reason.name
    sink.makeCounter(
      label: "courier_retries_total", dimensions: dimensions(request) + [("reason", why)]
    ).increment(by: 1)
  }

  /// Counts the refresh by its outcome.
  public func authRefreshed(_ request: ObservedRequest, succeeded: Bool, duration: Duration) {
    sink.makeCounter(
      label: "courier_auth_refreshes_total",
      dimensions: dimensions(request) + [("outcome", succeeded ? "succeeded" : "failed")]
    ).increment(by: 1)
  }

  /// Adds the body's bytes.
  public func bodyFinished(
    _ request: ObservedRequest, bytes: Int, duration: Duration, completed: Bool
  ) {
    guard bytes > 0 else { return }
    sink.makeCounter(label: "courier_response_body_bytes_total", dimensions: dimensions(request))
      .increment(by: Int64(bytes))
  }

  /// Counts the request by its outcome, records its durations, takes it out of flight, and
  /// records the connection pool.
  public func requestEnded(
    _ request: ObservedRequest, result: Result<Response, CourierError>, total: Duration
  ) {
    recordConnectionPool()
    let plain = dimensions(request)
    let labelled = dimensions(request, outcome: result)
    sink.makeGauge(label: "courier_requests_in_flight", dimensions: plain).decrement(by: 1)
    sink.makeCounter(label: "courier_requests_total", dimensions: labelled).increment(by: 1)
    sink.makeTimer(label: "courier_request_duration", dimensions: labelled).record(total)
    let timings: Response.Timings?
    switch result {
    case .success(let response): timings = response.timings
    case .failure(let error): timings = error.timings
    }
    if let firstByte = timings?.firstByte {
      sink.makeTimer(label: "courier_time_to_first_byte", dimensions: plain).record(firstByte)
    }
  }

  private func dimensions(_ request: ObservedRequest) -> [(String, String)] {
    [("method", request.method), ("host", request.host)]
  }

  private func dimensions(
    _ request: ObservedRequest, outcome result: Result<Response, CourierError>
  ) -> [(String, String)] {
    let outcome: String
    switch result {
    case .success(let response): outcome = Self.statusClass(response.status)
    case .failure(let error): outcome = error.kind.name
    }
    return dimensions(request) + [("outcome", outcome)]
  }

  /// `2xx` for 200 through 299, and so on; `other` outside 100…599.
  static func statusClass(_ status: Int) -> String {
    switch status {
    case 100..<200: "1xx"
    case 200..<300: "2xx"
    case 300..<400: "3xx"
    case 400..<500: "4xx"
    case 500..<600: "5xx"
    default: "other"
    }
  }
}
