import Courier
import CourierTesting
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// MARK: - 5. Transports: URLSession against libcurl, one at a time and 16 at once

/// GET + JSON decode of the e2e body through plain `URLSession`, Courier on
/// `URLSessionTransport` and Courier on `CurlTransport`, one request at a time and 16 at once
/// (16 connections allowed to every client), in rotating rounds.
///
/// Each row has a port of its own on the server, so the server can tell how many connections
/// each row opened. The server is a loopback nginx when `nginx` is installed (the issue's
/// reference numbers were measured that way; its CPU is not this process's, so CPU µs/request
/// is the client's alone), else one `MockServer` per row (whose threads' CPU is then counted
/// too). `COURIER_BENCH_SERVER=mock` forces MockServer.
enum TransportBenchmark {
  /// One row: its name and what one request of it does.
  struct Row {
    let name: String
    let send: @Sendable () async throws -> Void
  }

  static func run(
    sequentialRounds: Int, concurrentRounds: Int, presetOnly: Bool = false
  ) async throws {
    let rowNames = [
      "plain URLSession(.ephemeral).data(for:) + JSONDecoder",
      "Courier on URLSessionTransport",
      "Courier on CurlTransport",
      "Client.standard (six middleware) on CurlTransport",
      "Client.standard (six middleware) on URLSessionTransport",
      "Courier on CurlTransport, transfers handed to the loop thread",
    ]
    let server = try BenchServer.start(rows: rowNames.count, body: EndToEndBenchmark.body)
    defer { server.stop() }
    if let only = ProcessInfo.processInfo.environment["COURIER_BENCH_TRANSPORT_ROW"],
      let index = Int(only), rowNames.indices.contains(index)
    {
      // One row alone, for profiling it with perf: sequentially, or with
      // COURIER_BENCH_CONCURRENCY tasks at once.
      let tasks =
        ProcessInfo.processInfo.environment["COURIER_BENCH_CONCURRENCY"]
        .flatMap { Int($0) } ?? 1
      let rows = makeRows(rowNames, server: server, connections: tasks > 1 ? 16 : nil)
      let row = rows.rows[index]
      // COURIER_BENCH_REQUESTS per task, or as many as a full table's rounds.
      let count =
        ProcessInfo.processInfo.environment["COURIER_BENCH_REQUESTS"].flatMap { Int($0) }
        ?? sequentialRounds * 20
      let total = tasks * count
      let cpuBefore = Measure.processCPUTime()
      let splitBefore = Measure.userAndSystemCPUTime()
      let start = ContinuousClock.now
      try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<tasks {
          group.addTask {
            for _ in 0..<count { try await row.send() }
          }
        }
        try await group.waitForAll()
      }
      let elapsed = Measure.nanoseconds(ContinuousClock.now - start)
      let cpu = Measure.processCPUTime() - cpuBefore
      let split = Measure.userAndSystemCPUTime()
      let (user, system) = (split.user - splitBefore.user, split.system - splitBefore.system)
      print(
        "\(row.name): \(total) requests, \(Measure.format(Double(total) * 1e9 / elapsed)) req/s, "
          + "\(Measure.format(cpu / Double(total) / 1000, decimals: 1)) CPU µs/request "
          + "(this process; user \(Measure.format(user / Double(total) / 1000, decimals: 1)) "
          + "+ system \(Measure.format(system / Double(total) / 1000, decimals: 1)))")
      rows.shutdown()
      return
    }
    if presetOnly {
      try await PresetBenchmark.run(server: server, quick: sequentialRounds < 150)
      return
    }
    print("### Transports: GET + decode of a \(EndToEndBenchmark.body.utf8.count)-byte JSON body\n")
    print("Server: \(server.description)\n")
    // COURIER_BENCH_TRANSPORT_TABLE=1 or =16: that table alone, without the preset's.
    let onlyTable = ProcessInfo.processInfo.environment["COURIER_BENCH_TRANSPORT_TABLE"]
      .flatMap { Int($0) }
    for (title, concurrency, rounds) in [
      ("one request at a time", 1, sequentialRounds), ("16 requests at once", 16, concurrentRounds),
    ] where onlyTable == nil || onlyTable == concurrency {
      let rows = makeRows(rowNames, server: server, connections: concurrency == 1 ? nil : 16)
      try await measure(
        rows.rows, title: title, concurrency: concurrency, rounds: rounds, server: server)
      rows.shutdown()
    }
    if onlyTable != nil { return }
    try await PresetBenchmark.run(server: server, quick: sequentialRounds < 150)
  }

  /// Takes out of the preset the middleware that `COURIER_BENCH_STANDARD_WITHOUT` names
  /// (`gzip,retry,…`), to see what each costs end to end.
  static func removeMiddleware(_ preset: inout StandardMiddleware) {
    let without = Set(
      (ProcessInfo.processInfo.environment["COURIER_BENCH_STANDARD_WITHOUT"] ?? "")
        .split(separator: ",").map(String.init))
    if without.contains("headers") { preset.headers = nil }
    if without.contains("requestID") { preset.requestID = nil }
    if without.contains("retry") { preset.retry = nil }
    if without.contains("reachability") { preset.reachability = nil }
    if without.contains("timeout") { preset.timeout = nil }
    if without.contains("logging") { preset.logging = nil }
    if without.contains("gzip") { preset.gzip = nil }
  }

  /// The rows over fresh clients; `connections` per host when given.
  static func makeRows(
    _ names: [String], server: BenchServer, connections: Int?
  ) -> (rows: [Row], shutdown: () -> Void) {
    let decoder = JSONDecoder()
    let configuration = URLSessionConfiguration.ephemeral
    if let connections { configuration.httpMaximumConnectionsPerHost = connections }
    let session = URLSession(configuration: configuration)
    let plainURL = server.url(row: 0)
    let courierConfiguration = URLSessionTransport.defaultConfiguration
    if let connections { courierConfiguration.httpMaximumConnectionsPerHost = connections }
    let urlSessionTransport = URLSessionTransport(configuration: courierConfiguration)
    let urlSessionStandard = URLSessionTransport(configuration: courierConfiguration)
    var curlConfiguration = CurlTransport.Configuration.standard
    if let connections { curlConfiguration.maximumConnectionsPerHost = connections }
    let curl = CurlTransport(configuration: curlConfiguration)
    let curlStandard = CurlTransport(configuration: curlConfiguration)
    var handedConfiguration = curlConfiguration
    handedConfiguration.startsTransfersOnCallingThread = false
    let curlHanded = CurlTransport(configuration: handedConfiguration)
    let endpoint = Endpoint<Item>(.get, "item")
    let onURLSession = Client(baseURL: server.base(row: 1), transport: urlSessionTransport)
    let onCurl = Client(baseURL: server.base(row: 2), transport: curl)
    // COURIER_BENCH_PRESET_CLIENT puts one piece of the preset in its place (PresetBenchmark).
    let standard =
      PresetBenchmark.variantClient(base: server.base(row: 3), transport: curlStandard)
      ?? Client.standard(
        baseURL: server.base(row: 3), transport: curlStandard, configure: removeMiddleware)
    let standardOnURLSession = Client.standard(
      baseURL: server.base(row: 4), transport: urlSessionStandard, configure: removeMiddleware)
    let onCurlHanded = Client(baseURL: server.base(row: 5), transport: curlHanded)
    let rows = [
      Row(name: names[0]) {
        let (data, response) = try await session.data(for: URLRequest(url: plainURL))
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
          throw URLError(.badServerResponse)
        }
        _ = try decoder.decode(Item.self, from: data)
      },
      Row(name: names[1]) { _ = try await onURLSession.send(endpoint) },
      Row(name: names[2]) { _ = try await onCurl.send(endpoint) },
      Row(name: names[3]) { _ = try await standard.send(endpoint) },
      Row(name: names[4]) { _ = try await standardOnURLSession.send(endpoint) },
      Row(name: names[5]) { _ = try await onCurlHanded.send(endpoint) },
    ]
    return (
      rows,
      {
        session.invalidateAndCancel()
        urlSessionTransport.shutdown()
        urlSessionStandard.shutdown()
        curl.shutdown()
        curlStandard.shutdown()
        curlHanded.shutdown()
      }
    )
  }

  static func measure(
    _ rows: [Row], title: String, concurrency: Int, rounds: Int, server: BenchServer
  ) async throws {
    // A round of 16 at once lasts the same time for every row (200 ms of sending,
    // COURIER_BENCH_ROUND_MS): each task sends until the round's deadline, and the round ends
    // when the last request under way has its answer, so all 16 are in flight for the whole
    // round but one request's latency at its end. The issue's goal is a rate *at* 16
    // concurrent. Rounds of a fixed 40 requests per task (the design before, still there with
    // COURIER_BENCH_PER_TASK=40) lasted about 190 ms for plain URLSession but 25 ms for
    // CurlTransport, whose rounds then had fewer than 16 in flight for 6–9 % of their time
    // (from the first task finishing to the last, printed below): the faster the row, the
    // more of it was drain. 200 ms is about as long as URLSession's rounds were.
    let environment = ProcessInfo.processInfo.environment
    let perWorker: Int? =
      concurrency == 1 ? 20 : environment["COURIER_BENCH_PER_TASK"].flatMap { Int($0) }
    let roundTime = Duration.milliseconds(
      environment["COURIER_BENCH_ROUND_MS"].flatMap { Int($0) } ?? 200)
    /// Sends `row`'s requests one after another: `perWorker` of them, or without it until
    /// `deadline`; returns how many it sent.
    @Sendable func stream(_ row: Row, until deadline: ContinuousClock.Instant) async throws -> Int {
      if let perWorker {
        for _ in 0..<perWorker { try await row.send() }
        return perWorker
      }
      var sent = 0
      repeat {
        try await row.send()
        sent += 1
      } while ContinuousClock.now < deadline
      return sent
    }
    /// Runs one round of `row`; returns how many requests it sent and the share of its time
    /// after the first task finished.
    func round(_ row: Row) async throws -> (requests: Int, drain: Double) {
      let start = ContinuousClock.now
      let deadline = start + roundTime
      if concurrency == 1 { return (try await stream(row, until: deadline), 0) }
      return try await withThrowingTaskGroup(of: (Int, ContinuousClock.Instant).self) { group in
        for _ in 0..<concurrency {
          group.addTask { (try await stream(row, until: deadline), ContinuousClock.now) }
        }
        var requests = 0
        var ends: [ContinuousClock.Instant] = []
        for try await (sent, end) in group {
          requests += sent
          ends.append(end)
        }
        guard let first = ends.min(), let last = ends.max(), last > start else {
          return (requests, 0)
        }
        return (requests, Measure.nanoseconds(last - first) / Measure.nanoseconds(last - start))
      }
    }
    let connectionsBefore = server.connectionCounts()
    // Warm up: connections, caches, lazy initialisation.
    for _ in 0..<5 {
      for row in rows { _ = try await round(row) }
    }
    var rates = Array(repeating: [Double](), count: rows.count)
    var cpu = Array(repeating: [Double](), count: rows.count)
    var totals = Array(repeating: 0.0, count: rows.count)
    var clientCPU = Array(repeating: 0.0, count: rows.count)
    var serverCPU = Array(repeating: 0.0, count: rows.count)
    var drains = Array(repeating: [Double](), count: rows.count)
    var requestCounts = Array(repeating: 0, count: rows.count)
    for index in 0..<rounds {
      for offset in 0..<rows.count {
        let row = (index + offset) % rows.count
        let serverBefore = server.serverCPUNanoseconds()
        let cpuBefore = Measure.processCPUTime()
        let start = ContinuousClock.now
        let (requests, drain) = try await round(rows[row])
        drains[row].append(drain)
        requestCounts[row] += requests
        let elapsed = Measure.nanoseconds(ContinuousClock.now - start)
        let used = Measure.processCPUTime() - cpuBefore
        if let serverBefore, let serverAfter = server.serverCPUNanoseconds() {
          serverCPU[row] += serverAfter - serverBefore
        }
        clientCPU[row] += used
        totals[row] += elapsed
        rates[row].append(Double(requests) * 1e9 / elapsed)
        cpu[row].append(used / Double(requests) / 1000)
      }
    }
    let connectionsAfter = server.connectionCounts()
    let roundText =
      perWorker.map { "\(concurrency * $0) requests" }
      ?? "\(Measure.format(Measure.nanoseconds(roundTime) / 1e6)) ms of sending"
    print(
      "#### \(title) (\(rounds) rotating rounds x \(roundText)"
        + (concurrency == 1 ? ")\n" : ", \(concurrency) tasks, 16 connections allowed)\n"))
    print("| client | req/s | median round req/s | ratio to row 1 | CPU µs/request | connections |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    let overall = zip(requestCounts, totals).map { Double($0) * 1e9 / $1 }
    for (index, row) in rows.enumerated() {
      let connections = connectionsAfter[index] - connectionsBefore[index]
      print(
        "| \(row.name) | \(Measure.format(overall[index])) | "
          + "\(Measure.format(Measure.median(rates[index]))) | "
          + "\(Measure.format(overall[index] / overall[0], decimals: 2)) | "
          + "\(Measure.format(Measure.median(cpu[index]))) | \(connections) |")
    }
    let speedup = overall[2] / overall[0]
    let cpuShare = Measure.median(cpu[2]) / Measure.median(cpu[0])
    let goal = concurrency == 1 ? 2.5 : 8
    print(
      "\nCurlTransport / plain URLSession: \(Measure.format(speedup, decimals: 2))× (goal ≥ "
        + "\(Measure.format(goal, decimals: 1))×: \(speedup >= goal ? "met" : "missed")); "
        + "CPU per request \(Measure.format(cpuShare, decimals: 3)) of URLSession's (goal ≤ 0.25: "
        + "\(cpuShare <= 0.25 ? "met" : "missed"))  ")
    print(
      "Courier on CurlTransport / Courier on URLSessionTransport: "
        + "\(Measure.format(overall[2] / overall[1], decimals: 2))×  ")
    // What starting transfers on the calling thread saves: the same transport with every
    // transfer handed to the loop thread through its queue and eventfd (row 6).
    print(
      "CurlTransport, transfers started by their callers / handed to the loop thread (row 3 / "
        + "row 6): \(Measure.format(overall[2] / overall[5], decimals: 2))× requests/s; CPU "
        + "µs/request \(Measure.format(Measure.median(cpu[2]))) against "
        + "\(Measure.format(Measure.median(cpu[5])))  ")
    // Issue #8's goal, with the server's CPU outside the figure (it is nginx's, in another
    // process): what the six standard middleware add to this process per request.
    let overURLSession = Measure.median(cpu[4]) - Measure.median(cpu[1])
    let overCurl = Measure.median(cpu[3]) - Measure.median(cpu[2])
    print(
      "Standard preset over the bare client, client CPU µs/request: on URLSessionTransport "
        + "\(Measure.format(overURLSession)) (row 5 - row 2), on CurlTransport "
        + "\(Measure.format(overCurl)) (row 4 - row 3) (two rows' medians, unpaired: they move "
        + "10–20 µs between runs; issue #8's figure is the paired table below)  ")
    // How busy the machine was during CurlTransport's rounds: this process and nginx
    // together, against every core for the rounds' wall time. Near 1, the row is bound by the
    // machine, not by either side alone.
    let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
    let requests = Double(requestCounts[2])
    let serverShare =
      server.serverCPUNanoseconds() == nil
      ? ""
      : {
        let server = serverCPU[2] / requests / 1000
        let use = (clientCPU[2] + serverCPU[2]) / (totals[2] * cores)
        return "CurlTransport's rounds: client \(Measure.format(clientCPU[2] / requests / 1000)) "
          + "+ nginx \(Measure.format(server)) CPU µs/request; the machine was "
          + "\(Measure.format(use * 100)) % busy (\(Int(cores)) cores)"
      }()
    if concurrency > 1 {
      print(
        "CurlTransport's rounds: fewer than \(concurrency) in flight (after the first task "
          + "finished) for \(Measure.format(Measure.median(drains[2]) * 100)) % of a round "
          + "(median); "
          + (perWorker.map { "\($0) requests per task" }
            ?? "each task sends until the round's deadline")
          + "  ")
    }
    print(serverShare.isEmpty ? "" : serverShare + "\n")
  }
}

/// The loopback server of ``TransportBenchmark``: nginx with one port per row, or one
/// MockServer per row.
final class BenchServer: Sendable, CustomStringConvertible {
  private let ports: [Int]
  private let mocks: [MockServer]
  private let connections: [SeenConnections]
  private let nginx: NginxProcess?
  let description: String

  private init(
    ports: [Int], mocks: [MockServer], connections: [SeenConnections], nginx: NginxProcess?,
    description: String
  ) {
    self.ports = ports
    self.mocks = mocks
    self.connections = connections
    self.nginx = nginx
    self.description = description
  }

  static func start(rows: Int, body: String) throws -> BenchServer {
    let wantsMock = ProcessInfo.processInfo.environment["COURIER_BENCH_SERVER"] == "mock"
    if !wantsMock, let nginx = try NginxProcess.start(ports: rows, body: body) {
      return BenchServer(
        ports: nginx.ports, mocks: [], connections: [], nginx: nginx,
        description: "nginx \(nginx.version) on 127.0.0.1 (worker_processes auto, keep-alive), "
          + "its CPU not counted")
    }
    var mocks: [MockServer] = []
    var connections: [SeenConnections] = []
    for _ in 0..<rows {
      let server = try MockServer()
      server.recordsRequests = false
      let seen = SeenConnections()
      connections.append(seen)
      server.setDispatcher { [body] request in
        seen.insert(request.connectionIndex)
        return .json(body)
      }
      mocks.append(server)
    }
    return BenchServer(
      ports: mocks.map(\.port), mocks: mocks, connections: connections, nginx: nil,
      description: "MockServer on 127.0.0.1, one per row (nginx not found or "
        + "COURIER_BENCH_SERVER=mock); its threads' CPU is counted in this process")
  }

  func base(row: Int) -> URL {
    URL(string: "http://127.0.0.1:\(ports[row])/")!
  }

  func url(row: Int) -> URL {
    URL(string: "http://127.0.0.1:\(ports[row])/item")!
  }

  /// Nanoseconds of CPU nginx's processes (master and workers) have used so far, or `nil`
  /// when the server is MockServer (whose threads are this process's, counted already).
  func serverCPUNanoseconds() -> Double? {
    nginx?.cpuNanoseconds()
  }

  /// How many connections each row's port has accepted so far.
  func connectionCounts() -> [Int] {
    if let nginx { return nginx.connectionCounts() }
    return connections.map(\.count)
  }

  func stop() {
    nginx?.stop()
    for mock in mocks { mock.shutdown() }
  }
}

/// The connection indices a MockServer has answered on.
final class SeenConnections: Sendable {
  private let seen = Mutex(Set<Int>())

  func insert(_ index: Int) {
    _ = seen.withLock { $0.insert(index) }
  }

  var count: Int { seen.withLock { $0.count } }
}

/// A loopback nginx run as a child process, serving the body at `/item` on several ports and
/// logging `port pid-connection` for the first request of each connection, so connections
/// can be counted per port.
final class NginxProcess: Sendable {
  let ports: [Int]
  let version: String
  private let directory: URL
  private let process: Mutex<Process?>

  private init(ports: [Int], version: String, directory: URL, process: Process) {
    self.ports = ports
    self.version = version
    self.directory = directory
    self.process = Mutex(process)
  }

  /// Starts nginx, or returns `nil` when it is not installed.
  static func start(ports count: Int, body: String) throws -> NginxProcess? {
    guard
      let binary = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"].first(where: {
        FileManager.default.isExecutableFile(atPath: $0)
      })
    else { return nil }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-bench-nginx-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    var ports: [Int] = []
    for _ in 0..<count {
      // A port the kernel just handed out and nobody holds any more.
      let probe = try MockServer()
      ports.append(probe.port)
      probe.shutdown()
    }
    let path = directory.path
    let listens = ports.map { "    listen 127.0.0.1:\($0);" }.joined(separator: "\n")
    let configuration = """
      worker_processes auto;
      daemon off;
      pid \(path)/nginx.pid;
      error_log \(path)/error.log warn;
      events { worker_connections 4096; }
      http {
        log_format connections '$server_port $pid-$connection';
        # One line per connection (its first request), not per request: counting connections
        # needs no more, and an unbuffered write per request was nginx CPU that competed with
        # the client for the two cores.
        map $connection_requests $firstOnConnection { 1 1; default 0; }
        access_log \(path)/access.log connections if=$firstOnConnection;
        keepalive_requests 10000000;
        keepalive_timeout 300s;
        client_body_temp_path \(path)/body;
        proxy_temp_path \(path)/proxy;
        fastcgi_temp_path \(path)/fastcgi;
        uwsgi_temp_path \(path)/uwsgi;
        scgi_temp_path \(path)/scgi;
        server {
      \(listens)
          location /item {
            default_type application/json;
            return 200 '\(body)';
          }
        }
      }
      """
    try configuration.write(
      to: directory.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = ["-p", path, "-c", "\(path)/nginx.conf"]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    let version = nginxVersion(binary)
    let nginx = NginxProcess(ports: ports, version: version, directory: directory, process: process)
    // Wait (at most 5 s) until every port accepts connections.
    for _ in 0..<500 {
      if ports.allSatisfy(canConnect) { return nginx }
      usleep(10_000)
    }
    nginx.stop()
    return nil
  }

  private static func nginxVersion(_ binary: String) -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = ["-v"]
    let pipe = Pipe()
    process.standardError = pipe
    guard (try? process.run()) != nil else { return "?" }
    process.waitUntilExit()
    let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    return text.split(separator: "/").last.map {
      $0.trimmingCharacters(in: .whitespacesAndNewlines)
    } ?? "?"
  }

  private static func canConnect(_ port: Int) -> Bool {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { return false }
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
      }
    }
  }

  /// nginx's master and worker processes: the master and the processes whose parent it is.
  private func pids() -> [Int32] {
    guard let master = process.withLock({ $0?.processIdentifier }) else { return [] }
    var pids = [master]
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    for entry in entries {
      guard let pid = Int32(entry), pid != master,
        let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
      else { continue }
      // After "pid (comm) ": the state, then the parent's pid.
      let fields = stat[stat.index(after: close)...].split(separator: " ")
      if fields.count > 1, Int32(fields[1]) == master { pids.append(pid) }
    }
    return pids
  }

  /// The CPU time nginx's processes have used so far, in nanoseconds, from the first field of
  /// `/proc/<pid>/schedstat` (nanosecond resolution; `stat`'s utime and stime count 10 ms
  /// ticks, coarser than a round). nginx's workers are single-threaded.
  func cpuNanoseconds() -> Double {
    var total = 0.0
    for pid in pids() {
      guard let text = try? String(contentsOfFile: "/proc/\(pid)/schedstat", encoding: .utf8),
        let first = text.split(separator: " ").first, let nanoseconds = Double(first)
      else { continue }
      total += nanoseconds
    }
    return total
  }

  /// Distinct connections per port so far, from the access log (nginx writes it unbuffered,
  /// one line when a connection serves its first request).
  func connectionCounts() -> [Int] {
    let log =
      (try? String(
        contentsOf: directory.appendingPathComponent("access.log"), encoding: .utf8)) ?? ""
    var seen: [Int: Set<Substring>] = [:]
    for line in log.split(separator: "\n") {
      let fields = line.split(separator: " ")
      guard fields.count == 2, let port = Int(fields[0]) else { continue }
      seen[port, default: []].insert(fields[1])
    }
    return ports.map { seen[$0]?.count ?? 0 }
  }

  func stop() {
    let process = self.process.withLock { process -> Process? in
      defer { process = nil }
      return process
    }
    guard let process else { return }
    process.terminate()
    process.waitUntilExit()
    try? FileManager.default.removeItem(at: directory)
  }
}
