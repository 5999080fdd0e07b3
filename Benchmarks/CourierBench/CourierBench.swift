import CAllocationCounter
import Courier
import CourierTesting
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `courier-bench`: Courier's cost next to what it wraps, measured side by side in one run.
///
/// 1. Chain overhead: a request through a `Client` over a transport that answers at once, with
///    0 and 6 pass-through middleware, the five standard middleware together and each alone,
///    and `TimeoutMiddleware` against a token-timer design; against calling the transport
///    directly.
/// 2. End to end: GET + JSON decode of a ~300-byte body from `MockServer` on loopback, Courier
///    against plain `URLSession.data(for:)` + `JSONDecoder`, and against the simpler
///    cancellation design (a Task per request, no RequestCancellation), in rotating rounds.
/// 3. Envelope: checking `{"code":0,"msg":…,"data":…}` and decoding `data`, against plain
///    `JSONDecoder` on the payload bytes alone.
/// 4. Gzip: compress and decompress MB/s of 1 MiB and 64 MiB bodies, the Courier codec against
///    zlib's one-shot `compress2` / `uncompress`.
/// 5. Transports: plain `URLSession`, Courier on `URLSessionTransport` and Courier on
///    `CurlTransport`, one request at a time and 16 at once, with CPU per request and the
///    connections each used, against a loopback nginx (MockServer without nginx); then the
///    standard preset over the bare client on one shared transport, as paired CPU differences
///    (`PresetBenchmark`).
///
/// 6. Cost curve: requests per second, CPU per request, peak RSS and connections at 1 to 1,000
///    requests in flight, `CurlTransport` and `Client.standard` beside `curl --parallel` and
///    plain `URLSession`, every point a process of its own (`CurveBenchmark`).
///
/// Run with `swift run -c release courier-bench [chain] [e2e] [transports] [preset]
/// [download] [envelope] [gzip] [curve] [--quick]`: the named sections (all by default; `e2e`
/// includes `transports`, which ends with `preset`, the paired figure alone); `--quick`
/// shortens every section. `curve-point` is the mode the cost curve starts its processes in;
/// `stream-point <url> [read MB/s] [--urlsession]` reads one streamed body, and `sse` measures
/// how fast Server-Sent Events parse (`StreamBenchmark`); `tls-versions <https URL> <CA
/// bundle>` compares HTTP/1.1 and HTTP/2 over TLS (`TLSVersionBenchmark`).
@main
struct CourierBench {
  static func main() async throws {
    let arguments = CommandLine.arguments.dropFirst()
    if arguments.first == "curve-point" {
      try await CurveBenchmark.point(Array(arguments.dropFirst()))
      return
    }
    if arguments.first == "stream-point" {
      try await StreamBenchmark.point(Array(arguments.dropFirst()))
      return
    }
    if arguments.first == "tls-versions" {
      try await TLSVersionBenchmark.run(Array(arguments.dropFirst()))
      return
    }
    if arguments.first == "sse" {
      try await StreamBenchmark.parseRate()
      return
    }
    let quick = arguments.contains("--quick")
    let sections = Set(arguments.filter { !$0.hasPrefix("--") })
    let runs = { (name: String) in sections.isEmpty || sections.contains(name) }
    print(Machine.describe())
    if runs("chain") {
      print()
      try await ChainBenchmark.run(iterations: quick ? 20_000 : 200_000)
    }
    if runs("e2e") {
      print()
      // Short rounds, rotated, so that load from other processes hits every variant alike.
      try await EndToEndBenchmark.run(requestsPerRound: 20, rounds: quick ? 30 : 300)
    }
    if runs("e2e") || runs("transports") {
      print()
      try await TransportBenchmark.run(
        sequentialRounds: quick ? 20 : 150, concurrentRounds: quick ? 3 : 15)
    } else if sections.contains("preset") {
      print()
      try await TransportBenchmark.run(
        sequentialRounds: quick ? 20 : 150, concurrentRounds: quick ? 3 : 15, presetOnly: true)
    }
    if runs("download") {
      print()
      try await DownloadBenchmark.run(megabytes: quick ? 64 : 512, rounds: quick ? 2 : 5)
    }
    if runs("envelope") {
      print()
      try EnvelopeBenchmark.run(iterations: quick ? 5_000 : 50_000)
    }
    if runs("gzip") {
      print()
      try GzipBenchmark.run(rounds: quick ? 3 : 15)
    }
    if runs("curve") {
      print()
      try await CurveBenchmark.run(quick: quick)
    }
  }
}

/// Times a block and counts the allocations it makes.
enum Measure {
  struct Result {
    var nanoseconds: Double
    var allocations: Double
    var cpuNanoseconds: Double = 0
  }

  /// CPU time of the whole process (every thread: client, URLSession, server).
  static func processCPUTime() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) * 1e9 + Double(spec.tv_nsec)
  }

  /// Nanoseconds of user and of system CPU this process has used so far (`getrusage`,
  /// children excluded: nginx's CPU is not in it).
  static func userAndSystemCPUTime() -> (user: Double, system: Double) {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func nanoseconds(_ time: timeval) -> Double {
      Double(time.tv_sec) * 1e9 + Double(time.tv_usec) * 1e3
    }
    return (nanoseconds(usage.ru_utime), nanoseconds(usage.ru_stime))
  }

  static func run(_ iterations: Int, _ body: () async throws -> Void) async rethrows -> Result {
    let allocationsBefore = courier_allocation_count()
    let cpuBefore = processCPUTime()
    let start = ContinuousClock.now
    for _ in 0..<iterations { try await body() }
    let elapsed = ContinuousClock.now - start
    let cpu = processCPUTime() - cpuBefore
    let allocations = courier_allocation_count() - allocationsBefore
    return Result(
      nanoseconds: nanoseconds(elapsed) / Double(iterations),
      allocations: Double(allocations) / Double(iterations),
      cpuNanoseconds: cpu / Double(iterations))
  }

  /// The paired difference between `variant` and `base`: `pairs` times, a batch of `base`,
  /// one of `variant`, one of `base` again, each `batch` calls; each difference is the
  /// variant's batch against the mean of the two around it. On a VM whose speed moves from one
  /// second to the next, neighbouring batches see the same speed, so the median difference is
  /// steadier than the difference of two rows measured seconds apart (the table's).
  static func paired(
    pairs: Int, batch: Int, base: () async throws -> Void, variant: () async throws -> Void
  ) async rethrows -> (median: Double, lower: Double, upper: Double, base: Double, count: Int) {
    func time(_ body: () async throws -> Void) async rethrows -> Double {
      let start = ContinuousClock.now
      for _ in 0..<batch { try await body() }
      return nanoseconds(ContinuousClock.now - start) / Double(batch)
    }
    return try await paired(
      pairs: pairs, base: { try await time(base) }, variant: { try await time(variant) })
  }

  /// The paired difference between two measurements, each returning one batch's figure
  /// (time or CPU per call): `base`, then `pairs` times `variant` and `base` again, each
  /// variant's figure against the mean of the two bases around it. Returns the differences'
  /// median and quartiles, the bases' median, and the number of pairs.
  static func paired(
    pairs: Int, base: () async throws -> Double, variant: () async throws -> Double
  ) async rethrows -> (median: Double, lower: Double, upper: Double, base: Double, count: Int) {
    var differences: [Double] = []
    var bases: [Double] = []
    var before = try await base()
    for _ in 0..<max(1, pairs) {
      let measured = try await variant()
      let after = try await base()
      differences.append(measured - (before + after) / 2)
      bases.append(after)
      before = after
    }
    differences.sort()
    let quartile = { (fraction: Double) in
      differences[Int(Double(differences.count - 1) * fraction)]
    }
    return (quartile(0.5), quartile(0.25), quartile(0.75), median(bases), differences.count)
  }

  static func runSync(_ iterations: Int, _ body: () throws -> Void) rethrows -> Result {
    let allocationsBefore = courier_allocation_count()
    let start = ContinuousClock.now
    for _ in 0..<iterations { try body() }
    let elapsed = ContinuousClock.now - start
    let allocations = courier_allocation_count() - allocationsBefore
    return Result(
      nanoseconds: nanoseconds(elapsed) / Double(iterations),
      allocations: Double(allocations) / Double(iterations))
  }

  static func nanoseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9
  }

  /// The median of each variant over alternating rounds.
  static func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
  }

  static func format(_ value: Double, decimals: Int = 0) -> String {
    String(format: "%.\(decimals)f", value)
  }
}

// MARK: - 1. Chain overhead

enum ChainBenchmark {
  /// Answers at once. It ends by itself, so it may say it observes `cancelAll()`; with
  /// `observes == false` the client runs each attempt in an unstructured task instead.
  struct ImmediateTransport: Transport {
    let status: Int
    var observes = true
    func send(_ request: Request) async throws -> Response {
      Response(status: status, request: request)
    }
    var observesRequestCancellation: Bool { observes }
  }

  struct PassThrough: Middleware {
    func intercept(_ request: Request, next: Next) async throws -> Response {
      try await next(request)
    }
  }

  /// Drops every event: the logging rows then cost what `LoggingMiddleware` itself does
  /// (building the event), not what a sink does with it.
  struct DiscardingLogSink: LogSink {
    var logLevel = LogSeverity.debug
    var metadata: [String: String] = [:]
    func log(_ event: LogEvent) {}
  }

  /// One row: a name, the request, and what to do after each round (clear a sink).
  struct Variant {
    var name: String
    var body: () async throws -> Void
    var afterRound: () -> Void = {}
  }

  static func run(iterations: Int) async throws {
    let transport = ImmediateTransport(status: 204)
    let request = Request(url: URL(string: "http://127.0.0.1/item")!)
    let base = URL(string: "http://127.0.0.1/")!
    let bare = Client(baseURL: base, transport: transport)
    let endpoint = Endpoint<Void>(.get, "item")
    let six = Client(transport: transport, middleware: Array(repeating: PassThrough(), count: 6))
    let unobserving = Client(transport: ImmediateTransport(status: 204, observes: false))
    func client(_ middleware: [any Middleware]) -> Client {
      Client(baseURL: base, transport: transport, middleware: middleware)
    }
    // The standard order, outermost first.
    func five(
      _ logging: LoggingMiddleware, timeout: any Middleware = TimeoutMiddleware()
    )
      -> [any Middleware]
    {
      [HeadersMiddleware(), RequestIDMiddleware(), logging, RetryMiddleware(), timeout]
    }
    let silent = LoggingMiddleware(level: .none, sink: InMemoryLogSink())
    let basic = LoggingMiddleware(level: .basic, sink: DiscardingLogSink())
    let memorySink = InMemoryLogSink()
    let metrics = InMemoryMetricsSink()
    let observedBare = Client(
      baseURL: base, transport: transport, observers: [MetricsObserver(sink: metrics)])
    let observedStandard = Client.standard(
      baseURL: base, transport: transport, observers: [MetricsObserver(sink: metrics)])
    let basicInMemory = LoggingMiddleware(level: .basic, sink: memorySink)
    func row(_ name: String, _ client: Client) -> Variant {
      Variant(name: name) { _ = try await client.send(request) }
    }
    let variants: [Variant] = [
      Variant(name: "transport.send, no client") { _ = try await transport.send(request) },
      row("Client, 0 middleware", bare),
      row("Client, 6 pass-through middleware", six),
      row("five middleware, logging .none", client(five(silent))),
      row("five middleware, logging .basic (discarding sink)", client(five(basic))),
      Variant(
        name: "five middleware, logging .basic (InMemoryLogSink, cleared after each round)",
        body: { [c = client(five(basicInMemory))] in _ = try await c.send(request) },
        afterRound: { memorySink.removeAll() }),
      row(
        "five middleware, logging .none, timeout (a) task group",
        client(five(silent, timeout: TaskGroupTimeoutMiddleware()))),
      row("HeadersMiddleware alone", client([HeadersMiddleware()])),
      row("RequestIDMiddleware alone", client([RequestIDMiddleware()])),
      row("LoggingMiddleware(.none) alone", client([silent])),
      row("LoggingMiddleware(.basic) alone (discarding sink)", client([basic])),
      row("RetryMiddleware alone", client([RetryMiddleware()])),
      row(
        "TimeoutMiddleware alone: (c) the timer thread cancels a RequestCancellation (shipped)",
        client([TimeoutMiddleware()])),
      row(
        "TimeoutMiddleware alone: (a) attempt raced against a sleep in a task group",
        client([TaskGroupTimeoutMiddleware()])),
      row(
        "TimeoutMiddleware alone: (b) one timer task cancels a RequestCancellation",
        client([TokenTimerTimeoutMiddleware()])),
      row("Client, 0 middleware, transport that only knows Task cancellation", unobserving),
      Variant(name: "Client, 0 middleware, Endpoint<Void> (URL build + pipeline)") {
        try await bare.send(endpoint)
      },
      row(
        "Client.standard: the six standard middleware (logging .none)",
        Client.standard(baseURL: base, transport: transport)),
      row(
        "ReachabilityMiddleware alone (shared system monitor)",
        client(SharedPathMonitor.system.map { [ReachabilityMiddleware(monitor: $0)] } ?? [])),
      row("GzipMiddleware alone (plain response)", client([GzipMiddleware()])),
      Variant(
        name:
          "Client, 0 middleware, MetricsObserver (InMemoryMetricsSink, cleared after each round)",
        body: { [c = observedBare] in _ = try await c.send(request) },
        afterRound: { metrics.removeAll() }),
      Variant(
        name: "Client.standard + MetricsObserver (InMemoryMetricsSink, cleared after each round)",
        body: { [c = observedStandard] in _ = try await c.send(request) },
        afterRound: { metrics.removeAll() }),
    ]
    // Warm up: lazy initialisation, first allocations of every path.
    for variant in variants {
      for _ in 0..<1_000 { try await variant.body() }
      variant.afterRound()
    }
    if let only = ProcessInfo.processInfo.environment["COURIER_BENCH_CHAIN_ROW"],
      let row = Int(only), variants.indices.contains(row - 1)
    {
      // One row (numbered as in the table) alone, for profiling it with perf.
      for _ in 0..<(iterations * 5) { try await variants[row - 1].body() }
      return
    }
    var results = Array(repeating: [Measure.Result](), count: variants.count)
    for _ in 0..<5 {
      for (index, variant) in variants.enumerated() {
        results[index].append(try await Measure.run(iterations, variant.body))
        variant.afterRound()
      }
    }
    let ns = results.map { Measure.median($0.map(\.nanoseconds)) }
    // The fewest of the rounds, not the median: the counter counts every thread's mallocs, so
    // other work in the process can only add to a round (a 0.1 per request appeared in some
    // rounds of rows that a malloc uprobe counts at exactly 0 and 2 per request).
    let allocations = results.map { $0.map(\.allocations).min() ?? 0 }
    let bareIndex = 1
    print("### Chain overhead (\(iterations) requests x 5 rounds, median)\n")
    print("Time: the median of the 5 rounds; allocations: the fewest.\n")
    print(
      "| # | variant | ns/request | ns over bare client | ratio to bare client |"
        + " allocations/request | allocations over bare client |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for (index, variant) in variants.enumerated() {
      let over = ns[index] - ns[bareIndex]
      let extra = allocations[index] - allocations[bareIndex]
      print(
        "| \(index + 1) | \(variant.name) | \(Measure.format(ns[index])) | "
          + "\(index == bareIndex ? "" : Measure.format(over)) | "
          + "\(Measure.format(ns[index] / ns[bareIndex], decimals: 2)) | "
          + "\(Measure.format(allocations[index], decimals: 1)) | "
          + "\(index == bareIndex ? "" : Measure.format(extra, decimals: 1)) |")
    }
    let perMiddleware = (ns[2] - ns[bareIndex]) / 6
    let paired = try await Measure.paired(
      pairs: iterations / 500, batch: 500, base: variants[bareIndex].body,
      variant: variants[3].body)
    let goal = paired.median < 3_000 && allocations[3] - allocations[bareIndex] <= 2
    print("\nPer pass-through middleware: \(Measure.format(perMiddleware)) ns  ")
    print(
      "Five middleware (row 4) over the bare client: \(Measure.format(ns[3] - ns[bareIndex])) ns "
        + "from the table, \(Measure.format(paired.median)) ns paired (median of \(paired.count) "
        + "batches of 500 between two of the bare client's; quartiles "
        + "\(Measure.format(paired.lower))–\(Measure.format(paired.upper)) ns; the bare client's "
        + "median batch \(Measure.format(paired.base)) ns), "
        + "\(Measure.format(allocations[3] - allocations[bareIndex], decimals: 1)) allocations "
        + "(goal < 3000 ns paired and <= 2: \(goal ? "met" : "missed"))  ")
    print(
      "Timeout (c) shipped / (a) task group, alone (row 13 / row 14): "
        + "\(Measure.format(ns[12] / ns[13], decimals: 2)) in time, "
        + "\(Measure.format(allocations[12] - allocations[13], decimals: 1)) allocations  ")
    print(
      "Timeout (b) timer task / (a) task group, alone (row 15 / row 14): "
        + "\(Measure.format(ns[14] / ns[13], decimals: 2)) in time, "
        + "\(Measure.format(allocations[14] - allocations[13], decimals: 1)) allocations  ")
    let observed = try await Measure.paired(
      pairs: iterations / 500, batch: 500, base: variants[bareIndex].body,
      variant: variants[20].body)
    let observedPreset = try await Measure.paired(
      pairs: iterations / 500, batch: 500, base: variants[17].body, variant: variants[21].body)
    metrics.removeAll()
    print(
      "MetricsObserver + InMemoryMetricsSink, cost per request: over the bare client (row 21 / "
        + "row 2) \(Measure.format(observed.median)) ns paired (quartiles "
        + "\(Measure.format(observed.lower))–\(Measure.format(observed.upper))), "
        + "\(Measure.format(allocations[20] - allocations[bareIndex], decimals: 1)) allocations; "
        + "over Client.standard (row 22 / row 18) \(Measure.format(observedPreset.median)) ns "
        + "paired (quartiles \(Measure.format(observedPreset.lower))–"
        + "\(Measure.format(observedPreset.upper))), "
        + "\(Measure.format(allocations[21] - allocations[17], decimals: 1)) allocations  ")
    print(
      "Five middleware, timeout (c) / (a) (row 4 / row 7): "
        + "\(Measure.format(ns[3] / ns[6], decimals: 2)) in time, "
        + "\(Measure.format(allocations[3] - allocations[6], decimals: 1)) allocations")
  }
}

/// Design (a) of issue #7, shipped until the timer thread replaced it: the attempt races a
/// sleeping child task in a task group. Correct with any transport (Task cancellation reaches
/// URLSession directly), but two child tasks per attempt.
struct TaskGroupTimeoutMiddleware: Middleware {
  /// The shipped middleware's rules for deadlines and limits, shared.
  let rules = TimeoutMiddleware()
  let clock = ContinuousClock()

  func intercept(_ request: Request, next: Next) async throws -> Response {
    var request = request
    guard let (limit, _) = rules.prepareAttempt(&request) else { return try await next(request) }
    guard limit > .zero else { throw CourierError(kind: .timedOut, request: request) }
    let attemptRequest = request
    let outcome = try await withThrowingTaskGroup(of: Response?.self) { group in
      group.addTask { try await next(attemptRequest) }
      group.addTask { [clock] in
        try await clock.sleep(for: limit)
        return nil
      }
      defer { group.cancelAll() }
      return try await group.next() ?? nil
    }
    guard let response = outcome else { throw CourierError(kind: .timedOut, request: request) }
    return response
  }
}

/// Design (b) of issue #7: like the shipped design (c), the attempt runs inline under a token
/// of its own, but a timer *task* sleeping on the cooperative pool cancels it — one task per
/// attempt, and late whenever blocking work keeps the pool's threads busy.
struct TokenTimerTimeoutMiddleware: Middleware {
  /// The shipped middleware's rules for deadlines and limits, shared.
  let rules = TimeoutMiddleware()
  let clock = ContinuousClock()

  func intercept(_ request: Request, next: Next) async throws -> Response {
    var request = request
    guard let (limit, _) = rules.prepareAttempt(&request) else { return try await next(request) }
    guard limit > .zero else { throw CourierError(kind: .timedOut, request: request) }
    let outer = RequestCancellation.current
    let token = RequestCancellation(parent: outer)
    defer { token.detachFromParent() }
    let timer = Task { [clock] in
      try await clock.sleep(for: limit)
      token.cancel()
    }
    defer { timer.cancel() }
    do {
      return try await RequestCancellation.$current.withValue(token) {
        try await next(request)
      }
    } catch {
      guard token.isCancelled, !(outer?.isCancelled ?? false), !Task.isCancelled else {
        throw error
      }
      throw CourierError(kind: .timedOut, request: request)
    }
  }
}

// MARK: - 2. End to end against MockServer

struct Item: Codable, Sendable {
  let id: Int
  let name: String
  let price: Double
  let tags: [String]
  let owner: Owner
  struct Owner: Codable, Sendable {
    let id: Int
    let login: String
    let verified: Bool
  }
}

enum EndToEndBenchmark {
  static let body = #"""
    {"id":1024,"name":"Courier test item with a reasonably long name","price":129.5,\#
    "tags":["network","swift","linux","middleware","benchmark"],\#
    "owner":{"id":77,"login":"courier-bench-user","verified":true},\#
    "description":"Three hundred bytes of JSON is what a typical small API answer weighs."}
    """#

  static func run(requestsPerRound: Int, rounds: Int) async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.recordsRequests = false
    server.setDispatcher { _ in .json(body) }
    let url = server.url("item")

    let decoder = JSONDecoder()
    func plain(_ session: URLSession) -> () async throws -> Void {
      {
        let (data, response) = try await session.data(for: URLRequest(url: url))
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
          throw URLError(.badServerResponse)
        }
        _ = try decoder.decode(Item.self, from: data)
      }
    }
    func courier(_ transport: URLSessionTransport) -> () async throws -> Void {
      let client = Client(baseURL: server.baseURL, transport: transport)
      let endpoint = Endpoint<Item>(.get, "item")
      return { _ = try await client.send(endpoint) }
    }
    // The simpler cancellation design, measured against the shipped one: each request in a
    // Task that `cancelAll()` cancels, over a transport that does not observe RequestCancellation.
    // Each variant has a session of its own, as the other rows do.
    func bareClient() -> Client {
      let session = URLSession(configuration: URLSessionTransport.defaultConfiguration)
      return Client(baseURL: server.baseURL, transport: BareURLSessionTransport(session: session))
    }
    let taskClient = bareClient()
    let inlineClient = bareClient()
    let endpoint = Endpoint<Item>(.get, "item")
    let registry = TaskRegistry()
    let variants: [(String, () async throws -> Void)] = [
      (
        "plain URLSession(.ephemeral).data(for:) + JSONDecoder",
        plain(URLSession(configuration: .ephemeral))
      ),
      (
        "Courier Client.send(Endpoint<Item>), default URLSessionTransport",
        courier(URLSessionTransport())
      ),
      (
        "plain URLSession, Courier's configuration (ephemeral, no URLCache, no cookies)",
        plain(URLSession(configuration: URLSessionTransport.defaultConfiguration))
      ),
      (
        "Courier on URLSessionTransport(configuration: .ephemeral)",
        courier(URLSessionTransport(configuration: .ephemeral))
      ),
      (
        "simpler design: each request in a Task for cancelAll, no RequestCancellation",
        { _ = try await registry.run { try await taskClient.send(endpoint) } }
      ),
      (
        "no RequestCancellation, no Task: cancelAll cannot reach it (lower bound)",
        { _ = try await inlineClient.send(endpoint) }
      ),
      (
        "plain URLSession(.ephemeral) again (noise control)",
        plain(URLSession(configuration: .ephemeral))
      ),
      (
        "Client.standard: the six standard middleware on URLSessionTransport",
        {
          [standard = Client.standard(baseURL: server.baseURL, transport: URLSessionTransport())] in
          _ = try await standard.send(endpoint)
        }
      ),
      (
        "Courier Client.send(Endpoint<Item>), default CurlTransport",
        {
          [curl = Client(baseURL: server.baseURL, transport: CurlTransport())] in
          _ = try await curl.send(endpoint)
        }
      ),
    ]
    if let only = ProcessInfo.processInfo.environment["COURIER_BENCH_ONLY"], let index = Int(only),
      variants.indices.contains(index)
    {
      // One variant alone, for profiling it with perf.
      for _ in 0..<(rounds * requestsPerRound) { try await variants[index].1() }
      return
    }
    // Warm up every variant: connections, caches, lazy initialisation.
    for _ in 0..<50 {
      for variant in variants { try await variant.1() }
    }
    var totals = Array(repeating: 0.0, count: variants.count)
    var rates = Array(repeating: [Double](), count: variants.count)
    var cpu = Array(repeating: [Double](), count: variants.count)
    var allocations = Array(repeating: [Double](), count: variants.count)
    for round in 0..<rounds {
      // Rotate which goes first so drift hits every variant alike.
      for offset in 0..<variants.count {
        let index = (round + offset) % variants.count
        let result = try await Measure.run(requestsPerRound, variants[index].1)
        totals[index] += result.nanoseconds
        rates[index].append(1e9 / result.nanoseconds)
        cpu[index].append(result.cpuNanoseconds / 1000)
        allocations[index].append(result.allocations)
      }
    }
    let overall = totals.map { Double(rounds) * 1e9 / $0 }
    print(
      "### End to end: GET + decode of a \(body.utf8.count)-byte JSON body from MockServer on"
        + " loopback (\(rounds) rotating rounds x \(requestsPerRound) sequential requests)\n")
    print(
      "| client | req/s | median round req/s | ratio to row 1 |"
        + " process CPU µs/request | allocations/request |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for (index, variant) in variants.enumerated() {
      print(
        "| \(variant.0) | \(Measure.format(overall[index])) | "
          + "\(Measure.format(Measure.median(rates[index]))) | "
          + "\(Measure.format(overall[index] / overall[0], decimals: 3)) | "
          + "\(Measure.format(Measure.median(cpu[index]))) | "
          + "\(Measure.format(Measure.median(allocations[index]))) |")
    }
    func ratio(_ a: Int, _ b: Int) -> String {
      let perRound = zip(rates[a], rates[b]).map { $0 / $1 }
      return "\(Measure.format(overall[a] / overall[b], decimals: 3)) (median per round "
        + "\(Measure.format(Measure.median(perRound), decimals: 3)))"
    }
    print("\nCourier / plain URLSession, each as shipped (row 2 / row 1): \(ratio(1, 0))  ")
    print("Courier / plain URLSession, same configuration (row 2 / row 3): \(ratio(1, 2))  ")
    print("Courier / plain URLSession, same configuration (row 4 / row 1): \(ratio(3, 0))  ")
    print("Simpler design / Courier (row 5 / row 2): \(ratio(4, 1))  ")
    print("Courier / lower bound (row 2 / row 6): \(ratio(1, 5))  ")
    func cpuDifference(_ a: Int, _ b: Int) -> String {
      Measure.format(Measure.median(cpu[a]) - Measure.median(cpu[b]))
    }
    print(
      "CPU µs/request, row 5 - row 2: \(cpuDifference(4, 1)); row 5 - row 6: "
        + "\(cpuDifference(4, 5)); row 2 - row 6: \(cpuDifference(1, 5))  ")
    print("Noise control (row 7 / row 1): \(ratio(6, 0))  ")
    let presetCost = Measure.median(cpu[7]) - Measure.median(cpu[1])
    print(
      "Standard preset / Courier bare client (row 8 / row 2): \(ratio(7, 1)); CPU µs/request "
        + "row 8 - row 2: \(Measure.format(presetCost)) (goal < 10: "
        + "\(presetCost < 10 ? "met" : "missed"))")
    print(
      "Courier on CurlTransport / plain URLSession (row 9 / row 1): \(ratio(8, 0)); "
        + "/ Courier on URLSessionTransport (row 9 / row 2): \(ratio(8, 1))")
  }
}

/// `URLSessionTransport.send` without `RequestCancellation`: cancellation is Swift's only. With
/// `observesRequestCancellation` it runs inline; only a Task around the request (see
/// ``TaskRegistry``) lets `cancelAll()`-style cancellation reach it.
struct BareURLSessionTransport: Transport {
  let session: URLSession

  func send(_ request: Request) async throws -> Response {
    var urlRequest = URLRequest(url: request.url)
    for field in request.headers {
      urlRequest.addValue(field.value, forHTTPHeaderField: field.name.rawName)
    }
    do {
      let (data, urlResponse) = try await session.data(for: urlRequest)
      guard let http = urlResponse as? HTTPURLResponse else { throw URLError(.badServerResponse) }
      let headers = HTTPHeaders(
        received: http.allHeaderFields.compactMap { key, value in
          guard let name = key as? String, let value = value as? String else { return nil }
          return (name, value)
        })
      return Response(status: http.statusCode, headers: headers, body: data, request: request)
    } catch {
      throw URLErrorMapping.courierError(for: error, request: request)
    }
  }

  var observesRequestCancellation: Bool { true }
}

/// What a `Client.send` that runs each request in a Task would add: the task, its
/// registration for `cancelAll()`, and forwarding the caller's cancellation.
final class TaskRegistry: Sendable {
  private let tasks = Mutex([UInt64: @Sendable () -> Void]())
  private let next = Atomic<UInt64>(0)

  func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let task = Task { try await body() }
    let id = next.add(1, ordering: .relaxed).newValue
    tasks.withLock { $0[id] = { task.cancel() } }
    defer { _ = tasks.withLock { $0.removeValue(forKey: id) } }
    return try await withTaskCancellationHandler {
      try await task.value
    } onCancel: {
      task.cancel()
    }
  }
}

// MARK: - 3. Envelope check + payload decode

enum EnvelopeBenchmark {
  /// ``Item`` with its price as a `Float`, which Courier's fast decoding path leaves to
  /// `JSONDecoder`: what a model that always falls back pays.
  struct FloatItem: Decodable, Sendable {
    let id: Int
    let name: String
    let price: Float
    let tags: [String]
    let owner: Item.Owner
  }

  struct Head: Decodable {
    let code: Int
    let msg: String?
  }

  struct Wrapped: Decodable {
    let code: Int
    let msg: String?
    let data: [Item]
  }

  static func run(iterations: Int) throws {
    let items = (0..<4).map { _ in EndToEndBenchmark.body }.joined(separator: ",")
    let payload = Data("[\(items)]".utf8)
    var body = Data(#"{"code":0,"msg":"ok","data":"#.utf8)
    body.append(payload)
    body.append(Data("}".utf8))

    let decoder = JSONDecoder()
    let client = Client(
      baseURL: URL(string: "http://127.0.0.1/")!,
      transport: ChainBenchmark.ImmediateTransport(status: 200),
      pipeline: .envelope(.codeZero))
    let endpoint = Endpoint<[Item]>(.get, "items")
    let response = Response(
      status: 200, body: body, request: Request(url: URL(string: "http://127.0.0.1/items")!))
    // One item, as the end-to-end tables decode it: JSONDecoder against Courier's pipeline
    // (its fast decoding path, which answers as JSONDecoder does; see "Decoding JSON" in
    // Sources/Courier/Courier.docc/ResponsePipelineAndEnvelopes.md).
    let single = Data(EndToEndBenchmark.body.utf8)
    let plainClient = Client(
      baseURL: URL(string: "http://127.0.0.1/")!,
      transport: ChainBenchmark.ImmediateTransport(status: 200))
    let itemEndpoint = Endpoint<Item>(.get, "item")
    let floatEndpoint = Endpoint<FloatItem>(.get, "item")
    let itemResponse = Response(
      status: 200, headers: HTTPHeaders(received: [("Content-Type", "application/json")]),
      body: single,
      request: Request(url: URL(string: "http://127.0.0.1/item")!))

    let variants: [(String, () throws -> Void)] = [
      (
        "plain JSONDecoder on the payload alone",
        {
          _ = try decoder.decode([Item].self, from: payload)
        }
      ),
      (
        "Courier envelope check + decode of data",
        {
          _ = try client.decode(response, for: endpoint)
        }
      ),
      (
        "one item (\(single.count) bytes): plain JSONDecoder",
        {
          _ = try decoder.decode(Item.self, from: single)
        }
      ),
      (
        "one item (\(single.count) bytes): Courier's pipeline (Client.decode)",
        {
          _ = try plainClient.decode(itemResponse, for: itemEndpoint)
        }
      ),
      (
        "one item with a Float price: plain JSONDecoder",
        {
          _ = try decoder.decode(FloatItem.self, from: single)
        }
      ),
      (
        "one item with a Float price: Courier's pipeline (left to JSONDecoder)",
        {
          _ = try plainClient.decode(itemResponse, for: floatEndpoint)
        }
      ),
      (
        "hand-written: decode head, then decode wrapper",
        {
          let head = try decoder.decode(Head.self, from: body)
          guard head.code == 0 else { throw CocoaError(.fileReadUnknown) }
          _ = try decoder.decode(Wrapped.self, from: body).data
        }
      ),
    ]
    var results = Array(repeating: [Measure.Result](), count: variants.count)
    for _ in 0..<5 {
      for (index, variant) in variants.enumerated() {
        results[index].append(try Measure.runSync(iterations, variant.1))
      }
    }
    print(
      "### Envelope: \(body.count)-byte body, \(payload.count)-byte payload"
        + " (\(iterations) decodes x 5 rounds, median)\n")
    print("| variant | ns/decode | allocations/decode | ratio to plain |")
    print("| --- | ---: | ---: | ---: |")
    let baseline = Measure.median(results[0].map(\.nanoseconds))
    for (index, variant) in variants.enumerated() {
      let ns = Measure.median(results[index].map(\.nanoseconds))
      let allocations = Measure.median(results[index].map(\.allocations))
      print(
        "| \(variant.0) | \(Measure.format(ns)) | \(Measure.format(allocations, decimals: 1)) | "
          + "\(Measure.format(ns / baseline, decimals: 2)) |")
    }
  }
}

/// What machine the numbers come from.
enum Machine {
  static func describe() -> String {
    var cpu = "unknown CPU"
    if let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
      let line = info.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
      let name = line.split(separator: ":", maxSplits: 1).last
    {
      cpu = name.trimmingCharacters(in: .whitespaces)
    }
    let cores = ProcessInfo.processInfo.activeProcessorCount
    let memory = Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824
    let os = ProcessInfo.processInfo.operatingSystemVersionString
    let counting = courier_allocation_count() >= 0 ? "counted" : "not counted on this platform"
    return "# courier-bench\nMachine: \(cpu), \(cores) cores, \(Measure.format(memory)) GiB;"
      + " \(os); allocations \(counting)"
  }
}
