import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// One test at a time, so that the timing assertions are not distorted by the others.
@Suite("MockServer", .serialized, .timeLimit(.minutes(5)))
struct MockServerTests {
  // MARK: - Round trips

  @Test("enqueue + takeRequest round trip records method, target, headers and body")
  func roundTrip() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let session = makeSession()
    defer { session.invalidateAndCancel() }

    server.enqueue(.json(#"{"ok":true}"#, status: 201))
    server.enqueue(.text("second"))

    var request = URLRequest(url: server.url("/a%20b/c?x=1&y=2"))
    request.httpMethod = "POST"
    request.setValue("Some Value", forHTTPHeaderField: "X-Custom-Header")
    request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
    request.httpBody = Data("hello, server".utf8)
    let (data, response) = try await session.data(for: request)
    let http = try #require(response as? HTTPURLResponse)
    #expect(http.statusCode == 201)
    #expect(http.value(forHTTPHeaderField: "Content-Type") == "application/json")
    #expect(String(decoding: data, as: UTF8.self) == #"{"ok":true}"#)

    let recorded = try await server.takeRequest()
    #expect(recorded.method == "POST")
    #expect(recorded.target == "/a%20b/c?x=1&y=2")
    #expect(recorded.path == "/a%20b/c")
    #expect(recorded.query == "x=1&y=2")
    #expect(recorded.version == "HTTP/1.1")
    #expect(recorded.header("x-custom-header") == "Some Value")
    #expect(recorded.header("X-CUSTOM-HEADER") == "Some Value")
    #expect(recorded.header("Missing") == nil)
    #expect(String(decoding: recorded.body, as: UTF8.self) == "hello, server")
    #expect(recorded.header("content-length") == "13")
    #expect(recorded.sequenceNumber == 0)

    let (second, _) = try await session.data(from: server.url("plain"))
    #expect(String(decoding: second, as: UTF8.self) == "second")
    let recordedSecond = try await server.takeRequest()
    #expect(recordedSecond.method == "GET")
    #expect(recordedSecond.path == "/plain")
    #expect(recordedSecond.query == nil)
    #expect(recordedSecond.body.isEmpty)
    #expect(recordedSecond.sequenceNumber == 1)
    #expect(server.requestCount == 2)
  }

  @Test("baseURL and url(_:) point at the bound port")
  func urls() throws {
    let server = try MockServer()
    defer { server.shutdown() }
    #expect(server.port > 0)
    #expect(server.baseURL.absoluteString == "http://127.0.0.1:\(server.port)/")
    #expect(server.url("/x/y?z=1").absoluteString == "http://127.0.0.1:\(server.port)/x/y?z=1")
    #expect(server.url("x").absoluteString == "http://127.0.0.1:\(server.port)/x")
    #expect(server.url("/a%20b").absoluteString.hasSuffix("/a%20b"))
    #expect(throws: MockServerError.self) { _ = try MockServer(host: "not-an-address") }
  }

  @Test("the dispatcher answers when the queue is empty; without one the answer is 404")
  func dispatcher() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let session = makeSession()
    defer { session.invalidateAndCancel() }

    let (emptyBody, notFound) = try await session.data(from: server.url("/nothing"))
    #expect((notFound as? HTTPURLResponse)?.statusCode == 404)
    #expect(emptyBody.isEmpty)

    server.setDispatcher { request in
      .text("dispatched \(request.method) \(request.path)", status: 202)
    }
    let (body, dispatched) = try await session.data(from: server.url("/dynamic?q=1"))
    #expect((dispatched as? HTTPURLResponse)?.statusCode == 202)
    #expect(String(decoding: body, as: UTF8.self) == "dispatched GET /dynamic")

    server.enqueue(.text("queued"))
    let (queued, _) = try await session.data(from: server.url("/q"))
    #expect(String(decoding: queued, as: UTF8.self) == "queued")

    server.setDispatcher(nil)
    let (_, again) = try await session.data(from: server.url("/gone"))
    #expect((again as? HTTPURLResponse)?.statusCode == 404)
    #expect(server.requestCount == 4)
  }

  // MARK: - Framing

  @Test("a chunked request body from a raw client is de-chunked (extensions and trailers)")
  func chunkedRequestBody() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(.text("got it", status: 201))

    let client = try RawClient(port: server.port)
    defer { client.close() }
    // Sent in pieces so that chunk boundaries straddle reads.
    try client.send(
      "POST /upload?kind=chunked HTTP/1.1\r\nHost: localhost\r\n"
        + "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n5;name=value\r\nhel")
    try client.send("lo\r\n7\r\n, world\r\n")
    try client.send("16\r\n and twenty-two more b\r\n")
    try client.send("0\r\nX-Trailer: yes\r\n\r\n")

    let response = try client.readToEnd()
    #expect(response.hasPrefix("HTTP/1.1 201 Created\r\n"))
    #expect(response.contains("Content-Length: 6\r\n"))
    #expect(response.contains("Connection: close\r\n"))
    #expect(response.hasSuffix("\r\n\r\ngot it"))

    let recorded = try await server.takeRequest()
    #expect(String(decoding: recorded.body, as: UTF8.self) == "hello, world and twenty-two more b")
    #expect(recorded.header("transfer-encoding") == "chunked")
    #expect(recorded.header("X-Trailer") == nil)
    #expect(recorded.query == "kind=chunked")
  }

  @Test("a chunked response is decoded by URLSession")
  func chunkedResponse() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let payload = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    server.enqueue(MockResponse(body: payload, chunked: true))
    server.enqueue(MockResponse(body: Data("abc".utf8), chunked: true))

    let session = makeSession()
    defer { session.invalidateAndCancel() }
    let (data, response) = try await session.data(from: server.url("/chunked"))
    #expect((response as? HTTPURLResponse)?.statusCode == 200)
    #expect(data == payload)

    // On the wire: chunked framing and no Content-Length.
    let client = try RawClient(port: server.port)
    defer { client.close() }
    try client.send("GET /raw HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    let raw = try client.readToEnd()
    #expect(raw.contains("Transfer-Encoding: chunked\r\n"))
    #expect(!raw.contains("Content-Length"))
    #expect(raw.hasSuffix("\r\n\r\n3\r\nabc\r\n0\r\n\r\n"))
  }

  @Test("HEAD gets headers only; 204 gets no Content-Length")
  func headAndNoContent() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(.text("twelve bytes"))
    server.enqueue(MockResponse(status: 204))
    server.enqueue(.text("after"))

    let client = try RawClient(port: server.port)
    defer { client.close() }
    try client.send("HEAD /h HTTP/1.1\r\nHost: localhost\r\n\r\n")
    let head = try client.readResponse(expectBody: false)
    #expect(head.head.hasPrefix("HTTP/1.1 200 OK\r\n"))
    #expect(head.head.contains("Content-Length: 12\r\n"))
    try client.send("DELETE /d HTTP/1.1\r\nHost: localhost\r\n\r\n")
    let noContent = try client.readResponse(expectBody: false)
    #expect(noContent.head.hasPrefix("HTTP/1.1 204 No Content\r\n"))
    #expect(!noContent.head.contains("Content-Length"))
    // Had the HEAD response carried a body, this response would be misparsed.
    try client.send("GET /after HTTP/1.1\r\nHost: localhost\r\n\r\n")
    let after = try client.readResponse()
    #expect(String(decoding: after.body, as: UTF8.self) == "after")
    #expect(try await server.takeRequest().method == "HEAD")
  }

  @Test("Expect: 100-continue is answered before the body is read")
  func expectContinue() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(.text("done"))

    let client = try RawClient(port: server.port)
    defer { client.close() }
    try client.send(
      "PUT /up HTTP/1.1\r\nHost: localhost\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
    let interim = try client.read(until: "\r\n\r\n")
    #expect(interim == "HTTP/1.1 100 Continue\r\n\r\n")
    try client.send("data")
    let final = try client.readResponse()
    #expect(final.head.hasPrefix("HTTP/1.1 200 OK\r\n"))
    #expect(String(decoding: try await server.takeRequest().body, as: UTF8.self) == "data")
  }

  @Test("an oversized header block gets 431 and malformed requests get 400")
  func rejections() async throws {
    let server = try MockServer()
    defer { server.shutdown() }

    let big = try RawClient(port: server.port)
    defer { big.close() }
    let filler = String(repeating: "a", count: 70 * 1024)
    try big.send("GET / HTTP/1.1\r\nHost: localhost\r\nX-Big: \(filler)\r\n\r\n")
    #expect(try big.readToEnd().hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n"))

    let bad = try RawClient(port: server.port)
    defer { bad.close() }
    try bad.send("NONSENSE\r\n\r\n")
    #expect(try bad.readToEnd().hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
    #expect(server.requestCount == 0)
  }

  // MARK: - Connections

  @Test("sequential requests on one URLSession reuse the keep-alive connection")
  func keepAlive() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let session = makeSession()
    defer { session.invalidateAndCancel() }
    server.enqueue(.text("one"))
    server.enqueue(.text("two"))

    _ = try await session.data(from: server.url("/1"))
    _ = try await session.data(from: server.url("/2"))
    let first = try await server.takeRequest()
    let second = try await server.takeRequest()
    #expect(first.path == "/1")
    #expect(second.path == "/2")
    #expect(first.connectionIndex == second.connectionIndex)
  }

  @Test("pipelined requests are answered in order; Connection: close ends the connection")
  func pipelining() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(.text("first"))
    server.enqueue(.text("second"))

    let client = try RawClient(port: server.port)
    defer { client.close() }
    try client.send(
      "GET /1 HTTP/1.1\r\nHost: localhost\r\n\r\n"
        + "GET /2 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    let responses = try client.readToEnd()
    #expect(responses.hasPrefix("HTTP/1.1 200 OK\r\n"))
    #expect(responses.contains("\r\n\r\nfirstHTTP/1.1 200 OK\r\n"))
    #expect(responses.hasSuffix("Connection: close\r\n\r\nsecond"))

    let first = try await server.takeRequest()
    let second = try await server.takeRequest()
    #expect([first.path, second.path] == ["/1", "/2"])
    #expect(first.connectionIndex == second.connectionIndex)
  }

  // MARK: - Large bodies

  @Test("5 MB request and response bodies")
  func largeBodies() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let session = makeSession()
    defer { session.invalidateAndCancel() }
    let upload = patternedData(count: 5_000_000, seed: 3)
    let download = patternedData(count: 5_242_880, seed: 11)
    server.enqueue(.text("stored"))
    server.enqueue(MockResponse(body: download))

    var request = URLRequest(url: server.url("/upload"))
    request.httpMethod = "POST"
    let (reply, _) = try await session.upload(for: request, from: upload)
    #expect(String(decoding: reply, as: UTF8.self) == "stored")
    let recorded = try await server.takeRequest()
    #expect(recorded.body.count == upload.count)
    #expect(recorded.body == upload)

    let (data, _) = try await session.data(from: server.url("/download"))
    #expect(data.count == download.count)
    #expect(data == download)
  }

  // MARK: - Faults

  @Test("closeWithoutResponse makes URLSession fail with a connection error")
  func closeWithoutResponse() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let session = makeSession()
    defer { session.invalidateAndCancel() }
    server.enqueue(MockResponse(fault: .closeWithoutResponse))

    let error = await #expect(throws: URLError.self) {
      _ = try await session.data(from: server.url("/drop"))
    }
    let connectionErrors: Set<URLError.Code> = [
      .networkConnectionLost, .badServerResponse, .cannotParseResponse, .zeroByteResource,
    ]
    // libcurl reports "Empty reply from server", which Foundation maps to badServerResponse.
    let code = try #require(error?.code)
    #expect(connectionErrors.contains(code), "\(code)")
    #expect(try await server.takeRequest().path == "/drop")
  }

  @Test("truncateBody makes URLSession fail")
  func truncateBody() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let session = makeSession()
    defer { session.invalidateAndCancel() }
    server.enqueue(MockResponse(body: Data(repeating: 7, count: 10_000), fault: .truncateBody))

    await #expect(throws: URLError.self) {
      _ = try await session.data(from: server.url("/short"))
    }

    // On the wire: the full Content-Length, then half the body, then end of stream.
    server.enqueue(.text("0123456789").with(fault: .truncateBody))
    let client = try RawClient(port: server.port)
    defer { client.close() }
    try client.send("GET /raw HTTP/1.1\r\nHost: localhost\r\n\r\n")
    let raw = try client.readToEnd()
    #expect(raw.contains("Content-Length: 10\r\n"))
    #expect(raw.hasSuffix("\r\n\r\n01234"))
  }

  @Test("a hanging request can be cancelled by the client, and shutdown stays prompt")
  func hangAndCancel() async throws {
    let server = try MockServer()
    let session = makeSession()
    defer { session.invalidateAndCancel() }
    server.enqueue(MockResponse(fault: .hang))

    let (outcomes, outcome) = AsyncStream<(any Error)?>.makeStream()
    let task = session.dataTask(with: server.url("/hang")) { _, _, error in
      outcome.yield(error)
      outcome.finish()
    }
    task.resume()
    let recorded = try await server.takeRequest()
    #expect(recorded.path == "/hang")
    task.cancel()
    var iterator = outcomes.makeAsyncIterator()
    let error = try #require(await iterator.next())
    #expect((error as? URLError)?.code == .cancelled)

    // Shutdown must not wait for the hanging connection: the suite's time limit fails a hang.
    server.shutdown()
  }

  // MARK: - Lifecycle

  @Test(
    "shutdown with 20 hanging or delayed connections is prompt and releases everything",
    .enabled(if: hasProcFS, "counts descriptors and threads through /proc")
  )
  func shutdownReleasesEverything() async {
    // Runs in a child process, where no concurrently running test can open or close
    // descriptors or threads between the measurements, so the totals can be compared exactly.
    _ = await withTaskExecutorPreference(OwnThreadExecutor.shared) {
      await #expect(processExitsWith: .success) {
        try await shutdownScenario()
      }
    }
  }

  @Test(
    "shutdown called from inside the dispatcher neither deadlocks nor stalls",
    .enabled(if: hasProcFS, "inspects threads through /proc")
  )
  func shutdownFromDispatcher() async throws {
    let server = try MockServer()
    let (shutdowns, shutdownDone) = AsyncStream<Void>.makeStream()
    server.setDispatcher { _ in
      server.shutdown()
      shutdownDone.yield()
      shutdownDone.finish()
      return .text("bye")
    }
    let client = try RawClient(port: server.port)
    defer { client.close() }
    try client.send("GET /stop HTTP/1.1\r\nHost: localhost\r\n\r\n")
    // The connection was shut down under the dispatcher, so the answer cannot be written.
    #expect(try client.readToEnd().isEmpty)
    #expect(try await server.takeRequest().path == "/stop")
    // The shutdown inside the dispatcher returned (a deadlock fails the time limit).
    var iterator = shutdowns.makeAsyncIterator()
    #expect(await iterator.next() != nil)
    // The accept thread has been joined; the connection thread finishes on its own.
    #expect(serverThreads(port: server.port, suffix: "a") == 0)
  }

  @Test(
    "dropping the last reference shuts the server down",
    .enabled(if: hasProcFS, "inspects threads through /proc")
  )
  func deinitShutsDown() async throws {
    var server: MockServer? = try MockServer()
    let port = try #require(server).port
    try #require(server).enqueue(MockResponse(fault: .hang))
    let client = try RawClient(port: port)
    defer { client.close() }
    try client.send("GET /hang HTTP/1.1\r\nHost: localhost\r\n\r\n")
    _ = try await #require(server).takeRequest()
    #expect(serverThreads(port: port) == 2)
    server = nil
    #expect(try client.readToEnd().isEmpty)
    #expect(serverThreads(port: port) == 0)
    // Nothing listens on the port any more, unless another test's server has since been given
    // the same port by the kernel (seen once in a full run on a loaded machine); that one
    // would have its own accept thread.
    let reconnected = try? RawClient(port: port)
    reconnected?.close()
    #expect(reconnected == nil || serverThreads(port: port) > 0)
  }

  @Test("a delayed response is sent after the delay; the client closing ends the wait")
  func delay() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(.text("late").with(delay: .milliseconds(300)))
    server.enqueue(.text("never").with(delay: .seconds(600)))

    let client = try RawClient(port: server.port)
    defer { client.close() }
    let clock = ContinuousClock()
    let start = clock.now
    try client.send("GET /late HTTP/1.1\r\nHost: localhost\r\n\r\n")
    let response = try client.readResponse()
    #expect(clock.now - start >= .milliseconds(300))
    #expect(String(decoding: response.body, as: UTF8.self) == "late")

    let other = try RawClient(port: server.port)
    try other.send("GET /never HTTP/1.1\r\nHost: localhost\r\n\r\n")
    _ = try await server.takeRequest()
    _ = try await server.takeRequest()
    other.close()
    // The server notices the close; a new request still gets served promptly.
    server.enqueue(.text("fresh"))
    try client.send("GET /fresh HTTP/1.1\r\nHost: localhost\r\n\r\n")
    #expect(String(decoding: try client.readResponse().body, as: UTF8.self) == "fresh")
  }

  // MARK: - takeRequest

  @Test("with recordsRequests off, requests are counted and dispatched but not kept")
  func recordingOff() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.setDispatcher { .text($0.path) }
    server.recordsRequests = false
    #expect(server.recordsRequests == false)

    let client = try RawClient(port: server.port)
    defer { client.close() }
    try client.send("GET /dropped HTTP/1.1\r\nHost: localhost\r\n\r\n")
    #expect(String(decoding: try client.readResponse().body, as: UTF8.self) == "/dropped")
    #expect(server.requestCount == 1)
    await #expect(throws: MockServerError.self) {
      _ = try await server.takeRequest(timeout: .milliseconds(50))
    }

    server.recordsRequests = true
    try client.send("GET /kept HTTP/1.1\r\nHost: localhost\r\n\r\n")
    _ = try client.readResponse()
    #expect(try await server.takeRequest().path == "/kept")
  }

  @Test("takeRequest times out, honours cancellation, and fails after shutdown")
  func takeRequestFailures() async throws {
    let server = try MockServer()

    let clock = ContinuousClock()
    let start = clock.now
    let timeout = await #expect(throws: MockServerError.self) {
      _ = try await server.takeRequest(timeout: .milliseconds(200))
    }
    #expect(clock.now - start >= .milliseconds(200))
    #expect(timeout?.message.contains("timed out") == true)

    let waiting = Task { try await server.takeRequest(timeout: .seconds(60)) }
    waiting.cancel()
    await #expect(throws: CancellationError.self) { _ = try await waiting.linkedValue }

    // A waiter is woken by a request that arrives later.
    let pending = Task { try await server.takeRequest() }
    let client = try RawClient(port: server.port)
    defer { client.close() }
    try client.send("GET /later HTTP/1.1\r\nHost: localhost\r\n\r\n")
    #expect(try await pending.linkedValue.path == "/later")
    #expect(try client.readResponse().head.hasPrefix("HTTP/1.1 404 Not Found\r\n"))

    // A waiter is failed by shutdown.
    let (started, startedSignal) = AsyncStream<Void>.makeStream()
    let orphan = Task {
      startedSignal.finish()
      return try await server.takeRequest(timeout: .seconds(60))
    }
    for await _ in started {}
    server.shutdown()
    await #expect(throws: MockServerError.self) { _ = try await orphan.linkedValue }
    await #expect(throws: MockServerError.self) { _ = try await server.takeRequest() }
  }
}

/// The body of ``MockServerTests/shutdownReleasesEverything()``.
private func shutdownScenario() async throws {
  // Warm up: the runtime creates some descriptors lazily on first use (Dispatch's timerfd
  // for the first timed wait, for example). Those are not the server's.
  let warmUp = try MockServer()
  warmUp.enqueue(MockResponse(delay: .milliseconds(1)))
  let warmUpClient = try RawClient(port: warmUp.port)
  try warmUpClient.send("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
  _ = try warmUpClient.readToEnd()
  warmUpClient.close()
  _ = try await warmUp.takeRequest(timeout: .seconds(10))
  _ = try? await warmUp.takeRequest(timeout: .milliseconds(1))
  warmUp.shutdown()

  let baseline = ProcessProbe.descriptors()
  let server = try MockServer()
  let afterInit = ProcessProbe.descriptors()
  // The wake pipe: pipes that appeared while the server was being created.
  let serverPipes = Set(afterInit.values.filter { $0.hasPrefix("pipe:") })
    .subtracting(baseline.values)
  #expect(serverPipes.count == 1)
  let port = server.port

  server.setDispatcher { request in
    request.path == "/hang"
      ? MockResponse(fault: .hang) : MockResponse(delay: .seconds(600))
  }
  var clients: [RawClient] = []
  defer { for client in clients { client.close() } }
  for index in 0..<20 {
    let client = try RawClient(port: port)
    clients.append(client)
    let path = index.isMultiple(of: 2) ? "/hang" : "/delay"
    try client.send("GET \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n")
  }
  var connections = Set<Int>()
  for _ in 0..<20 {
    connections.insert(try await server.takeRequest().connectionIndex)
  }
  #expect(connections.count == 20)
  #expect(serverThreads(port: port) == 21)  // 20 connections + the accept thread
  // Listener + 20 accepted + 20 client sockets.
  #expect(descriptors(in: ProcessProbe.descriptors(), forPort: port).count == 41)

  // Shutdown must not wait for the 600 s delays; the test's time limit fails a hang.
  server.shutdown()
  server.shutdown()  // idempotent

  // Every client sees the connection end without a response.
  for client in clients {
    #expect(try client.readToEnd().isEmpty)
  }
  for client in clients { client.close() }
  clients.removeAll()

  let after = ProcessProbe.descriptors()
  #expect(descriptors(in: after, forPort: port).isEmpty)
  #expect(Set(after.values).isDisjoint(with: serverPipes))
  #expect(serverThreads(port: port) == 0)
  // The runtime opens and closes its own eventfd, timerfd and epoll descriptors on worker
  // threads as load comes and goes (seen in full parallel runs); the server uses only sockets
  // and one pipe, so compare everything else.
  let own = { (descriptors: [Int32: String]) in
    descriptors.filter { !$0.value.hasPrefix("anon_inode:") }
  }
  let opened = own(after).filter { baseline[$0.key] != $0.value }
  let closed = own(baseline).filter { after[$0.key] != $0.value }
  #expect(own(after).count == own(baseline).count, "opened: \(opened), closed: \(closed)")
}

// MARK: - Helpers

/// Whether `/proc` describes this process's descriptors and threads (Linux).
private let hasProcFS = FileManager.default.fileExists(atPath: "/proc/self/task")

extension MockResponse {
  fileprivate func with(fault: MockFault? = nil, delay: Duration = .zero) -> MockResponse {
    var copy = self
    copy.fault = fault
    copy.delay = delay
    return copy
  }
}

/// `count` bytes of a pattern that repeats only every 251 bytes, so that a dropped, duplicated
/// or reordered block of a large body is detected.
private func patternedData(count: Int, seed: UInt8) -> Data {
  let period = (0..<251).map { UInt8(truncatingIfNeeded: $0 &* 7) &+ seed }
  var data = Data(capacity: count + period.count)
  while data.count < count { data.append(contentsOf: period) }
  return data.prefix(count)
}

private func makeSession() -> URLSession {
  let configuration = URLSessionConfiguration.ephemeral
  configuration.timeoutIntervalForRequest = 30
  return URLSession(configuration: configuration)
}

/// The descriptors in `snapshot` that are TCP sockets with `port` at either end.
private func descriptors(in snapshot: [Int32: String], forPort port: Int) -> [Int32] {
  var inodes = Set<String>()
  for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
    let text = readProcFile(table)
    for line in text.split(separator: "\n").dropFirst() {
      let fields = line.split(separator: " ")
      guard fields.count > 9 else { continue }
      let ports = [fields[1], fields[2]].compactMap { $0.split(separator: ":").last }
        .compactMap { Int($0, radix: 16) }
      if ports.contains(port) { inodes.insert("socket:[\(fields[9])]") }
    }
  }
  return snapshot.filter { inodes.contains($0.value) }.map(\.key)
}

/// The number of live threads named after the server on `port` (`MS<port>…`), optionally
/// only those whose name continues with `suffix` (`a` is the accept thread).
private func serverThreads(port: Int, suffix: String = "") -> Int {
  let directory = "/proc/self/task"
  guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
    return -1
  }
  return tasks.count { task in
    let comm = readProcFile("\(directory)/\(task)/comm")
    return comm.hasPrefix("MS\(port)\(suffix)")
  }
}

/// Reads a whole procfs file (whose size is reported as 0, and which is produced in pieces).
private func readProcFile(_ path: String) -> String {
  let fd = open(path, O_RDONLY | O_CLOEXEC)
  guard fd >= 0 else { return "" }
  defer { _ = close(fd) }
  var contents: [UInt8] = []
  var buffer = [UInt8](repeating: 0, count: 16_384)
  while true {
    let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    guard count > 0 else { break }
    contents.append(contentsOf: buffer[..<count])
  }
  return String(decoding: contents, as: UTF8.self)
}

/// `close(2)`; `RawClient.close()` hides the global function inside the class.
private func closeDescriptor(_ fd: Int32) {
  _ = close(fd)
}

/// `send(2)` without SIGPIPE; `RawClient.send(_:)` hides the global function inside the class.
private func sendBytes(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
  #if canImport(Glibc)
    send(fd, bytes, count, Int32(MSG_NOSIGNAL))
  #else
    send(fd, bytes, count, 0)  // SO_NOSIGPIPE is set on the socket instead.
  #endif
}

/// A blocking TCP client on a raw socket, so tests control exactly what is sent and which
/// descriptors exist.
final class RawClient {
  private var fd: Int32
  private var pending: [UInt8] = []
  /// Whether a read failed with "connection reset by peer" (the server sent RST).
  private(set) var sawReset = false

  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  init(port: Int) throws {
    #if canImport(Glibc)
      fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
      fd = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard fd >= 0 else { throw Failure(description: "socket() failed") }
    #if canImport(Darwin)
      var one: Int32 = 1
      _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
    #endif
    // Bound every read so that a broken server fails the test instead of hanging it.
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    _ = setsockopt(
      fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else {
      close()
      throw Failure(description: "connect() failed: errno \(errno)")
    }
  }

  deinit { close() }

  func close() {
    if fd >= 0 {
      closeDescriptor(fd)
      fd = -1
    }
  }

  func send(_ text: String) throws {
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
      let sent = bytes[offset...].withUnsafeBytes {
        sendBytes(fd, $0.baseAddress, $0.count)
      }
      guard sent > 0 else { throw Failure(description: "send() failed: errno \(errno)") }
      offset += sent
    }
  }

  /// Reads more bytes into `pending`; returns false at end of stream.
  private func fill() throws -> Bool {
    var buffer = [UInt8](repeating: 0, count: 65_536)
    let received = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
    if received < 0 {
      if errno == ECONNRESET {
        sawReset = true
        return false
      }
      throw Failure(description: "recv() failed: errno \(errno)")
    }
    pending.append(contentsOf: buffer[..<received])
    return received > 0
  }

  /// Reads until the peer closes the connection; returns everything as text.
  func readToEnd() throws -> String {
    while try fill() {}
    defer { pending.removeAll() }
    return String(decoding: pending, as: UTF8.self)
  }

  /// Reads until the peer closes or resets the connection; returns every byte.
  func readAllBytes() throws -> [UInt8] {
    while try fill() {}
    defer { pending.removeAll() }
    return pending
  }

  /// Reads exactly `count` more bytes.
  func read(count: Int) throws -> [UInt8] {
    try readBytes(count)
  }

  /// Reads up to and including `marker`.
  func read(until marker: String) throws -> String {
    let needle = Array(marker.utf8)
    while true {
      if let range = firstRange(of: needle) {
        defer { pending.removeSubrange(..<range.upperBound) }
        return String(decoding: pending[..<range.upperBound], as: UTF8.self)
      }
      guard try fill() else { throw Failure(description: "connection closed early") }
    }
  }

  /// Reads one response framed by Content-Length; `expectBody: false` for responses that
  /// have none whatever their headers say (HEAD, 204).
  func readResponse(expectBody: Bool = true) throws -> (head: String, body: [UInt8]) {
    let head = try read(until: "\r\n\r\n")
    var length = 0
    if expectBody {
      for line in head.split(separator: "\r\n") {
        let parts = line.split(separator: ":", maxSplits: 1)
        if parts.count == 2, parts[0].lowercased() == "content-length" {
          length = Int(parts[1].trimmingCharacters(in: .whitespaces)) ?? 0
        }
      }
    }
    return (head, try readBytes(length))
  }

  private func readBytes(_ count: Int) throws -> [UInt8] {
    while pending.count < count {
      guard try fill() else { throw Failure(description: "connection closed early") }
    }
    defer { pending.removeSubrange(..<count) }
    return Array(pending[..<count])
  }

  private func firstRange(of needle: [UInt8]) -> Range<Int>? {
    guard pending.count >= needle.count else { return nil }
    for start in 0...(pending.count - needle.count)
    where pending[start..<start + needle.count].elementsEqual(needle) {
      return start..<start + needle.count
    }
    return nil
  }
}

// MARK: - Request bodies on disk, and the multipart parser

extension MockServerTests {
  /// A new, empty folder under the temporary directory.
  private static func makeFolder() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "mockserver-bodies-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
  }

  @Test("requestBodyDirectory: chunked and Content-Length bodies go to files, byte for byte")
  func bodiesToFiles() async throws {
    let folder = try Self.makeFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let server = try MockServer()
    defer { server.shutdown() }
    server.requestBodyDirectory = folder
    #expect(server.requestBodyDirectory == folder)

    let raw = try RawClient(port: server.port)
    defer { raw.close() }
    try raw.send(
      "POST /c HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n"
        + "Connection: close\r\n\r\n5;x=y\r\nhel")
    try raw.send("lo\r\n7\r\n, world\r\n0\r\nX-Trailer: 1\r\n\r\n")
    #expect(try raw.readToEnd().hasPrefix("HTTP/1.1 404 Not Found\r\n"))
    let chunked = try await server.takeRequest()
    #expect(chunked.body.isEmpty)
    let chunkedFile = try #require(chunked.bodyFile)
    #expect(try Data(contentsOf: chunkedFile) == Data("hello, world".utf8))

    let session = makeSession()
    defer { session.invalidateAndCancel() }
    let payload = patternedData(count: 3 * 1024 * 1024 + 3, seed: 5)
    var request = URLRequest(url: server.url("/upload"))
    request.httpMethod = "PUT"
    server.enqueue(MockResponse(status: 204))
    let (_, response) = try await session.upload(for: request, from: payload)
    #expect((response as? HTTPURLResponse)?.statusCode == 204)
    let recorded = try await server.takeRequest()
    let file = try #require(recorded.bodyFile)
    #expect(file != chunkedFile)
    #expect(try Data(contentsOf: file) == payload)

    // A request without a body gets no file.
    server.enqueue(MockResponse(status: 200))
    _ = try await session.data(from: server.url("/plain"))
    #expect(try await server.takeRequest().bodyFile == nil)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).count == 2)
  }

  @Test("a body over 256 MiB gets 413 in memory, but is accepted when it goes to a file")
  func fileBodyLimit() async throws {
    let folder = try Self.makeFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let server = try MockServer()
    defer { server.shutdown() }
    let head =
      "POST /big HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(300 * 1024 * 1024)\r\n"
      + "Expect: 100-continue\r\n\r\n"

    let refused = try RawClient(port: server.port)
    defer { refused.close() }
    try refused.send(head)
    #expect(try refused.readToEnd().hasPrefix("HTTP/1.1 413 Content Too Large\r\n"))

    server.requestBodyDirectory = folder
    let accepted = try RawClient(port: server.port)
    defer { accepted.close() }
    try accepted.send(head)
    #expect(try accepted.read(until: "\r\n\r\n").hasPrefix("HTTP/1.1 100 Continue\r\n"))
    #expect(server.requestCount == 0)
  }

  @Test("MultipartParts: memory and file parsing agree, with preamble, padding and epilogue")
  func multipartParsing() throws {
    let folder = try Self.makeFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let big = patternedData(count: 2 * 1024 * 1024 + 11, seed: 9)
    var body = Data("preamble\r\n--sep  \r\n".utf8)
    body += Data("Content-Disposition: form-data; name=\"a;b\"\r\n\r\nshort\r\n".utf8)
    body += Data("--sep\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x.bin\"".utf8)
    body += Data("; filename*=UTF-8''%C3%A9.bin\r\nContent-Type: application/x\r\n\r\n".utf8)
    body += big
    body += Data("\r\n--sep\r\nContent-Disposition: form-data; name=\"empty\"\r\n\r\n".utf8)
    body += Data("\r\n--sep--\r\nepilogue".utf8)
    let file = folder.appendingPathComponent("body")
    try body.write(to: file)

    let inMemory = try MultipartParts.parse(body, boundary: "sep")
    let fromFile = try MultipartParts.parse(fileAt: file, boundary: "sep")
    #expect(inMemory.map(\.contentRange) == fromFile.map(\.contentRange))
    #expect(inMemory.map(\.name) == ["a;b", "f", "empty"])
    #expect(inMemory[0].content == Data("short".utf8))
    #expect(inMemory[1].content == big)
    #expect(inMemory[1].filename == "x.bin")
    #expect(inMemory[1].extendedFilename == "é.bin")
    #expect(inMemory[1].contentType == "application/x")
    #expect(inMemory[2].content == Data())
    #expect(fromFile.allSatisfy { $0.content == nil })
    #expect(
      MultipartParts.boundary(fromContentType: "multipart/form-data; boundary=\"sep\"") == "sep")
    #expect(MultipartParts.boundary(fromContentType: "text/plain") == nil)
  }

  @Test("MultipartParts rejects bodies without delimiter, headers or close delimiter")
  func multipartParseErrors() {
    let bodies = [
      "no delimiter here",
      "--sep\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nunterminated",
      "--sep\r\nno colon\r\n\r\nx\r\n--sep--\r\n",
      "--sepX\r\n\r\nx\r\n--sep--\r\n",
    ]
    for body in bodies {
      #expect(throws: MultipartParts.ParseError.self, "\(body.debugDescription)") {
        try MultipartParts.parse(Data(body.utf8), boundary: "sep")
      }
    }
  }
}
