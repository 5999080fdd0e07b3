import Courier
import CourierTesting
import Foundation
import Testing

@testable import CourierCurl

/// A transport of several event loops keeps the promises of one: the per-host limit is the
/// host's, whatever the other loops are busy with, and one request at a time keeps one
/// connection.
@Suite("CurlTransport's event loops", .timeLimit(.minutes(5)))
struct EventLoopsTests {
  @Test(
    "a host below its limit is not made to wait because the other loop serves another host",
    arguments: [1, 2])
  func hostLimitIsTheHosts(eventLoops: Int) async throws {
    var configuration = CurlTransport.Configuration.standard
    configuration.maximumConnectionsPerHost = 2
    configuration.eventLoops = eventLoops
    let transport = CurlTransport(configuration: configuration)
    defer { transport.shutdown() }
    let first = try MockServer()
    let second = try MockServer()
    defer {
      first.shutdown()
      second.shutdown()
    }
    for server in [first, second] {
      server.setDispatcher { request in
        request.path.hasSuffix("hang") ? MockResponse(fault: .hang) : .text("ok")
      }
    }
    // One request hangs on each host: the first host has one connection of its two.
    let hangs = [first, second].map { server in
      Task { try await transport.send(Request(url: server.url("hang"))) }
    }
    _ = try await first.takeRequest()
    _ = try await second.takeRequest()
    var request = Request(url: first.url("quick"))
    request.timeout = .seconds(2)
    let response = try await transport.send(request)
    #expect(response.status == 200)
    transport.shutdown()
    for hang in hangs { _ = await hang.result }
  }

  @Test("one request at a time from tasks taking turns keeps one connection")
  func turnsKeepOneConnection() async throws {
    let fixture = try CurlFixture()
    defer { fixture.shutdown() }
    fixture.server.setDispatcher { _ in .text("ok") }
    let transport = fixture.transport
    for index in 0..<40 {
      let task = Task { try await transport.send(Request(url: fixture.server.url("n/\(index)"))) }
      _ = try await task.value
    }
    #expect(transport.openedConnections == 1)
  }

  @Test("a request that waited too long names the host's limit, not one loop's share")
  func waitedTooLongNamesTheLimit() async throws {
    var configuration = CurlTransport.Configuration.standard
    configuration.maximumConnectionsPerHost = 2
    configuration.eventLoops = 2
    let fixture = try CurlFixture(configuration)
    defer { fixture.shutdown() }
    fixture.server.setDispatcher { request in
      request.path.hasSuffix("hang") ? MockResponse(fault: .hang) : .text("ok")
    }
    let transport = fixture.transport
    let hangs = (0..<2).map { _ in
      Task { try await transport.send(Request(url: fixture.server.url("hang"))) }
    }
    _ = try await fixture.server.takeRequest()
    _ = try await fixture.server.takeRequest()
    var request = Request(url: fixture.server.url("waits"))
    request.timeout = .milliseconds(200)
    let error = await #expect(throws: CourierError.self) { try await transport.send(request) }
    #expect(error?.kind == .timedOut)
    let message = error?.debugMessage ?? ""
    #expect(message.contains("maximumConnectionsPerHost (2)"), "\(message)")
    transport.shutdown()
    for hang in hangs { _ = await hang.result }
  }

  @Test(
    "loops: as configured over HTTP/1.1, never more than connections or cores, one over HTTP/2")
  func loopCount() {
    func loops(_ version: CurlTransport.HTTPVersion, eventLoops: Int, connections: Int) -> Int {
      var configuration = CurlTransport.Configuration.standard
      configuration.httpVersion = version
      configuration.eventLoops = eventLoops
      configuration.maximumConnectionsPerHost = connections
      let transport = CurlTransport(configuration: configuration)
      defer { transport.shutdown() }
      return transport.eventLoopCount
    }
    let cores = CurlTransport.coreCount
    #expect(loops(.http1, eventLoops: 2, connections: 16) == min(2, cores))
    #expect(loops(.http1, eventLoops: 3, connections: 2) == min(2, cores))
    // A mistaken value starts one loop per core, not a thread per connection allowed.
    #expect(loops(.http1, eventLoops: 10_000, connections: 65_535) == cores)
    #expect(loops(.http1, eventLoops: 0, connections: 16) == 1)
    // HTTP/2 carries a host's requests as streams of one connection: one multi handle.
    #expect(loops(.http2, eventLoops: 2, connections: 16) == 1)
  }
}
