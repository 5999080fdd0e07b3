import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Redirects, body limits, downloads and progress over real loopback sockets. Resuming, a
/// changed resource, a 404 and upload progress are in `DownloadConformanceTests`, for every
/// transport.
@Suite("Transfers: redirects, limits, downloads, progress", .timeLimit(.minutes(1)))
struct TransferTests {
  static func credentialed(
    _ url: URL, method: HTTPMethod = .get, body: RequestBody = .empty
  )
    throws -> Request
  {
    var request = Request(method: method, url: url, body: body)
    try request.headers.set("Authorization", "Bearer secret")
    try request.headers.set("Cookie", "session=s1")
    return request
  }

  @Test("cross-host redirect 127.0.0.1 → 127.0.0.2 drops Authorization and Cookie")
  func crossHost() async throws {
    let fixture = try WireFixture()
    let other = try MockServer(host: "127.0.0.2")
    defer {
      fixture.shutdown()
      other.shutdown()
    }
    fixture.server.enqueue(
      MockResponse(status: 302).addingHeader("Location", other.url("/landing").absoluteString))
    other.enqueue(.text("arrived"))
    let response = try await fixture.client.send(
      Self.credentialed(fixture.server.url("/start")))
    #expect(response.status == 200)
    #expect(response.bodyText == "arrived")
    let first = try await fixture.server.takeRequest()
    #expect(first.header("Authorization") == "Bearer secret")
    let second = try await other.takeRequest()
    #expect(second.path == "/landing")
    #expect(second.header("Authorization") == nil)
    #expect(second.header("Cookie") == nil)
  }

  @Test("same-host redirect keeps Authorization and Cookie")
  func sameHost() async throws {
    let fixture = try WireFixture()
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(status: 301).addingHeader("Location", "/moved"))
    fixture.server.enqueue(.text("here"))
    let response = try await fixture.client.send(
      Self.credentialed(fixture.server.url("/old")))
    #expect(response.bodyText == "here")
    _ = try await fixture.server.takeRequest()
    let moved = try await fixture.server.takeRequest()
    #expect(moved.path == "/moved")
    #expect(moved.header("Authorization") == "Bearer secret")
    #expect(moved.header("Cookie") == "session=s1")
  }

  @Test("a redirect loop ends with tooManyRedirects and a clear reason")
  func loop() async throws {
    let fixture = try WireFixture()
    defer { fixture.shutdown() }
    fixture.server.setDispatcher { _ in
      MockResponse(status: 302).addingHeader("Location", "/a")
    }
    let error = await courierError {
      try await fixture.client.send(Request(url: fixture.server.url("/a")))
    }
    #expect(error?.kind == .tooManyRedirects)
    #expect(error?.debugMessage.contains("loop") == true)
    #expect(error?.reason == "The server redirected the request too many times.")
    #expect(fixture.server.requestCount == 1)
  }

  @Test("follow(maximum: 3): the fourth hop fails; doNotFollow returns the 3xx")
  func hopLimit() async throws {
    let fixture = try WireFixture()
    defer { fixture.shutdown() }
    fixture.server.setDispatcher { request in
      let next = (Int(request.path.dropFirst()) ?? 0) + 1
      return MockResponse(status: 307).addingHeader("Location", "/\(next)")
    }
    let limited = Endpoint<Void>(.get, "0").redirects(.follow(maximum: 3))
    let error = await courierError { try await fixture.client.send(limited) }
    #expect(error?.kind == .tooManyRedirects)
    #expect(fixture.server.requestCount == 4)
    var request = Request(url: fixture.server.url("/0"))
    request.attributes[RedirectPolicyAttribute.self] = .doNotFollow
    let response = try await fixture.client.send(request)
    #expect(response.status == 307)
    #expect(response.headers["Location"] == "/1")
  }

  @Test("303 turns POST into GET without a body; 307 keeps method and body")
  func methodRules() async throws {
    let fixture = try WireFixture()
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(status: 303).addingHeader("Location", "/see"))
    fixture.server.enqueue(.text("ok"))
    fixture.server.enqueue(MockResponse(status: 307).addingHeader("Location", "/again"))
    fixture.server.enqueue(.text("ok"))
    let body = RequestBody.data(Data("hello".utf8))
    let url = fixture.server.url("/p")
    _ = try await fixture.client.send(Request(method: .post, url: url, body: body))
    _ = try await fixture.server.takeRequest()
    let seeOther = try await fixture.server.takeRequest()
    #expect(seeOther.method == "GET")
    #expect(seeOther.body.isEmpty)
    let response = try await fixture.client.send(Request(method: .post, url: url, body: body))
    #expect(response.status == 200)
    _ = try await fixture.server.takeRequest()
    let temporary = try await fixture.server.takeRequest()
    #expect(temporary.method == "POST")
    #expect(temporary.path == "/again")
    #expect(String(decoding: temporary.body, as: UTF8.self) == "hello")
  }

  @Test("the shared rule: 307 keeps method and body, 302 POST becomes GET, ports count")
  func sharedRule() throws {
    let original = try Self.credentialed(
      URL(string: "http://a.test/x")!, method: .post, body: .data(Data("b".utf8)))
    let kept = Redirect.nextRequest(
      after: original, status: 307, location: URL(string: "http://a.test:80/y")!)
    #expect(kept?.method == .post)
    #expect(kept?.body == .data(Data("b".utf8)))
    #expect(kept?.headers["Authorization"] == "Bearer secret")
    let moved = Redirect.nextRequest(
      after: original, status: 302, location: URL(string: "http://a.test:8080/y")!)
    #expect(moved?.method == .get)
    #expect(moved?.body == .empty)
    #expect(moved?.headers["Authorization"] == nil)
    #expect(moved?.headers["Cookie"] == nil)
    #expect(Redirect.nextRequest(after: original, status: 304, location: original.url) == nil)
  }

  @Test("a plain body over the limit fails with bodyTooLarge; under it passes")
  func plainLimit() async throws {
    let fixture = try WireFixture()
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(body: Data(count: 300_000)))
    fixture.server.enqueue(MockResponse(body: Data(count: 300_000)))
    let limited = Endpoint<Data>(.get, "big").maximumResponseBodySize(100_000)
    let error = await courierError { try await fixture.client.send(limited) }
    #expect(error?.kind == .bodyTooLarge)
    let data = try await fixture.client.send(Endpoint<Data>(.get, "big"))
    #expect(data.count == 300_000)
  }

  @Test("download progress: monotonic, ends at the total, at most ~60 events a second")
  func progress() async throws {
    let fixture = try WireFixture()
    defer { fixture.shutdown() }
    let total = 24 * 1024 * 1024
    let source = MockBodySource.repeating(Data("courier".utf8), count: total)
    fixture.server.setDispatcher { .ranged(source, request: $0) }
    let progress = TransferProgress()
    let collector = Task {
      var events: [TransferProgress.Event] = []
      for await event in progress.events { events.append(event) }
      return events
    }
    let start = ContinuousClock.now
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let result = try await fixture.client.download(
      Endpoint<Void>(.get, "file").downloadProgress(progress),
      to: folder.appendingPathComponent("file.bin"))
    let elapsed = ContinuousClock.now - start
    let events = await collector.value
    #expect(result.byteCount == Int64(total))
    #expect(
      events.last
        == TransferProgress.Event(completed: Int64(total), expected: Int64(total), isFinal: true))
    #expect(zip(events, events.dropFirst()).allSatisfy { $0.completed <= $1.completed })
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    #expect(Double(events.count) <= seconds * 60 + 2, "\(events.count) events in \(elapsed)")
    print("progress: \(events.count) events in \(elapsed) for \(total) bytes")
  }

  @Test("download through the whole chain: headers, retry resumes a cut body, logging elides it")
  func wholeChain() async throws {
    let sink = InMemoryLogSink()
    let fixture = try WireFixture(middleware: [
      HeadersMiddleware(defaults: try HTTPHeaders([("X-App", "courier")])),
      RetryMiddleware(policy: RetryPolicy(baseDelay: .milliseconds(1)), budget: nil),
      LoggingMiddleware(level: .body, sink: sink),
    ])
    defer { fixture.shutdown() }
    let total = 3 * 1024 * 1024
    let source = MockBodySource.repeating(Data("chain".utf8), count: total)
    var cut = MockResponse.ranged(
      source, request: RecordedRequest(method: "GET", target: "/"), etag: "\"c1\"")
    cut.fault = .truncateBody
    fixture.server.enqueue(cut)
    fixture.server.setDispatcher { .ranged(source, request: $0, etag: "\"c1\"") }
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("chain.bin")
    let result = try await fixture.client.download(Endpoint<Void>(.get, "chain"), to: destination)
    #expect(result.response.attempts == 2)
    #expect(result.resumedFrom == Int64(total / 2))
    #expect(try Data(contentsOf: destination) == source.all)
    let first = try await fixture.server.takeRequest()
    let second = try await fixture.server.takeRequest()
    #expect(first.header("X-App") == "courier")
    #expect(second.header("X-App") == "courier")
    #expect(second.header("Range") == "bytes=\(total / 2)-")
    #expect(sink.text.contains("<file .chain.bin.courier-download, \(total) bytes>"))
    #expect(!sink.text.contains("chainchain"))
  }
}

/// A new empty folder under the temporary directory.
func temporaryFolder() throws -> URL {
  let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
    "courier-\(UUID().uuidString)")
  try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
  return folder
}

extension MockBodySource {
  /// Every byte, for comparing small bodies.
  var all: Data { bytes(at: 0, count: count) }
}
