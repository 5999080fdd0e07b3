import CourierCore
import CourierTesting
import Foundation
import Testing

/// Progress, downloads, limits and the redirect rule, over ``StubTransport``.
@Suite("Transfers over StubTransport", .timeLimit(.minutes(5)))
struct TransferLogicTests {
  static func folder() throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-stub-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
  }

  @Test("chunked delivery: progress is monotonic, throttled, and ends at the total")
  func chunkedProgress() async throws {
    let body = Data(count: 1_000_000)
    let stub = StubTransport([StubResponse.data(body).chunked(10_000)])
    let client = Client(baseURL: URL(string: "https://api.test/")!, transport: stub)
    // One event a minute at most, apart from the final one.
    let progress = TransferProgress(minimumInterval: .seconds(60))
    let collector = Task {
      var events: [TransferProgress.Event] = []
      for await event in progress.events { events.append(event) }
      return events
    }
    let data = try await client.send(Endpoint<Data>(.get, "blob").downloadProgress(progress))
    let events = await collector.linkedValue
    #expect(data == body)
    #expect(events.count == 2)
    #expect(events.first?.completed == 10_000)
    #expect(events.last == .init(completed: 1_000_000, expected: 1_000_000, isFinal: true))
  }

  @Test("a retried request's progress ends at the last attempt's body, not the 503's")
  func retriedProgress() async throws {
    let body = Data(count: 100_000)
    let stub = StubTransport([StubResponse.text("busy", status: 503), StubResponse.data(body)])
    let client = Client(
      baseURL: URL(string: "https://api.test/"), transport: stub,
      middleware: [
        RetryMiddleware(policy: RetryPolicy(maximumAttempts: 2, baseDelay: .zero), budget: nil)
      ])
    let progress = TransferProgress(minimumInterval: .zero)
    let collector = Task {
      var events: [TransferProgress.Event] = []
      for await event in progress.events { events.append(event) }
      return events
    }
    let data = try await client.send(Endpoint<Data>(.get, "blob").downloadProgress(progress))
    let events = await collector.linkedValue
    #expect(data == body)
    #expect(stub.requests.count == 2)
    #expect(events.first == .init(completed: 4, expected: 4))
    #expect(events.last == .init(completed: 100_000, expected: 100_000, isFinal: true))
    #expect(events.filter(\.isFinal).count == 1)
  }

  @Test("the final event is the last attempt's body even when the retried error page was longer")
  func retriedProgressAfterLongerErrorPage() async throws {
    let stub = StubTransport([
      StubResponse.data(Data(count: 1_000), status: 503), StubResponse.data(Data(count: 10)),
    ])
    let client = Client(
      baseURL: URL(string: "https://api.test/"), transport: stub,
      middleware: [
        RetryMiddleware(policy: RetryPolicy(maximumAttempts: 2, baseDelay: .zero), budget: nil)
      ])
    let progress = TransferProgress(minimumInterval: .zero)
    let collector = Task {
      var events: [TransferProgress.Event] = []
      for await event in progress.events { events.append(event) }
      return events
    }
    let data = try await client.send(Endpoint<Data>(.get, "blob").downloadProgress(progress))
    let events = await collector.linkedValue
    #expect(data.count == 10)
    #expect(events.first == .init(completed: 1_000, expected: 1_000))
    #expect(events.last == .init(completed: 10, expected: 10, isFinal: true))
    #expect(events.filter(\.isFinal).count == 1)
  }

  @Test("unthrottled: one event per chunk, each larger than the last")
  func everyChunk() async throws {
    let stub = StubTransport([StubResponse.data(Data(count: 50)).chunked(10)])
    let client = Client(baseURL: URL(string: "https://api.test/")!, transport: stub)
    let progress = TransferProgress(minimumInterval: .zero)
    let collector = Task { await progress.events.reduce(into: []) { $0.append($1.completed) } }
    _ = try await client.send(Endpoint<Data>(.get, "blob").downloadProgress(progress))
    #expect(await collector.linkedValue == [10, 20, 30, 40, 50, 50])
  }

  @Test("a failed request ends the progress stream without a final event")
  func failureEndsStream() async throws {
    let stub = StubTransport([.failure(.connectionLost)])
    let client = Client(baseURL: URL(string: "https://api.test/")!, transport: stub)
    let progress = TransferProgress()
    let collector = Task { await progress.events.reduce(into: 0) { count, _ in count += 1 } }
    let error = await courierError {
      try await client.send(Endpoint<Data>(.get, "blob").downloadProgress(progress))
    }
    #expect(error?.kind == .connectionLost)
    #expect(await collector.linkedValue == 0)
  }

  @Test("an explicit limit fails a chunked body with bodyTooLarge")
  func limit() async throws {
    let stub = StubTransport([StubResponse.data(Data(count: 100)).chunked(30)])
    let client = Client(baseURL: URL(string: "https://api.test/")!, transport: stub)
    let error = await courierError {
      try await client.send(Endpoint<Data>(.get, "blob").maximumResponseBodySize(50))
    }
    #expect(error?.kind == .bodyTooLarge)
  }

  @Test("download through the stub: the file appears only when complete")
  func download() async throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let body = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0) })
    let stub = StubTransport([StubResponse.data(body).chunked(64_000)])
    let client = Client(baseURL: URL(string: "https://api.test/")!, transport: stub)
    let destination = folder.appendingPathComponent("out.bin")
    let result = try await client.download(Endpoint<Void>(.get, "file"), to: destination)
    #expect(result.byteCount == 300_000)
    #expect(try Data(contentsOf: destination) == body)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["out.bin"])
  }

  @Test(
    "a decoded download without Content-Length stops at its size limit and leaves no file; one written as it came is not held to it"
  )
  func decodedDownloadWithoutLength() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = DownloadDestination(url: folder.appendingPathComponent("x.bin"))
    let request = Request(method: .get, url: URL(string: "https://api.test/x")!)
    let piece = Data(count: 1 << 20)
    let decoded = DownloadWriter(destination: destination)
    decoded.decodedSizeWithoutLength = 3 << 20
    #expect(
      try decoded.begin(
        status: 200, headers: HTTPHeaders([("Content-Encoding", "gzip")]), request: request))
    for _ in 0..<3 { try decoded.write(piece) }
    let error = #expect(throws: CourierError.self) { try decoded.write(piece) }
    #expect(error?.kind == .bodyTooLarge)
    #expect(error?.debugMessage.contains("no Content-Length") == true)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)

    let plain = DownloadWriter(destination: destination)
    plain.decodedSizeWithoutLength = 3 << 20
    #expect(try plain.begin(status: 200, headers: HTTPHeaders(), request: request))
    for _ in 0..<5 { try plain.write(piece) }
    #expect(try plain.finish().byteCount == 5 << 20)
  }

  @Test(
    "a second download to a destination while one is under way fails at once; the first keeps its bytes",
    .timeLimit(.minutes(5)))
  func concurrentDownloadsToOneDestination() async throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    let first = Data(repeating: UInt8(ascii: "A"), count: 1_000)
    stub.on(.get, "a.bin", StubResponse.data(first).chunked(100, every: .seconds(1)))
    stub.on(.get, "b.bin", .data(Data(repeating: UInt8(ascii: "B"), count: 1_000)))
    let client = Client(baseURL: URL(string: "https://api.test/")!, transport: stub)
    let destination = folder.appendingPathComponent("app.bin")
    let taskA = Task { try await client.download(Endpoint<Void>(.get, "a.bin"), to: destination) }
    defer { taskA.cancel() }
    await clock.waitForSleepers(1)  // A's partial file is open, its first piece on the way
    let errorB = await courierError {
      try await client.download(Endpoint<Void>(.get, "b.bin"), to: destination)
    }
    #expect(errorB?.kind == .invalidRequest)
    #expect(errorB?.debugMessage.contains("in progress") == true, "\(String(describing: errorB))")
    #expect(stub.requests.count == 1, "B was not sent")
    for piece in 1...10 {
      await clock.waitForSleepers(piece)
      clock.advance(by: .seconds(1))
    }
    let result = try await taskA.linkedValue
    #expect(result.byteCount == 1_000)
    #expect(try Data(contentsOf: destination) == first)
    // Once A is over, the destination takes a download again.
    _ = try await client.download(Endpoint<Void>(.get, "b.bin"), to: destination)
    #expect(try Data(contentsOf: destination).allSatisfy { $0 == UInt8(ascii: "B") })
  }

  @Test("download: a 500 fails the status check with its body, no file")
  func downloadError() async throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let stub = StubTransport([.text("broken", status: 500)])
    let client = Client(baseURL: URL(string: "https://api.test/")!, transport: stub)
    let error = await courierError {
      try await client.download(
        Endpoint<Void>(.get, "file"), to: folder.appendingPathComponent("out.bin"))
    }
    #expect(error?.kind == .httpStatus)
    #expect(error?.response?.bodyText == "broken")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
  }

  @Test("redirect policy: hop limit, loops and custom decisions")
  func policy() throws {
    let original = Request(url: URL(string: "https://a.test/0")!)
    let policy = RedirectPolicy.follow(maximum: 2)
    var visited: [(method: HTTPMethod, url: URL)] = [(.get, original.url)]
    for hop in 1...2 {
      let location = URL(string: "https://a.test/\(hop)")!
      let next = try policy.decide(
        original: original, previous: original, status: 302, location: location,
        visited: visited)
      #expect(next?.url == location)
      visited.append((.get, location))
    }
    #expect(throws: CourierError.self) {
      try policy.decide(
        original: original, previous: original, status: 302,
        location: URL(string: "https://a.test/3")!, visited: visited)
    }
    let loop = #expect(throws: CourierError.self) {
      try RedirectPolicy.standard.decide(
        original: original, previous: original, status: 302, location: original.url,
        visited: [(.get, original.url)])
    }
    #expect(loop?.kind == .tooManyRedirects)
    let never = RedirectPolicy.custom { _ in nil }
    #expect(
      try never.decide(
        original: original, previous: original, status: 302,
        location: URL(string: "https://b.test/")!, visited: [(.get, original.url)]) == nil)
    #expect(
      try RedirectPolicy.doNotFollow.decide(
        original: original, previous: original, status: 302,
        location: URL(string: "https://b.test/")!, visited: []) == nil)
  }

  @Test("tooManyRedirects has a reason in every built-in language")
  func reasons() {
    let error = CourierError(kind: .tooManyRedirects)
    for locale in ["en", "zh-Hans", "zh-Hant"] {
      let reason = ReasonCatalog.standard.reason(for: error, locale: locale)
      #expect(!reason.isEmpty)
      #expect(
        reason != ReasonCatalog.standard.reason(for: CourierError(kind: .transport), locale: locale)
      )
    }
  }
}
