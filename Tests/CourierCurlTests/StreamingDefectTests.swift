import Courier
import CourierTesting
import Foundation
import Synchronization
import Testing

@testable import CourierCurl

/// Streamed response bodies over `CurlTransport` at their edges: the standard middleware
/// around a streamed head, progress, `cancelAll()`, bodiless answers, redirects, and a caller
/// cancelled while the head arrives.
@Suite("CurlTransport streaming at its edges", .timeLimit(.minutes(5)))
struct StreamingDefectTests {
  private static func pattern(_ count: Int) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) })
  }

  @Test("the standard client keeps Content-Encoding on a gzip body it streams undecoded")
  func gzipStreamKeepsItsEncoding() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let plain = Data(String(repeating: "event: tick\ndata: {}\n\n", count: 2_000).utf8)
    let compressed = try GzipCompressor.compress(plain)
    server.enqueue(
      MockResponse(
        headers: [
          MockHeader(name: "Content-Type", value: "text/event-stream"),
          MockHeader(name: "Content-Encoding", value: "gzip"),
        ], body: compressed))
    let transport = CurlTransport()
    defer { transport.shutdown() }
    let client = Client.standard(baseURL: server.url("/"), transport: transport)
    let streamed = try await client.stream(Endpoint<Void>(.get, "events"))
    let received = try await streamed.body.collect(upTo: 1 << 20)
    // Either the stream is decoded, or its head says it is not: never gzip bytes under a head
    // that says identity with a length of 0.
    let encoding = streamed.head.headers["Content-Encoding"]
    let length = streamed.head.headers["Content-Length"] ?? "none"
    #expect(
      received == plain || (encoding == "gzip" && received == compressed),
      "\(received.count) bytes (gzip: \(received == compressed)), Content-Encoding \(encoding ?? "none"), Content-Length \(length)"
    )
    if let length = streamed.head.headers["Content-Length"].flatMap({ Int($0) }) {
      #expect(length == received.count)
    }
  }

  @Test("download progress follows a streamed body to its end, not the head")
  func progressFollowsTheStream() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let body = Self.pattern(512 * 1024)
    server.enqueue(MockResponse(body: body))
    let transport = CurlTransport()
    defer { transport.shutdown() }
    let client = Client(baseURL: server.url("/"), transport: transport)
    let progress = TransferProgress(minimumInterval: .zero)
    let streamed = try await client.stream(
      Endpoint<Void>(.get, "big").downloadProgress(progress), bufferSize: 16 * 1024)
    var received = 0
    for try await chunk in streamed.body { received += chunk.count }
    #expect(received == body.count)
    var final: TransferProgress.Event?
    for await event in progress.events where event.isFinal { final = event }
    #expect(final?.completed == Int64(body.count))
  }

  @Test("cancelAll() ends a body being read, as it ends a request in flight")
  func cancelAllEndsAStream() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(MockResponse(fault: .endlessBody))
    let transport = CurlTransport()
    defer { transport.shutdown() }
    let client = Client(baseURL: server.url("/"), transport: transport)
    let streamed = try await client.stream(Endpoint<Void>(.get, "endless"), bufferSize: 64 * 1024)
    var iterator = streamed.body.makeAsyncIterator()
    _ = try await iterator.next()
    client.cancelAll()
    var received = 0
    var failure: CourierError?
    do {
      // A bounded read: 64 MiB after cancelAll() is a transfer that went on.
      while let chunk = try await iterator.next() {
        received += chunk.count
        if received > 64 << 20 { break }
      }
    } catch {
      failure = error
    }
    #expect(failure?.kind == .cancelled, "read \(received) bytes after cancelAll()")
  }

  @Test(
    "bodiless and empty answers end their streams and their transfers",
    arguments: [
      ("HEAD", MockResponse(body: Data("ignored".utf8))),
      ("GET", MockResponse(status: 204)),
      ("GET", MockResponse(status: 200)),
      ("GET", MockResponse(status: 200, chunked: true)),
      ("GET", MockResponse(status: 205)),
    ])
  func bodilessAnswers(method: String, response: MockResponse) async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(response)
    server.enqueue(.text("after"))
    let transport = CurlTransport()
    defer { transport.shutdown() }
    let client = Client(baseURL: server.url("/"), transport: transport)
    var request = Request(url: server.url("/empty"))
    request.method = try HTTPMethod(method)
    let streamed = try await client.stream(request, bufferSize: 1)
    #expect(streamed.head.status == response.status)
    let received = try await streamed.body.collect(upTo: 1 << 20)
    #expect(received.isEmpty)
    await expectIdle(transport)
    let after = try await client.send(Request(url: server.url("/after")))
    #expect(after.bodyText == "after")
  }

  @Test("a redirect followed to a 2xx streams the final body, every byte in order")
  func redirectToStream() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let body = Self.pattern(300 * 1024 + 5)
    server.enqueue(
      MockResponse(status: 302, body: Data("moved".utf8)).addingHeader("Location", "/final"))
    server.enqueue(MockResponse(body: body, chunked: true))
    let transport = CurlTransport()
    defer { transport.shutdown() }
    let client = Client(baseURL: server.url("/"), transport: transport)
    let streamed = try await client.stream(Endpoint<Void>(.get, "start"), bufferSize: 4 * 1024)
    #expect(streamed.head.status == 200)
    #expect(streamed.head.request.url.path == "/final")
    let received = try await streamed.body.collect(upTo: 1 << 20)
    #expect(received.count == body.count)
    #expect(received == body)
    await expectIdle(transport)
  }

  @Test("callers cancelled around the head's arrival never hang and leave nothing in flight")
  func cancelAroundTheHead() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.setDispatcher { _ in MockResponse(fault: .endlessBody) }
    let transport = CurlTransport()
    defer { transport.shutdown() }
    let client = Client(baseURL: server.url("/"), transport: transport)
    for round in 0..<60 {
      let before = server.requestCount
      let done = Mutex(false)
      let reading = Task {
        defer { done.withLock { $0 = true } }
        let streamed = try await client.stream(
          Endpoint<Void>(.get, "endless"), bufferSize: 16 * 1024)
        var count = 0
        for try await chunk in streamed.body {
          count += chunk.count
          if count > 4 << 20 { break }
        }
        return count
      }
      // Cancelled a varying number of scheduler turns after the server has the request
      // (or the request ended without reaching it): while the head is on its way, as it
      // arrives, or while the body is read.
      while server.requestCount == before, !done.withLock({ $0 }) { await Task.yield() }
      for _ in 0..<(round % 15) { await Task.yield() }
      reading.cancel()
      _ = await reading.result
    }
    await expectIdle(transport)
  }
}
