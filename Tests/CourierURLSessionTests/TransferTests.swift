import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Body limits, downloads and progress over real loopback sockets. Redirects are in
/// `RedirectConformanceTests`; resuming, a changed resource, a 404 and upload progress in
/// `DownloadConformanceTests`, for every transport.
@Suite("Transfers: limits, downloads, progress", .timeLimit(.minutes(5)))
struct TransferTests {
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
    let events = await collector.linkedValue
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
