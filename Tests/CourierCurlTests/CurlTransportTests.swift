import CCourierCurl
import Courier
import CourierTesting
import Foundation
import Testing

@testable import CourierCurl

/// What only `CurlTransport` has: libcurl's error codes, its body limit, content decoding,
/// redirects and interim responses as it handles them, TLS options, signals, and its thread
/// and descriptors. The behaviour it shares with every transport is in
/// `TransportConformanceTests`.
@Suite("CurlTransport", .timeLimit(.minutes(5)))
struct CurlTransportTests {
  // MARK: Errors

  @Test("every CURLcode maps to a kind; the table's landmarks")
  func errorTable() {
    let expected: [Int: CourierError.Kind] = [
      5: .cannotFindHost, 6: .cannotFindHost, 7: .cannotConnect, 8: .badResponse,
      18: .connectionLost, 23: .transport, 26: .invalidRequest, 27: .badResponse, 28: .timedOut,
      35: .secureConnectionFailed, 42: .cancelled, 47: .badResponse, 52: .connectionLost,
      55: .connectionLost, 56: .connectionLost, 60: .secureConnectionFailed, 61: .corruptBody,
      63: .bodyTooLarge, 77: .secureConnectionFailed, 90: .secureConnectionFailed,
      92: .connectionLost, 97: .cannotConnect, 99: .transport, 1_000: .transport,
    ]
    for (code, kind) in expected {
      #expect(CurlErrorMapping.kind(forCode: code) == kind, "CURLcode \(code)")
    }
    for code in 1...99 {
      #expect(!CurlErrorMapping.summary(forCode: code).isEmpty, "CURLcode \(code)")
    }
    #expect(CurlErrorMapping.summary(forCode: 7) == "Couldn't connect to server")
  }

  @Test("libcurl's detail turns a bad status line or chunk into badResponse")
  func errorDetails() {
    let status = "Unsupported response code in HTTP response"
    #expect(CurlErrorMapping.kind(forCode: 1, detail: status) == .badResponse)
    #expect(
      CurlErrorMapping.kind(forCode: 1, detail: "Received HTTP/0.9 when not allowed")
        == .badResponse)
    #expect(
      CurlErrorMapping.kind(forCode: 1, detail: "Protocol \"gopher\" not supported")
        == .invalidRequest)
    let chunk = "Illegal or missing hexadecimal sequence in chunked-encoding"
    #expect(CurlErrorMapping.kind(forCode: 56, detail: chunk) == .badResponse)
    #expect(
      CurlErrorMapping.kind(forCode: 56, detail: "Connection reset by peer") == .connectionLost)
    let oversized = "Too large response headers: 307203 > 307200"
    #expect(CurlErrorMapping.kind(forCode: 56, detail: oversized) == .badResponse)
  }

  @Test(
    "a refused connection: libcurl's detail in debugDescription, never in the reason, URL redacted")
  func refusedConnectionText() async throws {
    let refusing = try RefusingPort()
    defer { withExtendedLifetime(refusing) {} }
    let url = try #require(
      URL(
        string: "http://alice:hunter2@127.0.0.1:\(refusing.port)/x?api_key=SECRET-KEY-123&v=2"))
    let transport = CurlTransport()
    defer { transport.shutdown() }
    let client = Client(transport: transport, locale: "en")
    let failure = try #require(await courierError { try await client.send(Request(url: url)) })
    #expect(failure.kind == .cannotConnect)
    let underlying = try #require(failure.underlying as? CurlError)
    #expect(underlying.code == 7)
    #expect(underlying.detail.contains("Failed to connect"))
    #expect(failure.debugDescription.contains("libcurl error 7 (Couldn't connect to server)"))
    #expect(failure.debugDescription.contains("Failed to connect to 127.0.0.1"))
    #expect(failure.debugDescription.contains("api_key=***&v=***"))
    #expect(failure.reason == "Could not connect to the server. Please try again later.")
    for text in [
      failure.debugDescription, failure.description, failure.localizedDescription, "\(failure)",
    ] {
      #expect(!text.contains("SECRET-KEY-123") && !text.contains("hunter2"), "\(text)")
    }
  }

  @Test("a file body that is a directory is invalidRequest")
  func directoryBody() async throws {
    let fixture = try CurlFixture()
    defer { fixture.shutdown() }
    let error = await courierError {
      try await fixture.client.send(
        Request(
          method: .post, url: fixture.server.url("u"),
          body: .file(FileManager.default.temporaryDirectory)))
    }
    #expect(error?.kind == .invalidRequest)
    #expect(fixture.server.requestCount == 0)
  }

  // MARK: Body limit and decoding

  @Test("a body past maximumResponseBodySize is bodyTooLarge; one at the limit arrives")
  func bodyLimit() async throws {
    var configuration = CurlTransport.Configuration.standard
    configuration.maximumResponseBodySize = 64 * 1024
    let fixture = try CurlFixture(configuration)
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(status: 200, body: Data(count: 64 * 1024)))
    fixture.server.enqueue(MockResponse(status: 200, body: Data(count: 1024 * 1024)))
    fixture.server.enqueue(MockResponse(status: 200, body: Data(count: 100_000), chunked: true))
    #expect(try await fixture.client.send(Endpoint<Data>(.get, "a")).count == 64 * 1024)
    for path in ["b", "c"] {
      let error = await courierError { try await fixture.client.send(Endpoint<Data>(.get, path)) }
      #expect(error?.kind == .bodyTooLarge)
      #expect(error?.debugDescription.contains("64 KiB") == true)
    }
    // The transport still works (the aborted connection was closed, not reused).
    fixture.server.enqueue(.text("ok"))
    #expect(try await fixture.client.send(Endpoint<String>(.get, "d")) == "ok")
  }

  @Test("libcurl decoding on: a gzip bomb stops at the limit, counted after decoding")
  func gzipBombWithAutomaticDecoding() async throws {
    var configuration = CurlTransport.Configuration.standard
    configuration.contentDecoding = .automatic
    configuration.maximumResponseBodySize = 1024 * 1024
    let fixture = try CurlFixture(configuration)
    defer { fixture.shutdown() }
    // 64 MiB of zeros is about 64 KiB of gzip: well under the limit on the wire.
    let bomb = try GzipCompressor.compress(zeros(64 * 1024 * 1024))
    #expect(bomb.count < 1024 * 1024)
    fixture.server.enqueue(
      MockResponse(status: 200, body: bomb).addingHeader("Content-Encoding", "gzip"))
    let error = await courierError { try await fixture.client.send(Endpoint<Data>(.get, "bomb")) }
    #expect(error?.kind == .bodyTooLarge)
    #expect(try await fixture.server.takeRequest().header("Accept-Encoding") != nil)
  }

  @Test("libcurl decoding on: a gzip body arrives decoded, Content-Encoding as sent")
  func automaticDecoding() async throws {
    var configuration = CurlTransport.Configuration.standard
    configuration.contentDecoding = .automatic
    let fixture = try CurlFixture(configuration)
    defer { fixture.shutdown() }
    let json = Data(#"{"name":"Li","age":30}"#.utf8)
    fixture.server.enqueue(
      MockResponse(status: 200, body: try GzipCompressor.compress(json))
        .addingHeader("Content-Encoding", "gzip"))
    let response = try await fixture.client.send(Request(url: fixture.server.url("gz")))
    #expect(response.body == json)
    #expect(response.headers[.contentEncoding] == "gzip")
  }

  @Test("by default nothing asks for compression and bodies arrive as sent")
  func noDecodingByDefault() async throws {
    let fixture = try CurlFixture()
    defer { fixture.shutdown() }
    let compressed = try GzipCompressor.compress(Data("hello".utf8))
    fixture.server.enqueue(
      MockResponse(status: 200, body: compressed).addingHeader("Content-Encoding", "gzip"))
    let response = try await fixture.client.send(Request(url: fixture.server.url("raw")))
    #expect(response.body == compressed)
    #expect(try await fixture.server.takeRequest().header("Accept-Encoding") == nil)
  }

  @Test("GzipMiddleware over curl: a body labelled gzip that is plain JSON still decodes")
  func mislabelledGzip() async throws {
    // URLSession fails this response with -1 "content unencoding" (see
    // TransportHardeningTests.corruptGzipBody); with libcurl's decoding off, GzipMiddleware
    // sees the bytes are not gzip and passes them on.
    let fixture = try CurlFixture(middleware: [GzipMiddleware()])
    defer { fixture.shutdown() }
    fixture.server.enqueue(
      MockResponse.json(#"{"name":"Li","age":30}"#).addingHeader("Content-Encoding", "gzip"))
    let decoded = try await fixture.client.response(for: Endpoint<Profile>(.get, "me"))
    #expect(decoded.value == Profile(name: "Li", age: 30))
    #expect(decoded.response.headers[.contentEncoding] == nil)
  }

  @Test("GzipMiddleware over curl: a gzip response is decoded once, with true headers")
  func gzipDecodedOnce() async throws {
    let fixture = try CurlFixture(middleware: [GzipMiddleware()])
    defer { fixture.shutdown() }
    let json = #"{"name":"\#(String(repeating: "Li Lei ", count: 300))","age":30}"#
    let compressed = try GzipCompressor.compress(Data(json.utf8))
    fixture.server.enqueue(
      MockResponse(status: 200, body: compressed)
        .addingHeader("Content-Type", "application/json")
        .addingHeader("Content-Encoding", "gzip"))
    let decoded = try await fixture.client.response(for: Endpoint<Profile>(.get, "me"))
    #expect(decoded.value.age == 30)
    #expect(decoded.response.body == Data(json.utf8))
    #expect(decoded.response.headers[.contentEncoding] == nil)
    #expect(decoded.response.headers[.contentLength] == String(json.utf8.count))
    #expect(try await fixture.server.takeRequest().header("Accept-Encoding") == "gzip, deflate")
  }

  // MARK: Interim responses and limits (redirects: RedirectConformanceTests)

  @Test("Endpoint.maximumResponseBodySize overrides the transport's limit")
  func perRequestBodyLimit() async throws {
    let fixture = try CurlFixture()
    defer { fixture.shutdown() }
    fixture.server.enqueue(.text(String(repeating: "x", count: 4096)))
    let error = await courierError {
      _ = try await fixture.client.send(
        Endpoint<Data>(.get, "big").maximumResponseBodySize(1024))
    }
    #expect(error?.kind == .bodyTooLarge)
  }

  @Test("an interim 103 response's headers are dropped; the final response's are kept")
  func interimResponse() async throws {
    let reply = Data(
      ("HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
        + "HTTP/1.1 200 OK\r\nX-Final: yes\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        .utf8)
    let server = try RawServer(reply: reply)
    let transport = CurlTransport()
    defer { transport.shutdown() }
    let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/early"))
    let response = try await Client(transport: transport).send(Request(url: url))
    server.finish()
    #expect(response.status == 200)
    #expect(response.bodyText == "ok")
    #expect(response.headers["X-Final"] == "yes")
    #expect(response.headers["Link"] == nil)
  }

  @Test("chunked trailers do not become headers")
  func trailersIgnored() async throws {
    let reply = Data(
      ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        + "2\r\nok\r\n0\r\nX-Trailer: late\r\n\r\n").utf8)
    let server = try RawServer(reply: reply)
    let transport = CurlTransport()
    defer { transport.shutdown() }
    let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/t"))
    let response = try await Client(transport: transport).send(Request(url: url))
    server.finish()
    #expect(response.bodyText == "ok")
    #expect(response.headers["X-Trailer"] == nil)
    #expect(response.headers["Transfer-Encoding"] == "chunked")
  }

  // MARK: Timeouts, cancellation, connections

  @Test("Request.timeout is applied by libcurl to the millisecond, without middleware")
  func libcurlTimeout() async throws {
    let fixture = try CurlFixture()
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(fault: .hang))
    var request = Request(url: fixture.server.url("hang"))
    request.timeout = .milliseconds(200)
    let started = ContinuousClock.now
    let error = await courierError { try await fixture.transport.send(request) }
    #expect(error?.kind == .timedOut)
    #expect((error?.underlying as? CurlError)?.code == 28)
    #expect(ContinuousClock.now - started >= .milliseconds(200))
  }

  @Test(
    "Client.standard over CurlTransport: a hang ends as the preset's timedOut, queued requests too, on no reused connection"
  )
  func presetTimeoutOverLibcurl() async throws {
    var configuration = CurlTransport.Configuration.standard
    configuration.maximumConnectionsPerHost = 1
    let fixture = try CurlFixture(configuration)
    defer { fixture.shutdown() }
    let client = Client.standard(
      baseURL: fixture.server.baseURL, transport: fixture.transport, locale: "en"
    ) {
      $0.retry = nil
      $0.timeout = TimeoutMiddleware(attempt: .milliseconds(300), overall: nil)
    }
    fixture.server.setDispatcher { request in
      request.path.hasSuffix("hang") ? MockResponse(fault: .hang) : .text("ok")
    }
    // Three at once over one connection: two wait in libcurl for it, with their limit running.
    let started = ContinuousClock.now
    let errors = await withTaskGroup(of: CourierError?.self) { group in
      for index in 0..<3 {
        group.addTask {
          await courierError { try await client.send(Endpoint<Data>(.get, "\(index)/hang")) }
        }
      }
      return await group.reduce(into: []) { $0.append($1) }
    }
    #expect(errors.count == 3)
    for error in errors {
      #expect(error?.kind == .timedOut)
      #expect(
        error?.debugDescription.contains("the per-attempt timeout of 0.3 seconds fired") == true,
        "\(String(describing: error))")
    }
    #expect(ContinuousClock.now - started >= .milliseconds(300))
    let ok = try await client.send(Endpoint<Data>(.get, "after"))
    #expect(String(decoding: ok, as: UTF8.self) == "ok")
    var connections: [Int] = []
    for _ in 0..<fixture.server.requestCount {
      connections.append(try await fixture.server.takeRequest().connectionIndex)
    }
    #expect(
      Set(connections).count == connections.count,
      "a timed-out connection was used again: \(connections)")
  }

  @Test("a cancelled transfer's connection is closed")
  func cancellationClosesConnection() async throws {
    // In a child process, whose sockets can be counted without other suites' noise.
    let result = await withTaskExecutorPreference(OwnThreadExecutor.shared) {
      await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
        try await cancellationScenario()
      }
    }
    if let result, result.exitStatus != .exitCode(EXIT_SUCCESS) {
      Issue.record(
        "the child's standard error:\n\(String(decoding: result.standardErrorContent, as: UTF8.self))"
      )
    }
  }

  @Test("connections are reused and capped per host")
  func connectionCap() async throws {
    var configuration = CurlTransport.Configuration.standard
    configuration.maximumConnectionsPerHost = 3
    let fixture = try CurlFixture(configuration)
    defer { fixture.shutdown() }
    fixture.server.setDispatcher { _ in MockResponse(status: 200, delay: .milliseconds(20)) }
    let client = fixture.client
    try await withThrowingTaskGroup(of: Void.self) { group in
      for index in 0..<30 {
        group.addTask { _ = try await client.send(Endpoint<Data>(.get, "c/\(index)")) }
      }
      try await group.waitForAll()
    }
    var connections: Set<Int> = []
    for _ in 0..<30 { connections.insert(try await fixture.server.takeRequest().connectionIndex) }
    #expect(connections.count <= 3)
    #expect(fixture.transport.openedConnections == connections.count)
  }

  @Test(
    "one request at a time, a caller sends its own request: the loop thread is not woken for it",
    arguments: [true, false])
  func callerStartsTransfer(startsOnCaller: Bool) async throws {
    var configuration = CurlTransport.Configuration.standard
    configuration.startsTransfersOnCallingThread = startsOnCaller
    let fixture = try CurlFixture(configuration)
    defer { fixture.shutdown() }
    fixture.server.setDispatcher { request in .text(request.path) }
    // The first request opens the connection (the loop must watch a new socket).
    #expect(try await fixture.client.send(Endpoint<String>(.get, "warm")) == "/warm")
    let before = fixture.transport.loopActivity
    for index in 0..<50 {
      #expect(try await fixture.client.send(Endpoint<String>(.get, "n/\(index)")) == "/n/\(index)")
    }
    let wakeUps = fixture.transport.loopActivity.wakeUps - before.wakeUps
    #expect(fixture.transport.openedConnections == 1)
    if startsOnCaller {
      // Only a caller that found the lock busy at the wrong moment queues and wakes: 0–6 seen,
      // 6 with the whole suite running beside it.
      #expect(wakeUps <= 15, "\(wakeUps) wake-ups for 50 requests")
    } else {
      // Handed to the loop thread, which sleeps between requests: most of them wake it (31–38
      // seen).
      #expect(wakeUps >= 20, "\(wakeUps) wake-ups for 50 requests")
    }
  }

  @Test("a handle's header list reuses the lines sent again at the same place, and only those")
  func headerListReuse() throws {
    let list = CurlHeaderList()
    func build(_ lines: [String]) throws -> [String] {
      list.begin()
      for line in lines { #expect(line.withCString { list.append($0) }) }
      var sent: [String] = []
      var node = list.finish(from: [], extras: 0)
      while let current = node {
        sent.append(try #require(current.pointee.data.map { String(cString: $0) }))
        node = current.pointee.next
      }
      #expect(sent == list.lines)
      return sent
    }
    #expect(try build(["A: 1", "B: 2", "C: 3"]) == ["A: 1", "B: 2", "C: 3"])
    #expect(try build(["A: 1", "B: 9", "C: 3", "D: 4"]) == ["A: 1", "B: 9", "C: 3", "D: 4"])
    #expect(try build(["C: 3", "A: 1"]) == ["C: 3", "A: 1"])
    #expect(try build([]) == [])
    // A build that never finishes (its transfer failed to configure) loses nothing.
    list.begin()
    _ = "X: 1".withCString { list.append($0) }
    #expect(try build(["X: 1", "Y: 2"]) == ["X: 1", "Y: 2"])
  }

  @Test("a list is taken as it is only for the very fields it was built from, with the same extras")
  func headerListReuseByStorage() throws {
    let list = CurlHeaderList()
    var headers = HTTPHeaders()
    try headers.set("X-A", "1")
    let fields = headers.fieldList
    #expect(list.reusable(for: fields, extras: 0) == nil, "nothing built yet")
    list.begin()
    #expect("X-A: 1".withCString { list.append($0) })
    let head = list.finish(from: fields, extras: 0)
    #expect(head != nil)
    #expect(list.reusable(for: headers.fieldList, extras: 0) == head, "the same storage")
    #expect(list.reusable(for: fields, extras: 1) == nil, "other extras")
    // Equal fields in other storage, and changed fields, are built again.
    var copy = HTTPHeaders()
    try copy.set("X-A", "1")
    #expect(list.reusable(for: copy.fieldList, extras: 0) == nil)
    var changed = headers
    try changed.set("X-A", "2")
    #expect(list.reusable(for: changed.fieldList, extras: 0) == nil)
    // A build in progress, or one that never finished, is never taken.
    list.begin()
    #expect(list.reusable(for: fields, extras: 0) == nil)
  }

  @Test("requests on one kept handle send exactly their own header lines")
  func headerLinesAcrossRequests() async throws {
    let fixture = try CurlFixture()
    defer { fixture.shutdown() }
    let sets: [[(String, String)]] = [
      [("X-A", "1"), ("X-B", "2"), ("X-C", "3")], [("X-A", "1"), ("X-B", "9")], [],
      [("X-C", "3"), ("X-A", "1")], [("X-A", "1"), ("X-B", "2"), ("X-C", "3")],
    ]
    for headers in sets {
      fixture.server.enqueue(MockResponse(status: 204))
      var request = Request(url: fixture.server.url("h"))
      for (name, value) in headers { try request.headers.add(name, value) }
      _ = try await fixture.client.send(request)
      let recorded = try await fixture.server.takeRequest()
      let custom = recorded.headers.filter { $0.name.lowercased().hasPrefix("x-") }
      #expect(custom.map(\.name) == headers.map(\.0) && custom.map(\.value) == headers.map(\.1))
    }
    #expect(fixture.transport.openedConnections == 1)
  }

  @Test("one shared default header list, sent again and again between others: always right")
  func sharedHeaderListAcrossRequests() async throws {
    let fixture = try CurlFixture()
    defer { fixture.shutdown() }
    var defaults = HTTPHeaders()
    try defaults.set("X-Default", "d")
    let client = Client(
      baseURL: fixture.server.baseURL, transport: fixture.transport,
      middleware: [HeadersMiddleware(defaults: defaults)])
    fixture.server.setDispatcher { _ in MockResponse(status: 204) }
    // (method, a header of the request's own, a body)
    let steps: [(HTTPMethod, String?, Bool)] = [
      (.get, nil, false), (.get, nil, false), (.post, nil, true), (.get, nil, false),
      (.get, "mine", false), (.get, nil, false), (.post, nil, false), (.get, nil, false),
    ]
    for (method, own, body) in steps {
      var endpoint = Endpoint<Void>(method, "h")
      if let own { endpoint = endpoint.header("X-Own", own) }
      if body { endpoint = endpoint.body(Data("b".utf8), contentType: "text/plain") }
      try await client.send(endpoint)
      let recorded = try await fixture.server.takeRequest()
      #expect(recorded.method == method.rawValue)
      #expect(recorded.header("X-Default") == "d")
      #expect(recorded.header("X-Own") == own)
      #expect(recorded.header("Content-Type") == (body ? "text/plain" : nil))
      #expect(recorded.header("Expect") == nil)
      #expect(recorded.body == (body ? Data("b".utf8) : Data()))
    }
  }

  @Test(
    "a Content-Length list in one field: equal items are one length, different ones a conflict",
    arguments: [
      ("2, 2", true), (" 2 ,2 ", true), ("2,", true), ("02, 2", true), ("2, 3", false),
      ("2,,3", false),
    ])
  func contentLengthList(value: String, accepted: Bool) async throws {
    let server = try RawServer(
      reply: Data("HTTP/1.1 200 OK\r\nContent-Length: \(value)\r\n\r\nok".utf8))
    let transport = CurlTransport()
    defer { transport.shutdown() }
    let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/length"))
    do {
      let response = try await Client(transport: transport).send(Request(url: url))
      #expect(accepted, "Content-Length: \(value) was accepted")
      #expect(response.status == 200 && response.body == Data("ok".utf8))
    } catch {
      #expect(!accepted, "Content-Length: \(value) failed: \(String(reflecting: error))")
      #expect(error.kind == .badResponse)
    }
    server.finish()
  }

  @Test(
    "an idle connection the server closes leaves the poll set, and the next request opens a new one"
  )
  func idleConnectionClosedByServer() async throws {
    // Answers with keep-alive (no `Connection: close`), then closes: libcurl keeps the
    // connection idle, and its socket, still watched for reading, sees the server's FIN.
    let server = try RawServer(
      reply: Data("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8), connections: 2)
    let transport = CurlTransport()
    defer { transport.shutdown() }
    let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/idle"))
    let client = Client(transport: transport)
    let response = try await client.send(Request(url: url))
    #expect(response.status == 200 && response.body == Data("ok".utf8))
    // A window to watch the loop in, not a synchronisation: a loop that kept polling a
    // readable idle socket turns tens of thousands of times in 300 ms (66,709 when the socket
    // was not dropped); a quiet one a few times (the server's FIN, libcurl's timers, up to 6
    // seen with the other suites running beside it, 38 in a window a loaded run stretched).
    // So the bound is a rate over the window as measured.
    let before = transport.loopActivity.turns
    let opened = ContinuousClock.now
    try await Task.sleep(for: .milliseconds(300))
    let turns = transport.loopActivity.turns - before
    let window = ContinuousClock.now - opened
    #expect(
      Double(turns) <= 30 + 100 * (window / .seconds(1)),
      "\(turns) loop turns in \(window) with nothing in flight")
    // The next request finds the kept connection dead and opens a new one: nothing lost.
    let again = try await client.send(Request(url: url))
    #expect(again.status == 200 && again.body == Data("ok".utf8))
    #expect(transport.openedConnections == 2)
    server.finish()
  }

  @Test("POLLNVAL about a number a new socket took is ignored; about a closed descriptor, an error")
  func staleInvalidDescriptor() throws {
    // Callers start transfers while the loop polls: libcurl may close a descriptor the poll
    // was watching and open a new socket under the same number before the loop reads the
    // poll's results. That socket is open, so the POLLNVAL is not about it.
    let interest = CurlSocketInterest()
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    interest.watch(descriptor, what: CURL_POLL_OUT)
    #expect(interest.readiness(descriptor, revents: Int16(POLLNVAL)) == nil)
    #expect(interest.watched[descriptor] == Int16(POLLOUT))
    #expect(interest.readiness(descriptor, revents: Int16(POLLOUT)) == CURL_CSELECT_OUT)
    // Closed behind libcurl's back: libcurl hears of the error, and the number leaves the set
    // (else every poll would return at once). The descriptor is told closed rather than
    // closed for real: the suites beside this one open sockets, and one of them could take
    // the freed number before the check (it did, once, in CI).
    var closed: Set<Int32> = []
    let told = CurlSocketInterest(isOpen: { !closed.contains($0) })
    told.watch(descriptor, what: CURL_POLL_OUT)
    #expect(told.readiness(descriptor, revents: Int16(POLLNVAL)) == nil)
    closed.insert(descriptor)
    #expect(told.readiness(descriptor, revents: Int16(POLLNVAL)) == CURL_CSELECT_ERR)
    #expect(told.watched[descriptor] == nil)
  }

  @Test("an idle HTTP/1 connection with input is dropped, when the loop sees it or before a start")
  func idleConnectionWithInputIsDropped() throws {
    // Unasked bytes on an idle kept-alive connection would be the next request's answer.
    // Each pair stands for a connection: `ours` is libcurl's socket, `server` the server's.
    let interest = CurlSocketInterest()
    func idle(_ socket: Int32) {
      interest.watch(socket, what: CURL_POLL_IN)
      interest.watch(socket, what: CURL_POLL_REMOVE)
      interest.becameIdle(socket)
    }

    // Quiet: kept, and watched for reading.
    let quiet = try SocketPair()
    idle(quiet.ours)
    interest.dropIdleWithInput()
    #expect(interest.idle.contains(quiet.ours))
    #expect(interest.watched[quiet.ours] == Int16(POLLIN))
    #expect(interest.droppedConnections == 0)
    #expect(!quiet.serverSeesEnd())

    // Input the loop has not seen yet: dropped before libcurl may pick the connection.
    quiet.serverSends("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nEVIL")
    interest.dropIdleWithInput()
    #expect(!interest.idle.contains(quiet.ours))
    #expect(interest.watched[quiet.ours] == nil)
    #expect(interest.droppedConnections == 1)
    #expect(quiet.serverSeesEnd())
    // Drained: libcurl's check before reuse reads the end of the stream, not the bytes.
    #expect(quiet.oursReadsEnd())

    // What the loop's poll saw is gone (a caller's thread ran a transfer on the connection
    // meanwhile and read it): kept, and still idle, so the next start checks it. It leaves
    // the set: kept there, it would wake the loop for every answer a caller's thread reads
    // itself.
    let stale = try SocketPair()
    idle(stale.ours)
    #expect(interest.readiness(stale.ours, revents: Int16(POLLIN)) == nil)
    #expect(interest.idle.contains(stale.ours))
    #expect(interest.watched[stale.ours] == nil)
    #expect(interest.droppedConnections == 1)
    #expect(!stale.serverSeesEnd())
    stale.serverSends("EVIL")
    interest.dropIdleWithInput()
    #expect(interest.droppedConnections == 2)
    #expect(stale.serverSeesEnd())

    // Input the loop's poll saw: dropped there.
    let seen = try SocketPair()
    idle(seen.ours)
    seen.serverSends("EVIL")
    #expect(interest.readiness(seen.ours, revents: Int16(POLLIN)) == nil)
    #expect(interest.droppedConnections == 3)
    #expect(seen.serverSeesEnd())

    // In use by a transfer: its answer, passed to libcurl and never dropped. A connection
    // taken again is no longer idle.
    let busy = try SocketPair()
    idle(busy.ours)
    interest.watch(busy.ours, what: CURL_POLL_IN)
    #expect(!interest.idle.contains(busy.ours))
    interest.becameIdle(busy.ours)
    #expect(!interest.idle.contains(busy.ours), "a socket libcurl wants is never idle")
    busy.serverSends("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    interest.dropIdleWithInput()
    #expect(interest.readiness(busy.ours, revents: Int16(POLLIN)) == CURL_CSELECT_IN)
    #expect(interest.droppedConnections == 3)
    #expect(!busy.serverSeesEnd())

    // Not marked idle (an HTTP/2 connection, whose server may send PING or SETTINGS at any
    // time, or a number that is not libcurl's): left out of the set, never shut down.
    let other = try SocketPair()
    interest.watch(other.ours, what: CURL_POLL_IN)
    interest.watch(other.ours, what: CURL_POLL_REMOVE)
    other.serverSends("PING")
    interest.dropIdleWithInput()
    #expect(interest.readiness(other.ours, revents: Int16(POLLIN)) == nil)
    #expect(interest.watched[other.ours] == nil)
    #expect(interest.droppedConnections == 3)
    #expect(!other.serverSeesEnd())

    // Closed by libcurl: its number leaves every set, so a descriptor that takes it later is
    // never shut down.
    let closing = try SocketPair()
    idle(closing.ours)
    interest.closed(closing.ours)
    #expect(!interest.idle.contains(closing.ours))
    #expect(interest.watched[closing.ours] == nil)
  }

  @Test("a descriptor is open until it is closed, and a number nothing holds is not open")
  func descriptorOpenCheck() throws {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    try #require(descriptor >= 0)
    #expect(CurlSocketInterest.isOpenDescriptor(descriptor))
    // The kernel hands out the lowest free number, so one just under the descriptor limit is
    // free while the suites run beside this one: moved there, closed, it stays closed.
    var limit = rlimit()
    try #require(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
    let high = Int32(clamping: min(limit.rlim_cur, 65_536) - 1)
    try #require(high > descriptor && dup2(descriptor, high) == high)
    close(descriptor)
    #expect(CurlSocketInterest.isOpenDescriptor(high))
    close(high)
    #expect(!CurlSocketInterest.isOpenDescriptor(high))
  }

  // MARK: Protocol and TLS options

  @Test("HTTP/1.1 by default; the HTTP/2 opt-in stays HTTP/1.1 without TLS")
  func httpVersion() async throws {
    for version in [CurlTransport.HTTPVersion.http1, .http2] {
      var configuration = CurlTransport.Configuration.standard
      configuration.httpVersion = version
      let fixture = try CurlFixture(configuration)
      defer { fixture.shutdown() }
      fixture.server.enqueue(MockResponse(status: 204))
      _ = try await fixture.client.send(Request(url: fixture.server.url("v")))
      #expect(try await fixture.server.takeRequest().version == "HTTP/1.1")
    }
  }

  @Test(
    "TLS: a CA bundle that cannot be read, or a handshake with a plain server, is secureConnectionFailed"
  )
  func tlsFailures() async throws {
    for tls in [
      CurlTransport.TLS(caBundlePath: "/nonexistent/courier-ca.pem"),
      CurlTransport.TLS(pinnedPublicKey: "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="),
    ] {
      // A server that answers a TLS ClientHello with plain HTTP.
      let server = try RawServer(
        reply: Data("HTTP/1.1 400 Bad Request\r\n\r\n".utf8), readsHead: false)
      let url = try #require(URL(string: "https://127.0.0.1:\(server.port)/tls"))
      var configuration = CurlTransport.Configuration.standard
      configuration.tls = tls
      let transport = CurlTransport(configuration: configuration)
      defer { transport.shutdown() }
      let error = await courierError {
        try await Client(transport: transport).send(Request(url: url))
      }
      server.finish()
      #expect(error?.kind == .secureConnectionFailed, "\(String(reflecting: error))")
    }
  }

  @Test("the description names what changes the wire")
  func description() {
    #expect(
      CurlTransport().description
        == "CurlTransport(HTTP/1.1; 16 connections per host; body limit 32 MiB; decoding: none)")
    let configuration = CurlTransport.Configuration.standard
    #expect(configuration.maximumResponseBodySize == ResponsePipeline.defaultMaximumDecodedBodySize)
    #expect(configuration.connectTimeout == .seconds(10))
    #expect(configuration.idleTimeout == .seconds(60))
  }

  // MARK: Signals, threads, descriptors

  @Test("SIGPIPE is blocked on the event-loop thread, where libcurl reads and writes the most")
  func sigpipeBlocked() async throws {
    let fixture = try CurlFixture()
    defer { fixture.shutdown() }
    // The loop thread names itself when it starts: one answered request proves it has.
    fixture.server.enqueue(.text("ok"))
    _ = try await fixture.client.send(Request(url: fixture.server.url("ping")))
    let loops = threads(named: "courier-curl")
    #expect(!loops.isEmpty)
    var checked = 0
    for task in loops {
      // Other suites' transports start and stop loop threads meanwhile: skip one that ended.
      guard
        let status = try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8)
      else { continue }
      checked += 1
      let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("SigBlk:") })
      let mask = try #require(
        UInt64(line.dropFirst(7).trimmingCharacters(in: .whitespaces), radix: 16))
      #expect(mask & (1 << (UInt64(SIGPIPE) - 1)) != 0)
    }
    #expect(checked > 0, "this transport's loop thread is alive and was checked")
  }

  @Test("uploading to a peer that resets the connection fails cleanly, the process lives on")
  func uploadToResettingPeer() async throws {
    let server = try RawServer(reply: Data(), reset: true)
    let transport = CurlTransport()
    defer { transport.shutdown() }
    let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/upload"))
    let request = Request(method: .post, url: url, body: .data(Data(count: 8 * 1024 * 1024)))
    let error = await courierError { try await Client(transport: transport).send(request) }
    server.finish()
    #expect(
      [.connectionLost, .badResponse, .cannotConnect].contains(error?.kind),
      "\(String(reflecting: error))")
  }

  @Test("descriptors and threads are back to their starting counts after shutdown")
  func resourcesReleased() async throws {
    // In a child process: other suites open and close descriptors and threads all the time.
    let result = await withTaskExecutorPreference(OwnThreadExecutor.shared) {
      await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
        try await resourcesScenario()
      }
    }
    if let result, result.exitStatus != .exitCode(EXIT_SUCCESS) {
      Issue.record(
        "the child's standard error:\n\(String(decoding: result.standardErrorContent, as: UTF8.self))"
      )
    }
  }
}

/// A hanging request is cancelled: both ends of its connection must close (the server closes
/// its end when it reads the client's FIN; a connection left open would keep both).
private func cancellationScenario() async throws {
  let server = try MockServer()
  defer { server.shutdown() }
  let transport = CurlTransport()
  defer { transport.shutdown() }
  let client = Client(baseURL: server.baseURL, transport: transport)
  let baseline = openSockets()
  server.enqueue(MockResponse(fault: .hang))
  let task = Task { try await client.send(Endpoint<Data>(.get, "hang")) }
  _ = try await server.takeRequest()
  #expect(openSockets() == baseline + 2)
  task.cancel()
  #expect(await courierError { try await task.linkedValue }?.kind == .cancelled)
  // No event says when the server thread has seen the FIN: look, for at most 2 s.
  for _ in 0..<400 where openSockets() > baseline {
    try await Task.sleep(for: .milliseconds(5))
  }
  #expect(openSockets() == baseline, "\(openDescriptors())")
  #expect(transport.openedConnections == 1)
}

struct Profile: Codable, Sendable, Equatable {
  let name: String
  let age: Int
}

/// Five transports that send, keep connections alive, cancel and time out, then shut down (with
/// a request in flight or not), one shut down by being dropped, and 50 dropped clients of
/// `Client.standard`'s default transport: descriptors and threads must be back where they
/// started.
private func resourcesScenario() async throws {
  let file = FileManager.default.temporaryDirectory.appendingPathComponent(
    "courier-curl-\(UUID().uuidString).bin")
  try Data(count: 100_000).write(to: file)
  defer { try? FileManager.default.removeItem(at: file) }
  // One round first, for what the process keeps once: libcurl's global state, the
  // cooperative pool's threads, the timerfd Dispatch opens for its first timer. And the
  // process's path monitor, which Client.standard's reachability starts on first use (its
  // netlink socket and thread, one per process), and the timer thread TimeoutMiddleware
  // starts on first use (one per process).
  _ = SharedPathMonitor.system
  do {
    let server = try MockServer()
    try await resourcesRound(0, server: server, file: file)
    let client = Client.standard(baseURL: server.baseURL)
    #expect(try await client.send(Endpoint<String>(.get, "timer")) == "ok")
    server.shutdown()
  }
  let before = processResources()
  let descriptorsBefore = openDescriptors()
  // MockServer.shutdown() joins its threads and closes its sockets, so the server is measured
  // out as well.
  let server = try MockServer()
  for round in 0..<5 { try await resourcesRound(round, server: server, file: file) }
  do {
    // Dropped without shutdown(): deinit shuts it down and joins its thread.
    let transport = CurlTransport()
    let client = Client(baseURL: server.baseURL, transport: transport)
    #expect(try await client.send(Endpoint<String>(.get, "dropped")) == "ok")
  }
  // Client.standard's own CurlTransport (Linux), a client made and dropped for each request,
  // as a careless caller would: each one's thread and connection go with it.
  for index in 0..<50 {
    let client = Client.standard(baseURL: server.baseURL)
    #expect(try await client.send(Endpoint<String>(.get, "standard/\(index)")) == "ok")
  }
  server.shutdown()
  let after = processResources()
  #expect(
    after.descriptors == before.descriptors,
    "descriptors \(before) → \(after): \(descriptorsBefore) → \(openDescriptors())")
  // The process may end a thread of its own meanwhile (a Dispatch worker, under TSan its
  // helper); none may be left over.
  #expect(after.threads <= before.threads, "threads \(before) → \(after)")
  #expect(threads(named: "courier-curl").isEmpty)
}

/// One transport: 10 keep-alive requests, a file upload, then three hanging requests — one
/// cancelled, one timed out by libcurl, one left for shutdown (odd rounds: for cancelAll).
private func resourcesRound(_ round: Int, server: MockServer, file: URL) async throws {
  server.setDispatcher { request in
    request.path.hasPrefix("/hang") ? MockResponse(fault: .hang) : .text("ok")
  }
  let transport = CurlTransport()
  let client = Client(baseURL: server.baseURL, transport: transport)
  for index in 0..<10 {
    #expect(try await client.send(Endpoint<String>(.get, "ok/\(index)")) == "ok")
  }
  _ = try await client.send(Request(method: .post, url: server.url("file"), body: .file(file)))
  let hanging = Task { try await client.send(Endpoint<Data>(.get, "hang/cancel")) }
  let timedOut = Task {
    try await client.send(Endpoint<Data>(.get, "hang/timeout").timeout(.milliseconds(300)))
  }
  let left = Task { try await client.send(Endpoint<Data>(.get, "hang/shutdown")) }
  while server.requestCount < (round + 1) * 14 { _ = try await server.takeRequest() }
  hanging.cancel()
  #expect(await courierError { try await hanging.linkedValue }?.kind == .cancelled)
  #expect(await courierError { try await timedOut.linkedValue }?.kind == .timedOut)
  if !round.isMultiple(of: 2) { #expect(client.cancelAll() == 1) }
  transport.shutdown()
  #expect(await courierError { try await left.linkedValue }?.kind == .cancelled)
}
