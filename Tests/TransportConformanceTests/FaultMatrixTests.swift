import Courier
import CourierTesting
import Foundation
import Synchronization
import Testing

/// Every ``MockFault`` (and a delay, and `503` with `Retry-After`) against a plain client and
/// the standard preset, over every wire transport: how the request ends, how many attempts
/// reached the server, and how long it took.
///
/// The preset is `Client.standard` with two changes so the matrix stays fast: retry backoff
/// starts at 10 ms (attempts stay at the default 3) and the per-attempt timeout is 1 s (10 s
/// overall). Every request also carries a 1 s transport timeout (``Request/timeout``) and a
/// 1 MiB response body limit, so that the plain client cannot wait for ever either.
///
/// The suite prints the results as a Markdown table, and writes it to the file named by the
/// environment variable `COURIER_FAULT_MATRIX_OUT` when it is set.
@Suite("Fault matrix", .serialized, .timeLimit(.minutes(5)), FaultMatrixReport())
struct FaultMatrixTests {
  @Test("each fault ends as expected, in time, with the expected attempts", arguments: Cell.all)
  func cell(_ cell: Cell) async throws {
    let outcome = try await run(cell)
    let expected = cell.expected
    FaultMatrixReport.record(cell, outcome)
    if let knownIssue = cell.knownIssue {
      withKnownIssue(knownIssue) {
        #expect(outcome.kind == expected.kind, "\(outcome.detail)")
      }
    } else {
      #expect(outcome.kind == expected.kind, "\(outcome.detail)")
    }
    #expect(outcome.attempts == expected.attempts)
    let bound = cell.fault.bound(for: cell.client, over: cell.transport)
    #expect(outcome.elapsed < bound, "\(outcome.elapsed)")
    if let wait = cell.fault.minimumTime(for: cell.client) {
      #expect(outcome.elapsed >= wait, "\(outcome.elapsed)")
    }
    if cell.method == .post {
      #expect(outcome.methods == ["POST"], "a POST went out \(outcome.methods.count) times")
    }
  }

  /// Sends the cell's request and observes how it ends.
  private func run(_ cell: Cell) async throws -> Outcome {
    let server = try MockServer()
    let underTest = cell.transport.make()
    defer {
      underTest.shutdown()
      server.shutdown()
    }
    // One request to another server first, so that the transport's first-use setup (URLSession
    // and libcurl start threads and caches) is not timed; the cell's request still opens a
    // new connection.
    let warmUp = try MockServer()
    defer { warmUp.shutdown() }
    warmUp.enqueue(.text("warm"))
    _ = try await underTest.transport.send(Request(url: warmUp.url("warm")))
    let fault = cell.fault
    server.setDispatcher { request in fault.response(attempt: request.sequenceNumber + 1) }
    let client: Client =
      switch cell.client {
      case .plain:
        Client(baseURL: server.baseURL, transport: underTest.transport, locale: "en")
      case .preset:
        Client.standard(baseURL: server.baseURL, transport: underTest.transport, locale: "en") {
          $0.retry = RetryMiddleware(policy: RetryPolicy(baseDelay: .milliseconds(10)))
          $0.timeout = TimeoutMiddleware(attempt: .seconds(1), overall: .seconds(10))
        }
      }
    var endpoint = Endpoint<Data>(cell.method == .post ? .post : .get, "fault")
      .timeout(.seconds(1))
      .maximumResponseBodySize(1 << 20)
    if cell.method == .post {
      endpoint = endpoint.body(Data("order=1".utf8), contentType: "text/plain")
    }
    let clock = ContinuousClock()
    let start = clock.now
    var kind = "success"
    var detail = ""
    do {
      let body = try await client.response(for: endpoint).value
      detail = "\(body.count) body bytes"
      if fault == .badGzipCRC || fault == .truncatedGzip, body.starts(with: [0x1f, 0x8b]) {
        kind = "success (body still gzip)"
      } else if fault == .truncatedGzip {
        kind = "success (\(body.count) of 1000 bytes)"
      }
    } catch {
      kind = error.kind.name
      detail = String(reflecting: error)
    }
    let elapsed = clock.now - start
    var methods: [String] = []
    for _ in 0..<server.requestCount {
      methods.append(try await server.takeRequest().method)
    }
    return Outcome(
      kind: kind, attempts: server.requestCount, elapsed: elapsed, methods: methods,
      detail: detail)
  }
}

// MARK: - Cells

/// A client configuration the matrix runs.
enum ClientKind: String, Sendable, CaseIterable {
  /// `Client` with no middleware: no retry, no timeout middleware.
  case plain
  /// `Client.standard` with 10 ms base backoff and a 1 s per-attempt timeout.
  case preset
}

/// The request method of a cell.
enum CellMethod: String, Sendable {
  case get = "GET"
  case post = "POST"
}

/// A way for the server to misbehave, scripted per attempt.
enum Fault: String, Sendable, CaseIterable {
  case hang
  case delayBeforeHeaders
  case closeWithoutResponse
  case truncateBody
  case closeAfterBodyBytes
  case resetMidBody
  case throttle
  case malformedStatusLine
  case conflictingContentLength
  case duplicatedContentLength
  case brokenChunking
  case badGzipCRC
  case truncatedGzip
  case oversizedBody
  case retryAfterSeconds
  case retryAfterDate

  /// The name in the table.
  var label: String {
    switch self {
    case .hang: "hang"
    case .delayBeforeHeaders: "delay 5 s before headers"
    case .closeWithoutResponse: "closeWithoutResponse"
    case .truncateBody: "truncateBody"
    case .closeAfterBodyBytes: "closeAfterBodyBytes(100)"
    case .resetMidBody: "resetMidBody"
    case .throttle: "throttle(1000 B/s), 1.5 KB body"
    case .malformedStatusLine: "malformedStatusLine"
    case .conflictingContentLength: "conflictingContentLength"
    case .duplicatedContentLength: "duplicatedContentLength"
    case .brokenChunking: "brokenChunking"
    case .badGzipCRC: "gzip, bad CRC"
    case .truncatedGzip: "gzip cut in half, length complete"
    case .oversizedBody: "8 MiB chunked body (1 MiB limit)"
    case .retryAfterSeconds: "503 + Retry-After: 1, then 200"
    case .retryAfterDate: "503 + Retry-After: date (+2 s), then 200"
    }
  }

  /// What the server answers attempt `attempt` (1-based) with.
  func response(attempt: Int) -> MockResponse {
    let body = Data(repeating: UInt8(ascii: "b"), count: 1000)
    return switch self {
    case .hang: MockResponse(fault: .hang)
    case .delayBeforeHeaders: MockResponse(body: body, delay: .seconds(5))
    case .closeWithoutResponse: MockResponse(fault: .closeWithoutResponse)
    case .truncateBody: MockResponse(body: body, fault: .truncateBody)
    case .closeAfterBodyBytes: MockResponse(body: body, fault: .closeAfterBodyBytes(100))
    case .resetMidBody: MockResponse(body: body, fault: .resetMidBody)
    case .throttle:
      MockResponse(
        body: Data(repeating: 1, count: 1500), fault: .throttle(bytesPerSecond: 1000))
    case .malformedStatusLine: MockResponse(body: body, fault: .malformedStatusLine)
    case .conflictingContentLength: MockResponse(body: body, fault: .conflictingContentLength)
    case .duplicatedContentLength: MockResponse(body: body, fault: .duplicatedContentLength)
    case .brokenChunking: MockResponse(body: body, fault: .brokenChunking)
    case .badGzipCRC: .gzip(Data(#"{"ok":true}"#.utf8), corruptCRC: true)
    case .truncatedGzip: Self.firstHalf(of: .gzip(body, contentType: "text/plain"))
    // Finite: an endless body keeps URLSession's process-wide work queue busy until the
    // cancellation lands, which starves every other URLSession test running beside it.
    case .oversizedBody:
      MockResponse(body: Data(repeating: UInt8(ascii: "x"), count: 8 << 20), chunked: true)
    case .retryAfterSeconds:
      attempt == 1 ? MockResponse(status: 503).retryAfter(seconds: 1) : .text("ok")
    case .retryAfterDate:
      attempt == 1
        ? MockResponse(status: 503).retryAfter(date: Date().addingTimeInterval(2)) : .text("ok")
    }
  }

  /// `response` with the first half of its body, sent with a `Content-Length` that matches:
  /// the HTTP framing is complete, the content inside it is cut.
  private static func firstHalf(of response: MockResponse) -> MockResponse {
    var cut = response
    cut.body = response.body.prefix(response.body.count / 2)
    return cut
  }

  /// The longest a cell may take over `transport`: the time the cell needs alone, plus
  /// ``starvationAllowance``.
  func bound(for client: ClientKind, over transport: TransportKind) -> Duration {
    aloneBound(for: client, over: transport) + Self.starvationAllowance
  }

  /// What a full `swift test` on 2 cores adds to a cell: the timers fire on time, but the
  /// tasks they resume wait for a cooperative pool busy with some 550 other tests. A clean-
  /// clone CI run on a slow day measured a 1 s curl timeout ending the cell after 4.2 s.
  static let starvationAllowance = Duration.seconds(3)

  /// The longest a cell takes over `transport` with the machine to itself.
  private func aloneBound(for client: ClientKind, over transport: TransportKind) -> Duration {
    switch (self, client) {
    // URLSession's cancellation ends these (the transport's timer fires at 1 s): it waits
    // for URLSession's work queue, as URLSession's own timer did, which took 12 and 15 s
    // while LoadTests sent 1000 requests a second over other sessions in the process.
    case (.hang, .plain) where transport == .urlSession,
      (.delayBeforeHeaders, .plain) where transport == .urlSession:
      .seconds(30)
    // Three 1 s attempts, two short backoffs, and the transports' whole-second rounding.
    case (.hang, .preset), (.delayBeforeHeaders, .preset), (.throttle, .preset):
      .seconds(6)
    // The 1 s Request.timeout, a total limit on both transports.
    case (.throttle, .plain): .seconds(4)
    case (.hang, .plain), (.delayBeforeHeaders, .plain): .seconds(4)
    case (.retryAfterDate, .preset): .seconds(5)
    case (.retryAfterSeconds, .preset): .seconds(4)
    default: .seconds(3)
    }
  }

  /// The least a cell must take, where the server asked for a wait.
  func minimumTime(for client: ClientKind) -> Duration? {
    switch (self, client) {
    case (.retryAfterSeconds, .preset), (.retryAfterDate, .preset): .seconds(1)
    default: nil
    }
  }
}

/// One cell of the matrix: a fault, a client, a transport and a method.
struct Cell: Sendable, CustomTestStringConvertible {
  let fault: Fault
  let client: ClientKind
  let transport: TransportKind
  let method: CellMethod

  /// Every fault × client × wire transport with GET, and the POST cells: the faults after
  /// which a resent POST could be a duplicate, through the preset.
  static let all: [Cell] = {
    var cells: [Cell] = []
    for fault in Fault.allCases {
      for client in ClientKind.allCases {
        for transport in TransportKind.wire {
          cells.append(Cell(fault: fault, client: client, transport: transport, method: .get))
        }
      }
    }
    for fault in [Fault.closeWithoutResponse, .resetMidBody, .truncateBody, .hang] {
      for transport in TransportKind.wire {
        cells.append(Cell(fault: fault, client: .preset, transport: transport, method: .post))
      }
    }
    return cells
  }()

  var testDescription: String {
    "\(fault.label) | \(client.rawValue) \(method.rawValue) | \(transport.testDescription)"
  }

  /// Why the cell's transport ends otherwise than ``expected`` says it should, where it does.
  var knownIssue: Comment? {
    if fault == .truncatedGzip && transport == .urlSession {
      return """
        FoundationNetworking's libcurl decodes gzip itself and does not check that the member \
        ended (no CRC-32, no length): a cut member arrives as a shorter plain body, too late \
        for GzipMiddleware to tell
        """
    }
    return nil
  }

  /// The expected kind (or `success`) and the number of requests the server sees.
  ///
  /// GET is retried by the preset on `timedOut` and `connectionLost` (3 attempts in all);
  /// POST never is. Where the transports differ, the comment says why.
  var expected: (kind: String, attempts: Int) {
    let retried = client == .preset && method == .get ? 3 : 1
    let curl = transport == .curl
    switch fault {
    case .hang, .delayBeforeHeaders: return ("timedOut", retried)
    case .closeWithoutResponse, .truncateBody, .closeAfterBodyBytes, .resetMidBody:
      return ("connectionLost", retried)
    case .throttle:
      // The plain client has only the 1 s Request.timeout, a total limit on both transports:
      // URLSession's own is an idle limit, which a slow but steady body never trips (the
      // 1.5 s response arrived, until URLSessionTransport enforced the total itself).
      return ("timedOut", retried)
    case .malformedStatusLine, .brokenChunking: return ("badResponse", 1)
    // libcurl 7.88 (in both) would use the last value; both transports check the fields.
    case .conflictingContentLength: return ("badResponse", 1)
    case .duplicatedContentLength: return ("success", 1)
    case .badGzipCRC:
      // CurlTransport does not decode; without the preset's GzipMiddleware the body arrives
      // still encoded. URLSession on Linux decodes (and checks the CRC) itself.
      if client == .plain && curl { return ("success (body still gzip)", 1) }
      return ("corruptBody", 1)
    case .truncatedGzip:
      // The same over curl. URLSession's libcurl decodes what it has and never checks that the
      // member ended: see `knownIssue`.
      if client == .plain && curl { return ("success (body still gzip)", 1) }
      return ("corruptBody", 1)
    case .oversizedBody: return ("bodyTooLarge", 1)
    case .retryAfterSeconds, .retryAfterDate:
      return client == .preset ? ("success", 2) : ("httpStatus", 1)
    }
  }
}

/// How a cell's request ended.
struct Outcome: Sendable {
  /// `success`, or the `CourierError.Kind` name.
  let kind: String
  /// Requests the server received.
  let attempts: Int
  let elapsed: Duration
  /// The methods of the requests the server received, in order.
  let methods: [String]
  /// The error's debug description or the body size, for failure messages.
  let detail: String
}

// MARK: - The table

/// Collects every cell's outcome and, once the suite has run, prints the Markdown table (and
/// writes it to `COURIER_FAULT_MATRIX_OUT` when set).
struct FaultMatrixReport: SuiteTrait, TestScoping {
  private static let rows = Mutex<[(Cell, Outcome)]>([])

  static func record(_ cell: Cell, _ outcome: Outcome) {
    rows.withLock { $0.append((cell, outcome)) }
  }

  func provideScope(
    for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
  ) async throws {
    try await function()
    let table = Self.table()
    print(table)
    if let path = ProcessInfo.processInfo.environment["COURIER_FAULT_MATRIX_OUT"],
      !path.isEmpty
    {
      try Data(table.utf8).write(to: URL(fileURLWithPath: path))
    }
  }

  /// The rows in matrix order, as Markdown.
  static func table() -> String {
    let faults = Fault.allCases
    let sorted = rows.withLock { $0 }.sorted { left, right in
      let a = (
        faults.firstIndex(of: left.0.fault) ?? 0, left.0.method.rawValue,
        left.0.client.rawValue, left.0.transport.rawValue
      )
      let b = (
        faults.firstIndex(of: right.0.fault) ?? 0, right.0.method.rawValue,
        right.0.client.rawValue, right.0.transport.rawValue
      )
      return a < b
    }
    var lines = [
      "| fault | client | transport | kind | attempts | time ms |",
      "| --- | --- | --- | --- | --- | --- |",
    ]
    for (cell, outcome) in sorted {
      let client = "\(cell.client.rawValue) \(cell.method.rawValue)"
      let (seconds, attoseconds) = outcome.elapsed.components
      let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
      lines.append(
        "| \(cell.fault.label) | \(client) | \(cell.transport.testDescription) | "
          + "\(outcome.kind) | \(outcome.attempts) | \(milliseconds) |")
    }
    return lines.joined(separator: "\n") + "\n"
  }
}
