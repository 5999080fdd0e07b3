import Courier
import Foundation

// MARK: - 5b. The standard preset over the bare client, paired

/// Issue #8's figure — what `Client.standard`'s six middleware add to a request end to end —
/// measured as a paired difference of this process's CPU time, over one transport and one
/// server shared by both clients.
///
/// The transport tables above take it as the difference of two rows' medians, each row with
/// a transport of its own, rounds apart: the same figure moved by 10–20 µs from one run to the
/// next, and a preset with every middleware removed (`COURIER_BENCH_STANDARD_WITHOUT=…`) read
/// 6 µs over the bare client there, as much as the goal itself. Here:
/// - both clients send through the same transport to the same port, so nothing but the
///   middleware differs;
/// - each batch of the preset runs between two batches of the bare client, and its CPU per
///   request is compared with their mean; the figure is the median over many such pairs, so
///   the VM's speed changing from minute to minute cancels out;
/// - a calibration pair does the same with a second bare client in place of the preset: its
///   median is the method's own error, printed beside the figure.
///
/// CPU is the whole process's (`CLOCK_PROCESS_CPUTIME_ID`: the caller's pool threads and the
/// transport's own threads); the server is nginx, in another process, when it is installed.
enum PresetBenchmark {
  /// One client's batch: `requests` requests, `concurrency` at once.
  private static func batch(
    _ client: Client, _ endpoint: Endpoint<Item>, concurrency: Int, perTask: Int
  ) async throws {
    if concurrency == 1 {
      for _ in 0..<perTask { _ = try await client.send(endpoint) }
      return
    }
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<concurrency {
        group.addTask { for _ in 0..<perTask { _ = try await client.send(endpoint) } }
      }
      try await group.waitForAll()
    }
  }

  /// This process's CPU µs per request for one batch of `requests` requests.
  private static func cpu(requests: Int, _ body: () async throws -> Void) async throws -> Double {
    let before = Measure.processCPUTime()
    try await body()
    return (Measure.processCPUTime() - before) / Double(requests) / 1000
  }

  /// The client `COURIER_BENCH_PRESET_CLIENT` puts in the preset's place, if any, to see what
  /// one piece costs end to end: `middleware:<name>` is a bare client with one middleware
  /// (`pass`, `headers`, `requestID`, `retry`, `timeout`, `logging`, `gzip`, `reachability`,
  /// each with its defaults), `decoder:foundation` a bare client decoding with `JSONDecoder`
  /// alone, `headers:<N>` a bare client sending N static header lines
  /// through `HeadersMiddleware`, `pass:<N>` a bare client with N pass-through layers (what
  /// being a layer costs). The single-row mode of the transport tables
  /// (`COURIER_BENCH_TRANSPORT_ROW=3`, for profiling) sends with the same client.
  static func variantClient(base: URL, transport: any Transport) -> Client? {
    guard let variant = ProcessInfo.processInfo.environment["COURIER_BENCH_PRESET_CLIENT"]
    else { return nil }
    let parts = variant.split(separator: ":", maxSplits: 1).map(String.init)
    guard parts.count == 2 else { return nil }
    if parts == ["decoder", "foundation"] {
      // A bare client whose bodies JSONDecoder decodes itself: a subclass is never given to
      // Courier's own JSON decoder.
      return Client(baseURL: base, transport: transport, decoder: FoundationOnlyDecoder())
    }
    let layers: [any Middleware]? =
      switch (parts[0], parts[1]) {
      case ("pass", let count):
        Int(count).flatMap { count in
          count >= 0 ? Array(repeating: ChainBenchmark.PassThrough(), count: count) : nil
        }
      case ("middleware", "pass"): [ChainBenchmark.PassThrough()]
      case ("middleware", "headers"): [HeadersMiddleware()]
      case ("middleware", "requestID"): [RequestIDMiddleware()]
      case ("middleware", "retry"): [RetryMiddleware()]
      case ("middleware", "timeout"): [TimeoutMiddleware()]
      case ("middleware", "logging"): [LoggingMiddleware(level: .none)]
      case ("middleware", "gzip"): [GzipMiddleware()]
      case ("middleware", "reachability"):
        SharedPathMonitor.system.map { [ReachabilityMiddleware(monitor: $0)] }
      case ("headers", let count):
        [
          HeadersMiddleware(
            defaults: HTTPHeaders(
              received: (0..<(Int(count) ?? 0)).map {
                ("X-Header-\($0)", "value-\($0)-0123456789")
              }))
        ]
      default: nil
      }
    guard let layers else { return nil }
    return Client(baseURL: base, transport: transport, middleware: layers)
  }

  /// Prints the preset's paired cost over each transport, one at a time and 16 at once.
  static func run(server: BenchServer, quick: Bool) async throws {
    print("#### The standard preset over the bare client, paired (issue #8)\n")
    print(
      "Both clients share one transport and one port; each preset batch runs between two "
        + "bare batches, and the figure is the median difference of CPU µs per request (with "
        + "quartiles). The calibration row puts a second bare client where the preset was.\n")
    print(
      "| transport | requests | pairs x batch | bare client CPU µs/request | preset over bare, "
        + "median (quartiles) | calibration: bare over bare | goal < 10 |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- |")
    let endpoint = Endpoint<Item>(.get, "item")
    var met = true
    // The transport `Client.standard` sends with when given none (CurlTransport on Linux).
    let standardName = String(describing: type(of: Client.standardTransport()))
    var metOnStandard = true
    let only = ProcessInfo.processInfo.environment["COURIER_BENCH_PRESET_TRANSPORT"]
    for transportName in ["CurlTransport", "URLSessionTransport"]
    where only == nil || only == transportName {
      for concurrency in [1, 16] {
        let transport: any Transport
        let stop: () -> Void
        if transportName == "CurlTransport" {
          var configuration = CurlTransport.Configuration.standard
          if concurrency > 1 { configuration.maximumConnectionsPerHost = 16 }
          let curl = CurlTransport(configuration: configuration)
          (transport, stop) = (curl, { curl.shutdown() })
        } else {
          let configuration = URLSessionTransport.defaultConfiguration
          if concurrency > 1 { configuration.httpMaximumConnectionsPerHost = 16 }
          let session = URLSessionTransport(configuration: configuration)
          (transport, stop) = (session, { session.shutdown() })
        }
        defer { stop() }
        let base = server.base(row: 2)
        let bare = Client(baseURL: base, transport: transport)
        let twin = Client(baseURL: base, transport: transport)
        let preset =
          variantClient(base: base, transport: transport)
          ?? Client.standard(
            baseURL: base, transport: transport, configure: TransportBenchmark.removeMiddleware)
        // URLSession costs about four times as much per request: fewer, equally long pairs.
        let curl = transportName == "CurlTransport"
        let perTask = concurrency == 1 ? 20 : 10
        let pairs = (curl ? 200 : 60) / (quick ? 5 : 1)
        let run = { (client: Client) in
          try await batch(client, endpoint, concurrency: concurrency, perTask: perTask)
        }
        for _ in 0..<5 {
          try await run(bare)
          try await run(twin)
          try await run(preset)
        }
        let requests = concurrency * perTask
        let figure = try await Measure.paired(
          pairs: pairs, base: { try await cpu(requests: requests) { try await run(bare) } },
          variant: { try await cpu(requests: requests) { try await run(preset) } })
        let calibration = try await Measure.paired(
          pairs: pairs, base: { try await cpu(requests: requests) { try await run(bare) } },
          variant: { try await cpu(requests: requests) { try await run(twin) } })
        met = met && figure.median < 10
        if transportName == standardName { metOnStandard = metOnStandard && figure.median < 10 }
        let label = transportName == standardName ? "\(transportName) (the default)" : transportName
        print(
          "| \(label) | \(concurrency == 1 ? "one at a time" : "16 at once") | "
            + "\(pairs) x \(requests) | \(Measure.format(figure.base)) | "
            + "\(Measure.format(figure.median, decimals: 1)) "
            + "(\(Measure.format(figure.lower, decimals: 1))–"
            + "\(Measure.format(figure.upper, decimals: 1))) | "
            + "\(Measure.format(calibration.median, decimals: 1)) | "
            + "\(figure.median < 10 ? "met" : "missed") |")
      }
    }
    print(
      "\nStandard preset over the bare client, paired (goal < 10 µs CPU per request): on "
        + "Client.standard's default transport here (\(standardName)) "
        + (metOnStandard ? "met" : "missed") + "; "
        + (met ? "met on every transport and concurrency\n" : "missed on at least one row\n"))
  }
}

/// A `JSONDecoder` that Courier hands every body to as it is: what decoding costs without
/// Courier's own JSON decoder.
///
/// `@unchecked Sendable` as Foundation's `JSONDecoder` is, which a subclass must restate: it
/// adds no stored property, and the superclass keeps its settings behind its own lock.
final class FoundationOnlyDecoder: JSONDecoder, @unchecked Sendable {}
