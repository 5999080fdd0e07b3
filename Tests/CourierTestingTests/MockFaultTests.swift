import CourierTesting
import Foundation
import Testing

/// What each ``MockFault`` puts on the wire, read byte for byte with a raw socket.
@Suite("MockServer faults on the wire", .serialized, .timeLimit(.minutes(5)))
struct MockFaultTests {
  private static let ten = Data("0123456789".utf8)

  /// Sends a GET for `path` on a new raw connection and returns the client.
  private func request(_ server: MockServer, _ path: String = "/") throws -> RawClient {
    let client = try RawClient(port: server.port)
    try client.send("GET \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n")
    return client
  }

  private func text(_ bytes: [UInt8]) -> String {
    String(decoding: bytes, as: UTF8.self)
  }

  @Test("throttle sends the whole response in small paced pieces, then keeps the connection")
  func throttle() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let body = Data(repeating: UInt8(ascii: "t"), count: 400)
    server.enqueue(MockResponse(body: body, fault: .throttle(bytesPerSecond: 1000)))
    let clock = ContinuousClock()
    let start = clock.now
    let client = try request(server, "/slow")
    defer { client.close() }
    let response = try client.readResponse()
    let elapsed = clock.now - start
    // Pieces of 50 bytes, the last one due at (total − 50) / 1000 s.
    let total = response.head.utf8.count + body.count
    let due = Duration.milliseconds((total - 50) / 50 * 50)
    #expect(elapsed >= due, "\(elapsed) for \(total) bytes")
    #expect(elapsed < due + .seconds(2))
    #expect(response.head.hasPrefix("HTTP/1.1 200 OK\r\n"))
    #expect(response.body == [UInt8](body))
    // The connection stays usable.
    server.enqueue(.text("next"))
    try client.send("GET /next HTTP/1.1\r\nHost: localhost\r\n\r\n")
    #expect(text(try client.readResponse().body) == "next")
  }

  @Test("a throttled response ends when the client closes or the server shuts down")
  func throttleInterrupted() async throws {
    let server = try MockServer()
    let body = Data(repeating: 1, count: 1000)
    server.enqueue(MockResponse(body: body, fault: .throttle(bytesPerSecond: 1)))
    server.enqueue(.text("fresh"))
    let first = try request(server, "/crawl")
    #expect(try first.read(count: 1) == Array("H".utf8))
    first.close()
    // The client's close ends the throttled wait; meanwhile other connections are served.
    let second = try request(server, "/fresh")
    defer { second.close() }
    #expect(text(try second.readResponse().body) == "fresh")

    server.enqueue(MockResponse(body: body, fault: .throttle(bytesPerSecond: 1)))
    let third = try request(server, "/crawl")
    defer { third.close() }
    #expect(try third.read(count: 1) == Array("H".utf8))
    let clock = ContinuousClock()
    let start = clock.now
    server.shutdown()
    #expect(clock.now - start < .seconds(2))
    // "H" was read; at most the next pieces (1 byte each, one a second) came before the end.
    #expect(try third.readAllBytes().count <= 2)
  }

  @Test("closeAfterBodyBytes sends the real Content-Length, n body bytes, then FIN")
  func closeAfterBodyBytes() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(MockResponse(body: Self.ten, fault: .closeAfterBodyBytes(3)))
    let client = try request(server)
    defer { client.close() }
    let raw = text(try client.readAllBytes())
    #expect(raw.hasPrefix("HTTP/1.1 200 OK\r\n"))
    #expect(raw.contains("Content-Length: 10\r\n"))
    #expect(raw.hasSuffix("\r\n\r\n012"))
    #expect(!client.sawReset)

    server.enqueue(MockResponse(body: Self.ten, chunked: true, fault: .closeAfterBodyBytes(4)))
    let chunked = try request(server)
    defer { chunked.close() }
    let rawChunked = text(try chunked.readAllBytes())
    #expect(rawChunked.contains("Transfer-Encoding: chunked\r\n"))
    #expect(rawChunked.hasSuffix("\r\n\r\n4\r\n0123\r\n"))
  }

  @Test("resetAfterBodyBytes and resetMidBody send part of the body, then RST")
  func reset() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(MockResponse(body: Self.ten, fault: .resetAfterBodyBytes(2)))
    let client = try request(server)
    defer { client.close() }
    let head = try client.read(until: "\r\n\r\n")
    #expect(head.contains("Content-Length: 10\r\n"))
    let rest = text(try client.readAllBytes())
    #expect(rest == "01", "\(rest)")
    #expect(client.sawReset)

    server.enqueue(MockResponse(body: Self.ten, fault: .resetMidBody))
    let mid = try request(server)
    defer { mid.close() }
    _ = try mid.read(until: "\r\n\r\n")
    let midRest = text(try mid.readAllBytes())
    #expect(midRest == "01234", "\(midRest)")
    #expect(mid.sawReset)
    #expect(MockFault.resetMidBody.description == "resetMidBody")
  }

  @Test("malformedStatusLine sends HTTP/1.1 2OO OK, then the headers and body")
  func malformedStatusLine() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(MockResponse(body: Self.ten, fault: .malformedStatusLine))
    let client = try request(server)
    defer { client.close() }
    let raw = text(try client.readAllBytes())
    #expect(raw.hasPrefix("HTTP/1.1 2OO OK\r\n"))
    #expect(raw.contains("Content-Length: 10\r\nConnection: close\r\n\r\n0123456789"))
  }

  @Test("conflicting and duplicated Content-Length fields")
  func contentLengths() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(MockResponse(body: Data("hello".utf8), fault: .conflictingContentLength))
    let conflicting = try request(server)
    defer { conflicting.close() }
    let raw = text(try conflicting.readAllBytes())
    #expect(raw.contains("\r\nContent-Length: 5\r\nContent-Length: 15\r\n"))
    #expect(raw.hasSuffix("\r\n\r\nhello"))

    server.enqueue(MockResponse(body: Data("hello".utf8), fault: .duplicatedContentLength))
    let duplicated = try request(server)
    defer { duplicated.close() }
    let rawDuplicated = text(try duplicated.readAllBytes())
    #expect(rawDuplicated.contains("\r\nContent-Length: 5\r\nContent-Length: 5\r\n"))
    #expect(rawDuplicated.components(separatedBy: "Content-Length").count == 3)
    #expect(rawDuplicated.hasSuffix("\r\n\r\nhello"))
  }

  @Test("brokenChunking sends a valid chunk, then the size line zz")
  func brokenChunking() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(MockResponse(body: Self.ten, fault: .brokenChunking))
    let client = try request(server)
    defer { client.close() }
    let raw = text(try client.readAllBytes())
    #expect(raw.contains("Transfer-Encoding: chunked\r\n"))
    #expect(!raw.contains("Content-Length"))
    #expect(raw.hasSuffix("\r\n\r\n5\r\n01234\r\nzz\r\n56789\r\n"))
  }

  @Test("endlessBody streams 16 KiB chunks until the client leaves or the server shuts down")
  func endlessBody() async throws {
    let server = try MockServer()
    server.enqueue(MockResponse(body: Self.ten, fault: .endlessBody))
    server.enqueue(.text("after"))
    let client = try request(server, "/forever")
    let head = try client.read(until: "\r\n\r\n")
    #expect(head.contains("Transfer-Encoding: chunked\r\n"))
    #expect(!head.contains("Content-Length"))
    // Four megabytes in 16 KiB chunks of x, each with its size line.
    var chunk = Array("4000\r\n".utf8)
    chunk += [UInt8](repeating: UInt8(ascii: "x"), count: 16_384)
    chunk += Array("\r\n".utf8)
    for _ in 0..<256 {
      #expect(try client.read(count: chunk.count) == chunk)
    }
    client.close()
    let next = try request(server, "/after")
    defer { next.close() }
    #expect(text(try next.readResponse().body) == "after")

    // A client that stops reading leaves the server blocked on a full socket; shutdown still
    // ends it at once.
    server.enqueue(MockResponse(fault: .endlessBody))
    let stalled = try request(server, "/stalled")
    defer { stalled.close() }
    _ = try stalled.read(until: "\r\n\r\n")
    _ = try await server.takeRequest()
    _ = try await server.takeRequest()
    _ = try await server.takeRequest()
    let clock = ContinuousClock()
    let start = clock.now
    server.shutdown()
    #expect(clock.now - start < .seconds(2))
  }

  @Test("gzip writes a member any decoder inflates; corruptCRC flips the CRC-32 trailer")
  func gzip() async throws {
    let good = MockResponse.gzip(Data("hello".utf8))
    #expect(good.header("Content-Encoding") == "gzip")
    // Header, one final stored block (LEN 5, NLEN ~5), the data, CRC-32 0x3610a686, ISIZE 5.
    var expected: [UInt8] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255, 1, 5, 0, 0xfa, 0xff]
    expected += Array("hello".utf8)
    expected += [0x86, 0xa6, 0x10, 0x36, 5, 0, 0, 0]
    #expect([UInt8](good.body) == expected)
    let bad = MockResponse.gzip(Data("hello".utf8), corruptCRC: true)
    #expect([UInt8](bad.body.suffix(8)) == [0x79, 0x59, 0xef, 0xc9, 5, 0, 0, 0])
    // Larger than one stored block, and empty.
    let large = MockResponse.gzip(Data(repeating: 3, count: 70_000)).body
    let largeSize = 10 + 5 + 65_535 + 5 + 4_465 + 8
    #expect(large.count == largeSize)
    let emptySize = 10 + 5 + 8
    #expect(MockResponse.gzip(Data()).body.count == emptySize)

    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(bad)
    let client = try request(server)
    defer { client.close() }
    let response = try client.readResponse()
    #expect(response.head.contains("Content-Encoding: gzip\r\n"))
    #expect(response.body == [UInt8](bad.body))
  }

  @Test("Retry-After in both forms; httpDate writes an IMF-fixdate")
  func retryAfter() async throws {
    let date = Date(timeIntervalSince1970: 784_111_777)
    #expect(MockResponse.httpDate(date) == "Sun, 06 Nov 1994 08:49:37 GMT")
    #expect(MockResponse(status: 503).retryAfter(seconds: 2).header("Retry-After") == "2")
    let dated = MockResponse(status: 503).retryAfter(date: date)
    #expect(dated.header("retry-after") == "Sun, 06 Nov 1994 08:49:37 GMT")

    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(dated)
    let client = try request(server)
    defer { client.close() }
    let response = try client.readResponse()
    #expect(response.head.hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"))
    #expect(response.head.contains("\r\nRetry-After: Sun, 06 Nov 1994 08:49:37 GMT\r\n"))
  }

  @Test("every fault has a name")
  func names() {
    let names = [
      MockFault.throttle(bytesPerSecond: 10), .closeAfterBodyBytes(3), .resetAfterBodyBytes(4),
      .malformedStatusLine, .conflictingContentLength, .duplicatedContentLength,
      .brokenChunking, .endlessBody,
    ].map(\.description)
    #expect(
      names == [
        "throttle(bytesPerSecond: 10)", "closeAfterBodyBytes(3)", "resetAfterBodyBytes(4)",
        "malformedStatusLine", "conflictingContentLength", "duplicatedContentLength",
        "brokenChunking", "endlessBody",
      ])
  }
}
