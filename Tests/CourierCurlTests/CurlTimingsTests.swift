import CCourierCurl
import Courier
import CourierTesting
import Foundation
import Testing

@testable import CourierCurl

/// How libcurl's `CURLINFO_…_TIME_T` answers become ``Response/Timings``, with the numbers
/// libcurl 7.88 gives for each case (read with `curl -w` against nginx and closed ports), and
/// the same over a real transfer.
@Suite("CurlTransport's timings", .timeLimit(.minutes(5)))
struct CurlTimingsTests {
  @Test("a fresh plain connection: every phase but TLS, in microseconds, with its address")
  func fresh() {
    let times = CurlTimes(
      nameLookup: 13, connect: 172, preTransfer: 283, startTransfer: 1_218, total: 1_309,
      connectionsOpened: 1, ip: "127.0.0.1", port: 8080, httpVersion: CURL_HTTP_VERSION_1_1)
    let timings = times.timings(secure: false, complete: true)
    #expect(timings.nameLookup == .microseconds(13))
    #expect(timings.connect == .microseconds(172))
    #expect(timings.tlsHandshake == nil)
    #expect(timings.requestSent == .microseconds(283))
    #expect(timings.firstByte == .microseconds(1_218))
    #expect(timings.bodyComplete == .microseconds(1_309))
    #expect(timings.connectionReused == false)
    #expect(timings.remoteAddress == "127.0.0.1:8080")
    #expect(timings.httpVersion == "HTTP/1.1")
    #expect(timings.total == nil, "the client sets the total")
  }

  @Test("a kept connection: lookup, connect and (over TLS) handshake are zero, in order")
  func reused() {
    // libcurl 7.88 reports a lookup of some microseconds and a connect of 0 here.
    let times = CurlTimes(
      nameLookup: 12, preTransfer: 58, startTransfer: 11_767, total: 11_867,
      ip: "::1", port: 443, httpVersion: CURL_HTTP_VERSION_2_0)
    let timings = times.timings(secure: true, complete: true)
    #expect(timings.connectionReused == true)
    #expect(timings.nameLookup == .zero)
    #expect(timings.connect == .zero)
    #expect(timings.tlsHandshake == .zero)
    #expect(timings.requestSent == .microseconds(58))
    #expect(timings.remoteAddress == "[::1]:443")
    #expect(timings.httpVersion == "HTTP/2")
    #expect(times.timings(secure: false, complete: true).tlsHandshake == nil)
  }

  @Test("a refused connection reached the lookup only; a silent server no first byte")
  func failures() {
    let refused = CurlTimes(nameLookup: 17, total: 119).timings(secure: false, complete: false)
    #expect(refused.nameLookup == .microseconds(17))
    #expect(refused.connect == nil)
    #expect(refused.requestSent == nil)
    #expect(refused.firstByte == nil)
    #expect(refused.bodyComplete == nil)
    #expect(refused.connectionReused == false)
    #expect(refused.remoteAddress == nil)
    #expect(refused.httpVersion == nil)

    let silent = CurlTimes(
      nameLookup: 18, connect: 5_513, preTransfer: 5_558, total: 505_399, connectionsOpened: 1,
      ip: "127.0.0.1", port: 9
    ).timings(secure: false, complete: false)
    #expect(silent.connect == .microseconds(5_513))
    #expect(silent.requestSent == .microseconds(5_558))
    #expect(silent.firstByte == nil)
    #expect(silent.bodyComplete == nil)

    // A TLS handshake that failed: connected, no handshake time.
    let handshake = CurlTimes(nameLookup: 20, connect: 150, total: 900, connectionsOpened: 1)
      .timings(secure: true, complete: false)
    #expect(handshake.connect == .microseconds(150))
    #expect(handshake.tlsHandshake == nil)
  }

  @Test("a phase libcurl rounds below the one before it is raised to it; 0 before a reached one")
  func order() {
    let timings = CurlTimes(
      nameLookup: 0, connect: 40, appConnect: 900, preTransfer: 850, startTransfer: 2_000,
      total: 1_990, connectionsOpened: 1
    ).timings(secure: true, complete: true)
    #expect(timings.nameLookup == .zero)
    #expect(timings.requestSent == .microseconds(900))
    #expect(timings.bodyComplete == .microseconds(2_000))
  }

  @Test("a handle gives its last address text again only for the same IP and port")
  func addressKept() throws {
    let handle = try #require(CurlEasyHandle())
    func address(_ ip: String, _ port: Int) -> String {
      ip.withCString { handle.remoteAddress(ip: $0, port: port) }
    }
    #expect(address("127.0.0.1", 8080) == "127.0.0.1:8080")
    #expect(address("127.0.0.1", 8080) == "127.0.0.1:8080")
    #expect(address("127.0.0.1", 8081) == "127.0.0.1:8081")
    #expect(address("127.0.0.2", 8081) == "127.0.0.2:8081")
    #expect(address("::1", 8081) == "[::1]:8081")
    #expect(address("127.0.0.1", 8080) == "127.0.0.1:8080")
  }

  @Test("libcurl's HTTP versions by name")
  func versions() {
    #expect(CurlTimes.versionName(CURL_HTTP_VERSION_1_0) == "HTTP/1.0")
    #expect(CurlTimes.versionName(CURL_HTTP_VERSION_3) == "HTTP/3")
    #expect(CurlTimes.versionName(0) == nil)
  }

  @Test("a streamed body's timings are its head's, in order")
  func streamedHead() async throws {
    let fixture = try CurlFixture()
    defer { fixture.shutdown() }
    fixture.server.enqueue(MockResponse(body: Data(repeating: 7, count: 100_000)))
    let streamed = try await fixture.client.stream(
      Request(url: fixture.server.url("stream")), bufferSize: 64 * 1024)
    let timings = streamed.head.timings
    let firstByte = try #require(timings.firstByte)
    let head = try #require(timings.bodyComplete)
    #expect(head >= firstByte)
    #expect((timings.requestSent ?? .zero) <= firstByte)
    #expect(timings.connectionReused == false)
    var count = 0
    for try await chunk in streamed.body { count += chunk.count }
    #expect(count == 100_000)
  }
}
