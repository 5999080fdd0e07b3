import Courier
import CourierTesting
import Foundation
import Synchronization
import Testing

/// Issue #12, load: 1,000 requests kept in flight through the standard preset against
/// `MockServer`, three rounds. Every response carries the path and the trace id of the
/// request it answers, so a lost, duplicated or crossed response shows; descriptors and
/// resident memory are printed after each round and must stay flat.
@Suite("Load through the standard preset", .serialized, .timeLimit(.minutes(3)))
struct LoadTests {
  static let inFlight = 1_000
  static let rounds = 3

  struct Echo: Decodable, Sendable {
    let path: String
    let trace: String
  }

  /// Open descriptors of this process.
  static func descriptorCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
  }

  /// Resident memory in KiB (`VmRSS`).
  static func residentKiB() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else {
      return -1
    }
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
      ?? -1
  }

  @Test(
    "URLSession: 1,000 in flight, 3 rounds: nothing lost, duplicated or crossed; flat",
    .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd"), "reads /proc"))
  func thousandInFlightOverURLSession() async throws {
    // In a child process: the descriptor and memory figures are then this scenario's alone,
    // not those of the suites running beside it.
    let result = await #expect(
      processExitsWith: .success, observing: [\.standardOutputContent, \.standardErrorContent]
    ) {
      try await LoadTests.scenario(curl: false)
    }
    Self.report(result)
  }

  @Test(
    "libcurl: 1,000 in flight, 3 rounds: nothing lost, duplicated or crossed; flat",
    .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd"), "reads /proc"))
  func thousandInFlightOverCurl() async throws {
    let result = await #expect(
      processExitsWith: .success, observing: [\.standardOutputContent, \.standardErrorContent]
    ) {
      try await LoadTests.scenario(curl: true)
    }
    Self.report(result)
  }

  /// Prints the child's figures, and its standard error when it failed.
  static func report(_ result: ExitTest.Result?) {
    guard let result else { return }
    print(String(decoding: result.standardOutputContent, as: UTF8.self), terminator: "")
    if result.exitStatus != .exitCode(EXIT_SUCCESS) {
      Issue.record("\(String(decoding: result.standardErrorContent, as: UTF8.self))")
    }
  }

  static func scenario(curl: Bool) async throws {
    func require(_ condition: Bool, _ message: @autoclosure () -> String) {
      guard !condition else { return }
      FileHandle.standardError.write(Data((message() + "\n").utf8))
      exit(1)
    }
    let server = try MockServer()
    defer { server.shutdown() }
    server.recordsRequests = false
    server.setDispatcher { request in
      let trace = request.header("traceparent")?.split(separator: "-").dropFirst().first ?? ""
      return .json(#"{"path":"\#(request.path)","trace":"\#(trace)"}"#)
    }
    let transport: any Transport = curl ? CurlTransport() : URLSessionTransport()
    defer {
      (transport as? URLSessionTransport)?.shutdown()
      (transport as? CurlTransport)?.shutdown()
    }
    let name = curl ? "libcurl" : "URLSession"
    let client = Client.standard(baseURL: server.baseURL, transport: transport)
    var figures: [(descriptors: Int, residentKiB: Int, seconds: Double)] = []
    for round in 1...Self.rounds {
      let started = ContinuousClock.now
      let echoes = try await withThrowingTaskGroup(of: (Int, Echo).self) { group in
        for index in 0..<Self.inFlight {
          group.addTask {
            (index, try await client.send(Endpoint<Echo>(.get, "load/\(round)/\(index)")))
          }
        }
        var echoes: [(Int, Echo)] = []
        for try await echo in group { echoes.append(echo) }
        return echoes
      }
      let elapsed = ContinuousClock.now - started
      // Every request answered once, by the answer to its own path, each with its own trace.
      require(echoes.count == Self.inFlight, "round \(round): \(echoes.count) answers")
      require(Set(echoes.map(\.0)).count == Self.inFlight, "round \(round): duplicated answers")
      require(
        echoes.allSatisfy { $0.1.path == "/load/\(round)/\($0.0)" },
        "round \(round): crossed answers")
      require(Set(echoes.map(\.1.trace)).count == Self.inFlight, "round \(round): shared trace ids")
      require(client.inFlightCount == 0, "round \(round): \(client.inFlightCount) still in flight")
      let seconds =
        Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
      figures.append((Self.descriptorCount(), Self.residentKiB(), seconds))
    }
    for (round, figure) in figures.enumerated() {
      print(
        "load, \(name), round \(round + 1): \(Self.inFlight) requests in \(String(format: "%.2f", figure.seconds)) s, "
          + "\(figure.descriptors) descriptors, RSS \(figure.residentKiB) KiB")
    }
    // Flat: the last round holds no more descriptors than the first (connections are reused),
    // and memory grew by less than 16 MiB across the later rounds.
    guard let first = figures.first, let last = figures.last else { return }
    require(last.descriptors <= first.descriptors + 4, "descriptors grew: \(figures)")
    require(last.residentKiB - first.residentKiB < 16 * 1024, "memory grew: \(figures)")
  }
}
