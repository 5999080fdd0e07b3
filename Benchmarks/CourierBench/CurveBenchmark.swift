import Courier
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// MARK: - 6. The cost curve: 1 to 1,000 requests in flight

/// Requests per second, CPU per request, peak RSS and connections opened at 1, 16, 64, 256 and
/// 1,000 requests in flight, for `CurlTransport` (a bare client), `Client.standard` (with its
/// default connection limit and with one connection per request in flight), plain `URLSession`
/// and `curl --parallel --parallel-max N`, all against one loopback nginx.
///
/// Every measurement is a process of its own (this executable's `curve-point` mode, or curl),
/// so that its peak RSS (`wait4`'s `ru_maxrss`) is its own. Within a level the rows take turns
/// in rotating rounds, and each figure is the median over the rounds. A Courier process times
/// its requests from the first to the last answer (its start-up excluded); curl is timed from
/// spawn to exit, its start-up of a few milliseconds included. Connections are counted by nginx
/// (one port per row, a log line per new connection).
enum CurveBenchmark {
  /// The in-flight levels of the curve.
  static let levels = [1, 16, 64, 256, 1_000]

  /// One line of the table: a client, and the connections it may open to the server.
  struct Row: Hashable {
    enum Kind: String {
      case curl, bare, standard, urlSession = "urlsession"
    }

    let kind: Kind
    /// The connection limit; `nil` for the client's default, 0 for one per request in flight.
    let connections: Int?

    var key: String { "\(kind.rawValue):\(connections.map(String.init) ?? "default")" }

    var name: String {
      let limit =
        switch connections {
        case nil: "default limit"
        case 0: "N connections"
        case let count?: "\(count) connections"
        }
      return switch kind {
      case .curl: "curl --parallel-max N"
      case .bare: "CurlTransport, bare client, \(limit)"
      case .standard: "Client.standard, \(limit)"
      case .urlSession: "plain URLSession, \(limit)"
      }
    }

    init(_ kind: Kind, _ connections: Int?) {
      self.kind = kind
      self.connections = connections
    }

    init?(key: String) {
      let parts = key.split(separator: ":")
      guard parts.count == 2, let kind = Kind(rawValue: String(parts[0])) else { return nil }
      self.kind = kind
      connections = parts[1] == "default" ? nil : Int(parts[1])
    }

    /// The connection limit at `inFlight` requests in flight, `nil` for the default.
    func limit(inFlight: Int) -> Int? { connections.map { $0 == 0 ? inFlight : $0 } }

    /// The requests of one measurement at `inFlight`: about a second's worth for the fast
    /// clients, a few seconds for URLSession.
    func requests(inFlight: Int, quick: Bool) -> Int {
      let base =
        switch (kind, inFlight) {
        case (.urlSession, 1): 1_000
        case (.urlSession, _): max(2_000, 4 * inFlight)
        case (_, 1): 4_000
        default: max(20_000, 40 * inFlight)
        }
      return quick ? max(inFlight * 4, base / 4) : base
    }
  }

  /// The rows, unless `COURIER_BENCH_CURVE_ROWS` names others (`bare:16,standard:default`).
  static var rows: [Row] {
    if let keys = ProcessInfo.processInfo.environment["COURIER_BENCH_CURVE_ROWS"] {
      return keys.split(separator: ",").compactMap { Row(key: String($0)) }
    }
    return [
      Row(.curl, 0), Row(.bare, 16), Row(.standard, nil), Row(.bare, 0), Row(.urlSession, 0),
    ]
  }

  /// What one measurement found.
  struct Point {
    var requestsPerSecond: Double
    var cpuMicroseconds: Double
    var serverCPUMicroseconds: Double
    var peakRSSKiB: Double
    var connections: Int
    var failures: Int
  }

  static func run(quick: Bool) async throws {
    let rows = Self.rows
    guard let nginx = try NginxProcess.start(ports: rows.count, body: EndToEndBenchmark.body) else {
      print("### Cost curve: skipped (needs nginx)")
      return
    }
    defer { nginx.stop() }
    let curl = ["/usr/bin/curl", "/usr/local/bin/curl"].first {
      FileManager.default.isExecutableFile(atPath: $0)
    }
    let rounds =
      ProcessInfo.processInfo.environment["COURIER_BENCH_CURVE_ROUNDS"].flatMap { Int($0) }
      ?? (quick ? 1 : 5)
    let levels =
      ProcessInfo.processInfo.environment["COURIER_BENCH_CURVE_LEVELS"].map {
        $0.split(separator: ",").compactMap { Int($0) }
      } ?? Self.levels
    print("### Cost curve: GET + decode of a \(EndToEndBenchmark.body.utf8.count)-byte JSON body\n")
    print(
      "nginx \(nginx.version) on 127.0.0.1 (worker_processes auto); medians of \(rounds) "
        + "rotating round(s); every point a process of its own\n")
    var csv = "row,in_flight,req_per_s,cpu_us,server_cpu_us,peak_rss_kib,connections,failures\n"
    var table: [Row: [Int: Point]] = [:]
    for inFlight in levels {
      var samples: [Row: [Point]] = [:]
      for round in 0..<rounds {
        for offset in rows.indices {
          let row = rows[(offset + round) % rows.count]
          let port = nginx.ports[rows.firstIndex(of: row) ?? 0]
          let url = "http://127.0.0.1:\(port)/item"
          let before = (nginx.connectionCounts(), nginx.cpuNanoseconds())
          let requests = row.requests(inFlight: inFlight, quick: quick)
          let point: Point?
          if row.kind == .curl {
            guard let curl else { continue }
            point = measureCurl(curl, url: url, inFlight: inFlight, requests: requests)
          } else {
            point = measureCourier(row, url: url, inFlight: inFlight, requests: requests)
          }
          guard var point else { continue }
          let after = (nginx.connectionCounts(), nginx.cpuNanoseconds())
          let index = rows.firstIndex(of: row) ?? 0
          point.connections = after.0[index] - before.0[index]
          point.serverCPUMicroseconds = (after.1 - before.1) / Double(requests) / 1_000
          samples[row, default: []].append(point)
        }
      }
      for row in rows {
        guard let points = samples[row], !points.isEmpty else { continue }
        let median = Point(
          requestsPerSecond: Measure.median(points.map(\.requestsPerSecond)),
          cpuMicroseconds: Measure.median(points.map(\.cpuMicroseconds)),
          serverCPUMicroseconds: Measure.median(points.map(\.serverCPUMicroseconds)),
          peakRSSKiB: Measure.median(points.map(\.peakRSSKiB)),
          connections: points.map(\.connections).max() ?? 0,
          failures: points.map(\.failures).reduce(0, +))
        table[row, default: [:]][inFlight] = median
        csv +=
          "\(row.key),\(inFlight),\(Int(median.requestsPerSecond)),"
          + "\(Measure.format(median.cpuMicroseconds, decimals: 1)),"
          + "\(Measure.format(median.serverCPUMicroseconds, decimals: 1)),"
          + "\(Int(median.peakRSSKiB)),\(median.connections),\(median.failures)\n"
      }
    }
    print(
      "| client | in flight | req/s | × curl | CPU µs/req | nginx µs/req | peak RSS | conns | lost |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in rows {
      for inFlight in levels {
        guard let point = table[row]?[inFlight] else {
          print("| \(row.name) | \(inFlight) | did not finish | | | | | | |")
          continue
        }
        let ratio =
          table[Row(.curl, 0)]?[inFlight].map {
            Measure.format(point.requestsPerSecond / $0.requestsPerSecond, decimals: 2)
          } ?? "–"
        print(
          "| \(row.name) | \(inFlight) | \(Measure.format(point.requestsPerSecond)) | \(ratio) "
            + "| \(Measure.format(point.cpuMicroseconds, decimals: 1)) "
            + "| \(Measure.format(point.serverCPUMicroseconds, decimals: 1)) "
            + "| \(Measure.format(point.peakRSSKiB / 1_024, decimals: 1)) MiB "
            + "| \(point.connections) | \(point.failures) |")
      }
    }
    print()
    // Memory per request in flight: the peak's growth from one in flight, per extra request.
    for row in rows {
      guard let one = table[row]?[1] else { continue }
      let growth = levels.dropFirst().compactMap { inFlight -> String? in
        guard let point = table[row]?[inFlight] else { return nil }
        let perRequest = (point.peakRSSKiB - one.peakRSSKiB) / Double(inFlight - 1)
        return "\(inFlight): \(Measure.format(perRequest, decimals: 1)) KiB"
      }
      print(
        "Peak RSS growth per extra request in flight, \(row.name): "
          + growth.joined(separator: ", "))
    }
    if let path = ProcessInfo.processInfo.environment["COURIER_BENCH_CURVE_CSV"] {
      try csv.write(toFile: path, atomically: true, encoding: .utf8)
      print("\nCSV written to \(path) (Benchmarks/plot-curve draws it)")
    }
  }

  // MARK: Measuring one point

  /// `curl -Z --parallel-max N` fetching the URL `requests` times (a URL glob), its output
  /// thrown away; timed from spawn to exit. curl caps `--parallel-max` at 300.
  static func measureCurl(_ curl: String, url: String, inFlight: Int, requests: Int) -> Point? {
    var arguments = [curl, "-s", "--fail"]
    if inFlight > 1 { arguments += ["-Z", "--parallel-max", "\(inFlight)"] }
    arguments.append("\(url)?[1-\(requests)]")
    // `wait4`'s peak RSS of a spawned child starts from this process's own (the child shares
    // its memory until `exec`), so curl's is read through GNU time, a small process that forks.
    let peakFile = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-curve-rss-\(getpid()).txt")
    defer { try? FileManager.default.removeItem(at: peakFile) }
    let time = "/usr/bin/time"
    let timed = FileManager.default.isExecutableFile(atPath: time)
    if timed { arguments = [time, "-f", "%M", "-o", peakFile.path] + arguments }
    let start = ContinuousClock.now
    guard let child = spawn(arguments, output: "/dev/null", timeout: .seconds(120)),
      child.status == 0
    else { return nil }
    let seconds = Measure.nanoseconds(ContinuousClock.now - start) / 1e9
    let peak =
      timed
      ? (try? String(contentsOf: peakFile, encoding: .utf8)).flatMap {
        Double($0.trimmingCharacters(in: .whitespacesAndNewlines))
      } : nil
    return Point(
      requestsPerSecond: Double(requests) / seconds,
      cpuMicroseconds: child.cpuNanoseconds / Double(requests) / 1_000,
      serverCPUMicroseconds: 0, peakRSSKiB: peak ?? .nan, connections: 0, failures: 0)
  }

  /// This executable in `curve-point` mode for `row`; it prints what it timed on one line.
  static func measureCourier(_ row: Row, url: String, inFlight: Int, requests: Int) -> Point? {
    let output = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-curve-\(getpid()).txt")
    defer { try? FileManager.default.removeItem(at: output) }
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.path
    let arguments = [
      executable, "curve-point", row.key, url, "\(inFlight)", "\(requests)",
    ]
    guard let child = spawn(arguments, output: output.path, timeout: .seconds(120)),
      child.status == 0,
      let text = try? String(contentsOf: output, encoding: .utf8)
    else { return nil }
    let fields = text.split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
    guard fields.count == 4 else { return nil }
    return Point(
      requestsPerSecond: fields[0], cpuMicroseconds: fields[1], serverCPUMicroseconds: 0,
      peakRSSKiB: fields[3], connections: 0, failures: Int(fields[2]))
  }

  /// The `curve-point` process: `row` sends `requests` GETs of `url`, `inFlight` at a time,
  /// and prints requests per second, CPU µs per request and failures.
  static func point(_ arguments: [String]) async throws {
    guard arguments.count == 4, let row = Row(key: arguments[0]),
      let url = URL(string: arguments[1]), let inFlight = Int(arguments[2]),
      let requests = Int(arguments[3]), inFlight > 0, requests > 0
    else {
      print("usage: courier-bench curve-point <row> <url> <in-flight> <requests>")
      exit(2)
    }
    let base = url.deletingLastPathComponent()
    var curlConfiguration = CurlTransport.Configuration.standard
    let send: @Sendable () async throws -> Void
    let stop: () -> Void
    switch row.kind {
    case .bare, .standard:
      if let limit = row.limit(inFlight: inFlight) {
        curlConfiguration.maximumConnectionsPerHost = limit
      }
      // COURIER_BENCH_EVENT_LOOPS: the transport's loop threads, when not the default.
      if let loops = ProcessInfo.processInfo.environment["COURIER_BENCH_EVENT_LOOPS"]
        .flatMap({ Int($0) })
      {
        curlConfiguration.eventLoops = loops
      }
      let transport = CurlTransport(configuration: curlConfiguration)
      let client =
        row.kind == .bare
        ? Client(baseURL: base, transport: transport)
        : Client.standard(
          baseURL: base, transport: transport, configure: TransportBenchmark.removeMiddleware)
      let endpoint = Endpoint<Item>(.get, "item")
      send = { _ = try await client.send(endpoint) }
      stop = { transport.shutdown() }
    case .urlSession, .curl:
      let configuration = URLSessionConfiguration.ephemeral
      if let limit = row.limit(inFlight: inFlight) {
        configuration.httpMaximumConnectionsPerHost = limit
      }
      let session = URLSession(configuration: configuration)
      let decoder = JSONDecoder()
      send = {
        let (data, response) = try await session.data(for: URLRequest(url: url))
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
          throw URLError(.badServerResponse)
        }
        _ = try decoder.decode(Item.self, from: data)
      }
      stop = { session.invalidateAndCancel() }
    }
    let counters = Counters()
    let cpuBefore = Measure.processCPUTime()
    let start = ContinuousClock.now
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<inFlight {
        group.addTask {
          while counters.next.wrappingAdd(1, ordering: .relaxed).oldValue < requests {
            do { try await send() } catch { counters.failures.add(1, ordering: .relaxed) }
          }
        }
      }
    }
    let seconds = Measure.nanoseconds(ContinuousClock.now - start) / 1e9
    let cpu = Measure.processCPUTime() - cpuBefore
    stop()
    print(
      "\(Double(requests) / seconds) \(cpu / Double(requests) / 1_000) "
        + "\(counters.failures.load(ordering: .relaxed)) \(peakResidentKiB())")
  }

  /// This process's peak resident set since it started (`VmHWM`), in KiB. Not `getrusage`'s
  /// `ru_maxrss`, which counts the parent's memory the process shared before its `exec`.
  static func peakResidentKiB() -> Double {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
    return line.flatMap { Double($0.split(separator: " ").dropFirst().first ?? "") } ?? .nan
  }

  /// What `wait4` said of a child.
  struct Child {
    var status: Int32
    var cpuNanoseconds: Double
  }

  /// Runs `arguments` with standard output to `output`, waits for it (killing it after
  /// `timeout`) and returns its exit status and CPU time (its waited-for children's included).
  static func spawn(_ arguments: [String], output: String, timeout: Duration) -> Child? {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv = arguments.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    guard posix_spawn(&pid, arguments[0], &actions, nil, argv, environ) == 0 else { return nil }
    // Killed if it outlives `timeout`; the waiting itself blocks, so it adds nothing to the
    // child's time.
    let finished = Flag()
    let child = pid
    DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(Int(timeout.components.seconds)))
    {
      if !finished.value.load(ordering: .acquiring) { kill(child, SIGKILL) }
    }
    var status: Int32 = 0
    var usage = rusage()
    let waited = wait4(pid, &status, 0, &usage)
    finished.value.store(true, ordering: .releasing)
    guard waited == pid else { return nil }
    func nanoseconds(_ time: timeval) -> Double {
      Double(time.tv_sec) * 1e9 + Double(time.tv_usec) * 1e3
    }
    let exited = (status & 0x7f) == 0
    return Child(
      status: exited ? (status >> 8) & 0xff : -1,
      cpuNanoseconds: nanoseconds(usage.ru_utime) + nanoseconds(usage.ru_stime))
  }
}

/// A flag shared with a closure that outlives the scope.
final class Flag: Sendable {
  let value = Atomic<Bool>(false)
}

/// The requests a `curve-point` process has taken and those that failed.
final class Counters: Sendable {
  let next = Atomic<Int>(0)
  let failures = Atomic<Int>(0)
}
