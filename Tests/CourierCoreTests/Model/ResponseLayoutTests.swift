import Foundation
import Testing

@testable import CourierCore

@Suite("A response stays small, and its timings stay a value")
struct ResponseLayoutTests {
  static let request = Request(url: URL(fileURLWithPath: "/"))

  @Test("a response and an error are at most 256 and 8 bytes inline")
  func sizes() {
    // Every async function a response passes through keeps copies of it in its frame, which a
    // request in flight holds while it waits: a response that grew by its 200 bytes of
    // timings cost 30 KiB more per request at 1,000 in flight (Docs/Benchmarks.md).
    #expect(MemoryLayout<Response>.size <= 256)
    #expect(MemoryLayout<CourierError>.size == 8)
  }

  @Test("changing one copy's timings leaves the other's as they were")
  func timingsAreAValue() {
    var first = Response(status: 200, request: Self.request)
    #expect(first.timings == Response.Timings())
    first.timings.total = .milliseconds(5)
    var second = first
    second.timings.firstByte = .milliseconds(2)
    second.timings.total = .milliseconds(7)
    #expect(first.timings == Response.Timings(total: .milliseconds(5)))
    #expect(
      second.timings == Response.Timings(total: .milliseconds(7), firstByte: .milliseconds(2)))
    let given = Response.Timings(connectionReused: true, httpVersion: "HTTP/1.1")
    let made = Response(status: 204, request: Self.request, timings: given)
    #expect(made.timings == given)
  }
}
