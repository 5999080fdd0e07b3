import Courier
import CourierTesting
import Foundation
import Synchronization
import Testing

/// Downloads to a file (`Client.download(_:to:resume:maximumSize:)`) and transfer progress, the same on
/// every transport that talks to a real server: the body in the file byte for byte, resume
/// with `Range`/`If-Range`, a restart from zero on `200`, no file at the destination after a
/// failure, progress that never goes down.
@Suite("Transport conformance: downloads and progress", .timeLimit(.minutes(5)))
struct DownloadConformanceTests {
  @Test("a multi-MiB download matches byte for byte", arguments: TransportKind.wire)
  func matches(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    let source = MockBodySource.noise(count: 6 * 1024 * 1024 + 12_345)
    fixture.server.setDispatcher { .ranged(source, request: $0, etag: "\"n1\"") }
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("noise.bin")
    let result = try await fixture.client.download(Endpoint<Void>(.get, "noise"), to: destination)
    #expect(result.byteCount == Int64(source.count))
    #expect(result.resumedFrom == 0)
    #expect(result.response.status == 200)
    #expect(result.response.body.isEmpty)
    #expect(result.response.headers["ETag"] == "\"n1\"")
    #expect(try Data(contentsOf: destination) == source.all)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["noise.bin"])
  }

  @Test(
    "a download is not held to the body limit; a non-2xx body still is",
    arguments: TransportKind.wire)
  func bodyLimit(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    let source = MockBodySource.noise(count: 3 * 1024 * 1024)
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("big.bin")
    fixture.server.setDispatcher { .ranged(source, request: $0) }
    let result = try await fixture.client.download(
      Endpoint<Void>(.get, "big").maximumResponseBodySize(1024 * 1024), to: destination)
    #expect(result.byteCount == Int64(source.count))
    #expect(try Data(contentsOf: destination) == source.all)
    try FileManager.default.removeItem(at: destination)
    fixture.server.setDispatcher { _ in .text(String(repeating: "e", count: 300_000), status: 500) }
    let error = await courierError {
      try await fixture.client.download(
        Endpoint<Void>(.get, "big").maximumResponseBodySize(100_000), to: destination)
    }
    #expect(error?.kind == .bodyTooLarge)
    #expect(!FileManager.default.fileExists(atPath: destination.path))
  }

  @Test(
    "a gzip bomb as a download stops at 100x its wire length and leaves no file",
    arguments: TransportKind.wire)
  func decodedBomb(kind: TransportKind) async throws {
    // 64 MiB of zeros is about 64 KiB of gzip: URLSession on Linux, which decodes downloads,
    // wrote it whole to disk, and a 1 MiB bomb is a gigabyte.
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    let bomb = try GzipCompressor.compress(Data(count: 64 * 1024 * 1024))
    fixture.server.setDispatcher { _ in
      MockResponse(headers: [MockHeader(name: "Content-Encoding", value: "gzip")], body: bomb)
    }
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("bomb.bin")
    let error = await courierError {
      try await fixture.client.download(Endpoint<Void>(.get, "bomb"), to: destination)
    }
    #expect(error?.kind == .bodyTooLarge)
    #expect(error?.debugDescription.contains("100× its \(bomb.count) bytes on the wire") == true)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
  }

  @Test(
    "a gzip- or deflate-encoded download is saved decoded, and the request's Accept-Encoding goes out as it was",
    arguments: TransportKind.wire)
  func encodedDownload(kind: TransportKind) async throws {
    // CurlTransport saved it as it came, still gzip, under the destination's name: a download
    // never passes through GzipMiddleware's decoding in memory.
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    let original = Data(String(repeating: "id,name\n7,Li Lei\n", count: 50_000).utf8)
    fixture.server.enqueue(
      MockResponse(
        headers: [MockHeader(name: "Content-Encoding", value: "gzip")],
        body: try GzipCompressor.compress(original)))
    fixture.server.enqueue(
      MockResponse(
        headers: [MockHeader(name: "Content-Encoding", value: "deflate")],
        body: try GzipCompressor.compress(original, format: .zlib)))
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("report.csv")
    _ = try await fixture.client.download(Endpoint<Void>(.get, "gzip"), to: destination)
    #expect(try Data(contentsOf: destination) == original)
    _ = try await fixture.client.download(
      Endpoint<Void>(.get, "deflate").header("Accept-Encoding", "deflate"), to: destination)
    #expect(try Data(contentsOf: destination) == original)
    let plain = try await fixture.server.takeRequest()
    let asked = try await fixture.server.takeRequest()
    if kind == .curl {
      #expect(plain.header("Accept-Encoding") == nil, "libcurl added none of its own")
    }
    #expect(asked.header("Accept-Encoding") == "deflate")
  }

  @Test(
    "a body cut half-way leaves no file at the destination; the next download resumes with Range",
    arguments: TransportKind.wire)
  func resume(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    let total = 4 * 1024 * 1024
    let source = MockBodySource.noise(count: total)
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("data.bin")
    var cut = MockResponse.ranged(
      source, request: RecordedRequest(method: "GET", target: "/"), etag: "\"v1\"")
    cut.fault = .truncateBody
    fixture.server.enqueue(cut)
    let error = await courierError {
      try await fixture.client.download(Endpoint<Void>(.get, "data"), to: destination)
    }
    #expect(error?.kind == .connectionLost)
    #expect(!FileManager.default.fileExists(atPath: destination.path))
    let partial = DownloadDestination(url: destination).partialURL
    #expect(try Data(contentsOf: partial) == source.bytes(at: 0, count: total / 2))
    fixture.server.setDispatcher { .ranged(source, request: $0, etag: "\"v1\"") }
    let progress = TransferProgress()
    let collector = Task { await progress.collect() }
    let result = try await fixture.client.download(
      Endpoint<Void>(.get, "data").downloadProgress(progress), to: destination)
    let events = await collector.linkedValue
    #expect(result.response.status == 206)
    #expect(result.resumedFrom == Int64(total / 2))
    #expect(result.byteCount == Int64(total))
    #expect(try Data(contentsOf: destination) == source.all)
    #expect(events.first.map { $0.completed >= Int64(total / 2) } == true)
    #expect(events.last?.completed == Int64(total))
    _ = try await fixture.server.takeRequest()
    let resumed = try await fixture.server.takeRequest()
    #expect(resumed.header("Range") == "bytes=\(total / 2)-")
    #expect(resumed.header("If-Range") == "\"v1\"")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["data.bin"])
  }

  @Test(
    "a partial file from another URL is never resumed, even under the same validator",
    arguments: TransportKind.wire, ["etag", "lastModified"])
  func resumeOnlyFromSameURL(kind: TransportKind, validator: String) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("app.bin")
    let first = MockBodySource.repeating(Data("A".utf8), count: 1_000_000)
    let second = MockBodySource.repeating(Data("B".utf8), count: 1_000_000)
    // The same validator on both: what a build server or a CDN may well send.
    let etag = validator == "etag" ? "\"build-7\"" : nil
    let modified = validator == "etag" ? nil : "Sun, 06 Dec 2026 07:00:00 GMT"
    var cut = MockResponse.ranged(
      first, request: RecordedRequest(method: "GET", target: "/"), etag: etag,
      lastModified: modified)
    cut.fault = .truncateBody
    fixture.server.enqueue(cut)
    let error = await courierError {
      try await fixture.client.download(Endpoint<Void>(.get, "v1/app.bin"), to: destination)
    }
    #expect(error?.kind == .connectionLost)
    let partial = DownloadDestination(url: destination).partialURL
    #expect(try Data(contentsOf: partial) == first.bytes(at: 0, count: 500_000))
    fixture.server.setDispatcher {
      .ranged(second, request: $0, etag: etag, lastModified: modified)
    }
    let result = try await fixture.client.download(
      Endpoint<Void>(.get, "v2/app.bin"), to: destination)
    #expect(result.response.status == 200)
    #expect(result.resumedFrom == 0)
    #expect(try Data(contentsOf: destination) == second.all)
    _ = try await fixture.server.takeRequest()
    let fresh = try await fixture.server.takeRequest()
    #expect(fresh.header("Range") == nil)
    #expect(fresh.header("If-Range") == nil)
    // The validator file names the URL by its hash only.
    let record = try? String(
      contentsOf: folder.appendingPathComponent(".app.bin.courier-download.validator"),
      encoding: .utf8)
    #expect(record?.contains("app.bin") != true)
  }

  /// `/latest` redirects to the current build. A partial file is kept under the URL that
  /// answered with its body: resumed when `/latest` still leads there, downloaded from zero
  /// when it leads to another build, even under the same validator.
  @Test(
    "through a redirect, a partial file is resumed only from the URL that sent it",
    arguments: TransportKind.wire, [false, true])
  func resumeThroughRedirect(kind: TransportKind, targetMoves: Bool) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("app.bin")
    let builds = [
      "v1": MockBodySource.repeating(Data("A".utf8), count: 200_000),
      "v2": MockBodySource.repeating(Data("B".utf8), count: 200_000),
    ]
    let modified = "Sun, 06 Dec 2026 07:00:00 GMT"
    let state = Mutex((latest: "v1", cut: true))
    fixture.server.setDispatcher { request in
      guard let build = builds[String(request.path.dropFirst().prefix(2))] else {
        let latest = state.withLock { $0.latest }
        return MockResponse(status: 302).addingHeader("Location", "/\(latest)/app.bin")
      }
      var response = MockResponse.ranged(build, request: request, lastModified: modified)
      // The first body is cut half-way.
      if state.withLock({ state in
        defer { state.cut = false }; return state.cut
      }) {
        response.fault = .truncateBody
      }
      return response
    }
    let error = await courierError {
      try await fixture.client.download(Endpoint<Void>(.get, "latest"), to: destination)
    }
    #expect(error?.kind == .connectionLost)
    if targetMoves { state.withLock { $0.latest = "v2" } }
    let result = try await fixture.client.download(
      Endpoint<Void>(.get, "latest"), to: destination)
    let expected = try #require(builds[targetMoves ? "v2" : "v1"])
    let file = try Data(contentsOf: destination)
    // Compared as a Bool: a failing comparison of two 200 kB values is slow to describe.
    let matches = file == expected.all
    #expect(matches, "\(file.filter { $0 == UInt8(ascii: "A") }.count) bytes of v1 in the file")
    #expect(result.resumedFrom == (targetMoves ? 0 : 100_000))
    #expect(result.response.status == (targetMoves ? 200 : 206))
  }

  @Test(
    "a changed resource (200 to If-Range) starts the file again from zero",
    arguments: TransportKind.wire)
  func restart(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    let old = MockBodySource.repeating(Data("old".utf8), count: 1_000_000)
    let new = MockBodySource.noise(count: 1_200_000)
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("doc.bin")
    var cut = MockResponse.ranged(
      old, request: RecordedRequest(method: "GET", target: "/"), etag: "\"old\"")
    cut.fault = .truncateBody
    fixture.server.enqueue(cut)
    _ = await courierError {
      try await fixture.client.download(Endpoint<Void>(.get, "doc"), to: destination)
    }
    fixture.server.setDispatcher { .ranged(new, request: $0, etag: "\"new\"") }
    let result = try await fixture.client.download(Endpoint<Void>(.get, "doc"), to: destination)
    #expect(result.response.status == 200)
    #expect(result.resumedFrom == 0)
    #expect(try Data(contentsOf: destination) == new.all)
    _ = try await fixture.server.takeRequest()
    #expect(try await fixture.server.takeRequest().header("If-Range") == "\"old\"")
  }

  @Test("a 404 is httpStatus with its body, and leaves no file", arguments: TransportKind.wire)
  func notFound(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    fixture.server.enqueue(.text("gone", status: 404))
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("x.bin")
    let error = await courierError {
      try await fixture.client.download(Endpoint<Void>(.get, "x"), to: destination)
    }
    #expect(error?.kind == .httpStatus)
    #expect(error?.response?.status == 404)
    #expect(error?.response?.bodyText == "gone")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
  }

  /// How a download is stopped mid-body.
  enum Interruption: String, CaseIterable, Sendable {
    case cancellation
    case shutdown
    case timeout
  }

  @Test(
    "stopped mid-body (cancelled, shut down, timed out): no file at the destination, the partial file kept",
    arguments: TransportKind.wire, Interruption.allCases)
  func interrupted(kind: TransportKind, interruption: Interruption) async throws {
    let fixture = try Fixture(kind)
    let gate = Gate()
    defer {
      gate.open()
      fixture.shutdown()
    }
    let (source, noise) = MockBodySource.gatedNoise(count: 8 * 1024 * 1024, gate: gate)
    fixture.server.setDispatcher { .ranged(source, request: $0, etag: "\"c1\"") }
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("cancel.bin")
    let progress = TransferProgress(minimumInterval: .zero)
    var endpoint = Endpoint<Void>(.get, "cancel").downloadProgress(progress)
    // The server sends half the body, then waits: a Request.timeout, a total limit on both
    // transports, ends the attempt there. 5 s, so that in a full run on 2 cores (URLSession's
    // work queue seconds late under LoadTests) the first half has long arrived; a 1 s limit
    // once ended the attempt after 512 KiB.
    if interruption == .timeout { endpoint = endpoint.timeout(.seconds(5)) }
    let client = fixture.client
    let task = Task { [endpoint] in try await client.download(endpoint, to: destination) }
    for await event in progress.events where event.completed >= 1024 * 1024 { break }
    switch interruption {
    case .cancellation: task.cancel()
    case .shutdown: fixture.underTest.shutdown()
    case .timeout: break
    }
    let error = await courierError { try await task.linkedValue }
    #expect(error?.kind == (interruption == .timeout ? .timedOut : .cancelled))
    #expect(!FileManager.default.fileExists(atPath: destination.path))
    let partial = DownloadDestination(url: destination).partialURL
    let kept = try Data(contentsOf: partial)
    // Cancellation and shutdown come after the first MiB; the timer does not wait for it.
    #expect(kept.count >= (interruption == .timeout ? 1 : 1024 * 1024), "\(kept.count) bytes")
    #expect(kept == noise.bytes(at: 0, count: kept.count))
  }

  @Test(
    "download progress never goes down and ends at the total", arguments: TransportKind.wire)
  func progress(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    let total = 16 * 1024 * 1024
    let source = MockBodySource.repeating(Data("courier".utf8), count: total)
    fixture.server.setDispatcher { .ranged(source, request: $0) }
    let progress = TransferProgress(minimumInterval: .zero)
    let collector = Task { await progress.collect() }
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let result = try await fixture.client.download(
      Endpoint<Void>(.get, "file").downloadProgress(progress),
      to: folder.appendingPathComponent("file.bin"))
    let events = await collector.linkedValue
    #expect(result.byteCount == Int64(total))
    #expect(events.count >= 2)
    #expect(
      events.last
        == TransferProgress.Event(completed: Int64(total), expected: Int64(total), isFinal: true))
    #expect(zip(events, events.dropFirst()).allSatisfy { $0.completed <= $1.completed })
    #expect(events.dropLast().allSatisfy { $0.expected == Int64(total) && !$0.isFinal })
  }

  @Test("progress of a body kept in memory ends at its size", arguments: TransportKind.wire)
  func memoryProgress(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    let source = MockBodySource.repeating(Data("abc".utf8), count: 2_000_000)
    fixture.server.setDispatcher { .ranged(source, request: $0) }
    let progress = TransferProgress(minimumInterval: .zero)
    let collector = Task { await progress.collect() }
    let data = try await fixture.client.send(
      Endpoint<Data>(.get, "mem").downloadProgress(progress))
    let events = await collector.linkedValue
    #expect(data.count == 2_000_000)
    #expect(events.last?.completed == 2_000_000)
    #expect(events.last?.isFinal == true)
    #expect(zip(events, events.dropFirst()).allSatisfy { $0.completed <= $1.completed })
  }

  /// What each retried-progress case sends: in memory, to a file, or a file body up.
  enum RetriedTransfer: String, CaseIterable, Sendable {
    case memory, file, upload
  }

  @Test(
    "a retried request's progress ends at the body it ended with, not the 503's error page",
    arguments: TransportKind.wire, RetriedTransfer.allCases)
  func retriedProgress(kind: TransportKind, transfer: RetriedTransfer) async throws {
    let fixture = try Fixture(
      kind,
      middleware: [
        RetryMiddleware(policy: RetryPolicy(maximumAttempts: 2, baseDelay: .zero), budget: nil)
      ])
    defer { fixture.shutdown() }
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let total = 100_000
    let body = MockBodySource.noise(count: total).all
    fixture.server.enqueue(MockResponse(status: 503, body: Data("busy".utf8)))
    fixture.server.enqueue(MockResponse(status: 200, body: transfer == .upload ? Data() : body))
    // The default throttle, as an application has it: a loopback body arrives within it.
    let progress = TransferProgress()
    let collector = Task { await progress.collect() }
    switch transfer {
    case .memory:
      let data = try await fixture.client.send(
        Endpoint<Data>(.get, "mem").downloadProgress(progress))
      #expect(data == body)
    case .file:
      let result = try await fixture.client.download(
        Endpoint<Void>(.get, "file").downloadProgress(progress),
        to: folder.appendingPathComponent("file.bin"))
      #expect(result.byteCount == Int64(total))
    case .upload:
      let file = folder.appendingPathComponent("up.bin")
      try body.write(to: file)
      try await fixture.client.send(
        Endpoint<Void>(.put, "up").fileBody(file, contentType: "application/octet-stream")
          .uploadProgress(progress))
    }
    let events = await collector.linkedValue
    #expect(fixture.server.requestCount == 2)
    #expect(
      events.last
        == TransferProgress.Event(completed: Int64(total), expected: Int64(total), isFinal: true),
      "\(events)")
    #expect(events.filter(\.isFinal).count == 1)
    #expect(zip(events, events.dropFirst()).allSatisfy { $0.completed <= $1.completed })
  }

  @Test(
    "the final event is the last attempt's body even when the retried error page was longer",
    arguments: TransportKind.wire, [RetriedTransfer.memory, .file])
  func retriedProgressAfterLongerErrorPage(
    kind: TransportKind, transfer: RetriedTransfer
  ) async throws {
    let fixture = try Fixture(
      kind,
      middleware: [
        RetryMiddleware(policy: RetryPolicy(maximumAttempts: 2, baseDelay: .zero), budget: nil)
      ])
    defer { fixture.shutdown() }
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    // An HTML error page of 50 kB, then the 1 kB answer.
    fixture.server.enqueue(MockResponse(status: 503, body: Data(count: 50_000)))
    fixture.server.enqueue(MockResponse(status: 200, body: Data(count: 1_000)))
    let progress = TransferProgress()
    let collector = Task { await progress.collect() }
    if transfer == .memory {
      let data = try await fixture.client.send(
        Endpoint<Data>(.get, "mem").downloadProgress(progress))
      #expect(data.count == 1_000)
    } else {
      let result = try await fixture.client.download(
        Endpoint<Void>(.get, "file").downloadProgress(progress),
        to: folder.appendingPathComponent("file.bin"))
      #expect(result.byteCount == 1_000)
    }
    let events = await collector.linkedValue
    #expect(fixture.server.requestCount == 2)
    #expect(
      events.last == TransferProgress.Event(completed: 1_000, expected: 1_000, isFinal: true),
      "\(events)")
    #expect(events.filter(\.isFinal).count == 1)
  }

  @Test(
    "upload progress through a 303 ends at the body sent, not at the GET that follows",
    arguments: TransportKind.wire)
  func uploadProgressThroughSeeOther(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    let bytes = Data(count: 100_000)
    fixture.server.enqueue(MockResponse(status: 303).addingHeader("Location", "/done"))
    fixture.server.enqueue(MockResponse(status: 200, body: Data("done".utf8)))
    let progress = TransferProgress()
    let collector = Task { await progress.collect() }
    _ = try await fixture.client.send(
      Endpoint<Data>(.post, "up").body(bytes, contentType: "application/octet-stream")
        .uploadProgress(progress))
    let events = await collector.linkedValue
    #expect(fixture.server.requestCount == 2)
    #expect(
      events.last == TransferProgress.Event(completed: 100_000, expected: 100_000, isFinal: true),
      "\(events)")
  }

  @Test("upload progress from a file body ends at its size", arguments: TransportKind.wire)
  func uploadProgress(kind: TransportKind) async throws {
    let fixture = try Fixture(kind)
    defer { fixture.shutdown() }
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("up.bin")
    let bytes = MockBodySource.noise(count: 3_000_000).all
    try bytes.write(to: file)
    fixture.server.enqueue(MockResponse(status: 204))
    let progress = TransferProgress(minimumInterval: .zero)
    let collector = Task { await progress.collect() }
    try await fixture.client.send(
      Endpoint<Void>(.put, "up").fileBody(file, contentType: "application/octet-stream")
        .uploadProgress(progress))
    let events = await collector.linkedValue
    #expect(try await fixture.server.takeRequest().body == bytes)
    #expect(events.last?.completed == Int64(bytes.count))
    #expect(events.last?.isFinal == true)
    #expect(zip(events, events.dropFirst()).allSatisfy { $0.completed <= $1.completed })
  }
}

/// Peak memory of a large download over `CurlTransport`, measured in a child process (an
/// exit test) where nothing else allocates.
///
/// Opt-in with `COURIER_HEAVY_TESTS=1`, as `TransferMemoryTests` (`.ci/run` runs both in its
/// heavy transfers phase): while the child downloads, the parent holds a thread of the
/// cooperative pool, and in a full `swift test` on 2 cores that delayed every other test by
/// about 28 s and timing bounds of cancellation tests by about 1 s (seen in CI).
@Suite(
  "CurlTransport download: bounded memory", .timeLimit(.minutes(5)),
  .enabled(
    if: ProcessInfo.processInfo.environment["COURIER_HEAVY_TESTS"] == "1"
      && FileManager.default.fileExists(atPath: "/proc/self/status"),
    "set COURIER_HEAVY_TESTS=1; reads /proc/self/status"))
struct DownloadMemoryTests {
  @Test("256 MiB to a file: peak RSS growth < 64 MiB, the file matches")
  func boundedMemory() async throws {
    let result = await withTaskExecutorPreference(OwnThreadExecutor.shared) {
      await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
        await DownloadMemoryTests.scenario()
      }
    }
    let report = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
    print("CurlTransport 256 MiB download:", report)
    #expect(report.contains("match"))
  }

  static func scenario() async {
    do {
      try await scenarioBody()
    } catch {
      FileHandle.standardOutput.write(Data("failed: \(error)".utf8))
      exit(1)
    }
  }

  static func scenarioBody() async throws {
    let mebibyte = 1 << 20
    let size = 256 * mebibyte
    let pattern = Data((0..<4093).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
    let source = MockBodySource.repeating(pattern, count: size)
    let server = try MockServer()
    server.recordsRequests = false
    let warm = MockBodySource.repeating(pattern, count: 8 * mebibyte)
    server.setDispatcher { request in
      .ranged(request.path == "/warm" ? warm : source, request: request, etag: "\"m1\"")
    }
    let transport = CurlTransport()
    defer {
      transport.shutdown()
      server.shutdown()
    }
    let client = Client(baseURL: server.baseURL, transport: transport)
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    // Warm up: the connection, the writer's buffer, malloc arenas.
    _ = try await client.download(
      Endpoint<Void>(.get, "warm"),
      to: folder.appendingPathComponent("warm.bin"), resume: false)
    let peakReset = ProcessProbe.resetPeakMemory()
    let before = try ProcessProbe.memory()
    let started = ContinuousClock.now
    let destination = folder.appendingPathComponent("big.bin")
    let result = try await client.download(Endpoint<Void>(.get, "big"), to: destination)
    let elapsed = ContinuousClock.now - started
    let after = try ProcessProbe.memory()
    let start = peakReset ? before.resident : min(before.resident, before.peak)
    let growth = after.peak - start
    let same = try FileComparison.fileMatches(destination, source)
    let seconds =
      Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let report =
      "\(result.byteCount) bytes in \(elapsed) (\(Int(Double(size) / 1e6 / seconds)) MB/s, "
      + "debug build); file \(same ? "match" : "MISMATCH"); peak RSS growth "
      + "\(growth / 1024) KiB (start \(start / 1024) KiB, peak \(after.peak / 1024) KiB, "
      + "peak reset: \(peakReset)); bound \(64 * 1024) KiB"
    FileHandle.standardOutput.write(Data(report.utf8))
    guard result.byteCount == Int64(size), same, growth < 64 * mebibyte else { exit(1) }
  }
}

/// Comparing a downloaded file with its source.
enum FileComparison {
  /// Whether the file holds exactly `source`'s bytes, compared a MiB at a time.
  static func fileMatches(_ url: URL, _ source: MockBodySource) throws -> Bool {
    let handle = try FileHandle(forReadingFrom: url)
    defer { try? handle.close() }
    var offset = 0
    while true {
      let piece = try handle.read(upToCount: 1 << 20) ?? Data()
      if piece.isEmpty { return offset == source.count }
      guard piece == source.bytes(at: offset, count: piece.count) else { return false }
      offset += piece.count
    }
  }
}

/// A gate a server thread waits at until the test opens it (for good).
final class Gate: Sendable {
  private let semaphore = DispatchSemaphore(value: 0)

  /// Blocks until ``open()``; returns at once afterwards.
  func wait() {
    semaphore.wait()
    semaphore.signal()
  }

  /// Lets every waiter, present and future, through.
  func open() {
    semaphore.signal()
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
  /// `count` bytes of ``noise(count:)`` served up to half, then held until `gate` opens: a
  /// download stays mid-body for as long as the test wants. Also returns the plain noise, to
  /// compare what arrived with.
  static func gatedNoise(count: Int, gate: Gate) -> (MockBodySource, noise: MockBodySource) {
    let noise = MockBodySource.noise(count: count)
    let source = MockBodySource(count: count) { offset, length in
      if offset >= count / 2 { gate.wait() }
      return noise.bytes(at: offset, count: length)
    }
    return (source, noise)
  }

  /// `count` bytes that do not repeat within a MiB: a resume at the wrong offset differs.
  static func noise(count: Int) -> MockBodySource {
    MockBodySource(count: count) { offset, count in
      var bytes = [UInt8](repeating: 0, count: count)
      for index in 0..<count {
        let position = UInt64(offset + index)
        bytes[index] = UInt8(truncatingIfNeeded: (position &* 0x9E37_79B9) >> 13 ^ position)
      }
      return Data(bytes)
    }
  }

  /// Every byte, for comparing small bodies.
  var all: Data { bytes(at: 0, count: count) }
}

extension TransferProgress {
  /// Every event until the stream ends.
  func collect() async -> [Event] {
    var collected: [Event] = []
    for await event in events { collected.append(event) }
    return collected
  }
}
