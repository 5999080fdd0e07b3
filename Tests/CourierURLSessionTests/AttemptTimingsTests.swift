import Courier
import CourierTesting
import Foundation
import Testing

@testable import CourierURLSession

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What ``AttemptTimings`` makes of what a task showed: task metrics' dates where the
/// platform delivers them, else the head and the completion the transport saw.
@Suite("URLSessionTransport's timings")
struct AttemptTimingsTests {
  @Test("a transaction's dates become phases from its fetch start; TCP ends where TLS starts")
  func transaction() throws {
    let start = Date(timeIntervalSinceReferenceDate: 1_000)
    func at(_ milliseconds: Double) -> Date { start.addingTimeInterval(milliseconds / 1000) }
    let timings = try #require(
      AttemptTimings.timings(
        AttemptTimings.Transaction(
          fetchStart: start, domainLookupEnd: at(1), secureConnectionStart: at(2),
          secureConnectionEnd: at(5), connectEnd: at(5), requestStart: at(6),
          responseStart: at(9), responseEnd: at(12), protocolName: "h2", address: "::1",
          port: 8443),
        secure: true))
    #expect(timings.nameLookup == .milliseconds(1))
    #expect(timings.connect == .milliseconds(2))
    #expect(timings.tlsHandshake == .milliseconds(5))
    #expect(timings.requestSent == .milliseconds(6))
    #expect(timings.firstByte == .milliseconds(9))
    #expect(timings.bodyComplete == .milliseconds(12))
    #expect(timings.connectionReused == false)
    #expect(timings.remoteAddress == "[::1]:8443")
    #expect(timings.httpVersion == "HTTP/2")

    let reused = try #require(
      AttemptTimings.timings(
        AttemptTimings.Transaction(
          fetchStart: start, requestStart: at(1), responseStart: at(2), responseEnd: at(3),
          reused: true, protocolName: "http/1.1"),
        secure: false))
    #expect(reused.connectionReused == true)
    #expect(reused.nameLookup == .zero)
    #expect(reused.connect == .zero)
    #expect(reused.tlsHandshake == nil)
    #expect(reused.httpVersion == "HTTP/1.1")
    #expect(AttemptTimings.timings(AttemptTimings.Transaction(), secure: false) == nil)
  }

  @Test("without metrics: the head is the first byte, the completion the body's end")
  func measured() {
    var clock = AttemptTimings()
    clock.head = clock.start + .milliseconds(4)
    clock.end = clock.start + .milliseconds(9)
    let done = clock.timings(complete: true)
    #expect(done.firstByte == .milliseconds(4))
    #expect(done.bodyComplete == .milliseconds(9))
    #expect(done.nameLookup == nil)
    #expect(done.connectionReused == nil)
    #expect(clock.timings(complete: false).bodyComplete == nil)
    #expect(clock.timings(complete: true, streamed: true).bodyComplete == .milliseconds(4))
    // A redirect hop starts the clock again.
    clock.restart()
    #expect(clock.timings(complete: false).firstByte == nil)
  }
}
