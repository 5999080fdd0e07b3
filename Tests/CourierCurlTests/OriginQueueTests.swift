import CCourierCurl
import Courier
import CourierTesting
import Foundation
import Synchronization
import Testing

@testable import CourierCurl

/// Requests beyond `maximumConnectionsPerHost` to one origin wait in `CurlTransport`'s loop
/// (`CurlOriginQueue`), not inside libcurl: in order, none lost, none answered with another's
/// body, their timeout counting the wait, and out of the line at once when cancelled or shut
/// down.
@Suite("CurlTransport's per-origin line", .timeLimit(.minutes(5)))
struct OriginQueueTests {
  private static func ticket(_ url: String, timeout: Duration? = nil) -> CurlTicket {
    var request = Request(url: URL(string: url) ?? URL(fileURLWithPath: "/"))
    request.timeout = timeout
    return CurlTicket(request: request, limits: CurlTransferLimits(maximumResponseBodySize: 1))
  }

  @Test("an origin is its host, lowercased, and its port, the scheme's default when unnamed")
  func originKeys() {
    func origin(_ text: String) -> String {
      CurlOriginQueue.originAndScheme(of: URL(string: text) ?? URL(fileURLWithPath: "/")).origin
    }
    #expect(origin("http://Example.COM/a") == "example.com:80")
    #expect(origin("https://example.com/a") == "example.com:443")
    #expect(origin("HTTPS://example.com:8443/a") == "example.com:8443")
    #expect(origin("http://127.0.0.1:8080/x?y") == "127.0.0.1:8080")
    #expect(origin("http://[::1]:9/") == "[::1]:9")
    #expect(origin("http://[::1]/") == "[::1]:80")
    #expect(origin("http://user:p%40ss@Host.example:81/p") == "host.example:81")
    #expect(origin("https://host.example?q=1") == "host.example:443")
    #expect(origin("http://host.example:/x") == "host.example:80")
    #expect(origin("http://h#frag") == "h:80")
    #expect(CurlOriginQueue.originAndScheme(of: URL(string: "HTTPS://h/")!).secure)
    #expect(!CurlOriginQueue.originAndScheme(of: URL(string: "http://h:443/")!).secure)
  }

  @Test("up to the limit each origin is admitted; beyond it requests wait and leave in order")
  func admitsAndOrders() {
    var queue = CurlOriginQueue(limit: 2)
    let step1 = queue.admit("a:80")
    #expect(step1)
    let step2 = queue.admit("a:80")
    #expect(step2)
    let step3 = queue.admit("a:80")
    #expect(!step3)
    let step4 = queue.admit("b:80")
    #expect(step4, "another origin has a limit of its own")
    let tickets = (0..<3).map { Self.ticket("http://a/\($0)") }
    let now = ContinuousClock.now
    for ticket in tickets { queue.wait(ticket, for: "a:80", since: now) }
    #expect(queue.waitingCount == 3)
    let step5 = queue.finished("a:80")
    #expect(step5?.ticket === tickets[0])
    let step6 = queue.finished("a:80")
    #expect(step6?.ticket === tickets[1])
    let step7 = queue.remove(tickets[2], from: "a:80")
    #expect(step7)
    let step8 = queue.remove(tickets[2], from: "a:80")
    #expect(!step8, "removed once only")
    #expect(queue.waitingCount == 0)
    // Two still counted in for "a": the two that took the finished ones' places.
    let step9 = queue.admit("a:80")
    #expect(!step9)
    let step10 = queue.finished("a:80")
    #expect(step10 == nil)
    let step11 = queue.admit("a:80")
    #expect(step11)
  }

  @Test("a long line stays in order across compaction")
  func longLineOrder() {
    var queue = CurlOriginQueue(limit: 1)
    let step12 = queue.admit("a:80")
    #expect(step12)
    let tickets = (0..<500).map { Self.ticket("http://a/\($0)") }
    let now = ContinuousClock.now
    for ticket in tickets[..<300] { queue.wait(ticket, for: "a:80", since: now) }
    var order: [CurlTicket] = []
    for _ in 0..<200 { if let next = queue.finished("a:80") { order.append(next.ticket) } }
    for ticket in tickets[300...] { queue.wait(ticket, for: "a:80", since: now) }
    while let next = queue.finished("a:80") { order.append(next.ticket) }
    #expect(order.count == 500)
    #expect(zip(order, tickets).allSatisfy { $0 === $1 })
  }

  @Test("only the waiting requests whose timeout passed are taken out, the rest keep order")
  func expiry() {
    var queue = CurlOriginQueue(limit: 1)
    let step13 = queue.admit("a:80")
    #expect(step13)
    let start = ContinuousClock.now
    let short = Self.ticket("http://a/short", timeout: .milliseconds(100))
    let none = Self.ticket("http://a/none")
    let long = Self.ticket("http://a/long", timeout: .seconds(10))
    for ticket in [short, none, long] { queue.wait(ticket, for: "a:80", since: start) }
    let step14 = queue.removeExpired(at: start + .milliseconds(99))
    #expect(step14.isEmpty)
    let expired = queue.removeExpired(at: start + .milliseconds(100))
    #expect(expired.count == 1 && expired.first?.ticket === short)
    let step15 = queue.finished("a:80")
    #expect(step15?.ticket === none)
    let step16 = queue.finished("a:80")
    #expect(step16?.ticket === long)
    #expect(queue.waitingCount == 0)
  }

  @Test("cancelling thousands of waiting requests costs each a lookup, and keeps the order")
  func massCancel() {
    var queue = CurlOriginQueue(limit: 1)
    let admitted = queue.admit("a:80")
    #expect(admitted)
    let tickets = (0..<20_000).map { Self.ticket("http://a/\($0)") }
    let now = ContinuousClock.now
    for ticket in tickets { queue.wait(ticket, for: "a:80", since: now) }
    // Every third one stays; the others leave from the middle, the front and the end.
    let leaving = tickets.indices.filter { $0 % 3 != 1 }
    let elapsed = ContinuousClock().measure {
      for index in leaving.reversed() {
        let removed = queue.remove(tickets[index], from: "a:80")
        #expect(removed)
      }
    }
    // A copy of the line per cancellation took 29 s here (debug build); a lookup, some ms.
    #expect(elapsed < .seconds(3), "\(elapsed)")
    #expect(queue.waitingCount == tickets.count - leaving.count)
    var order: [CurlTicket] = []
    while let next = queue.finished("a:80") { order.append(next.ticket) }
    let staying = tickets.indices.filter { $0 % 3 == 1 }.map { tickets[$0] }
    #expect(order.count == staying.count)
    #expect(zip(order, staying).allSatisfy { $0 === $1 })
  }

  @Test("requests that keep joining and leaving a line whose head never moves keep their order")
  func churnBehindStuckHead() {
    var queue = CurlOriginQueue(limit: 1)
    let admitted = queue.admit("a:80")
    #expect(admitted)
    let now = ContinuousClock.now
    let first = Self.ticket("http://a/first")
    queue.wait(first, for: "a:80", since: now)
    var kept: [CurlTicket] = [first]
    for round in 0..<1_000 {
      let ticket = Self.ticket("http://a/\(round)")
      queue.wait(ticket, for: "a:80", since: now)
      if round % 100 == 0 {
        kept.append(ticket)
      } else {
        let removed = queue.remove(ticket, from: "a:80")
        #expect(removed)
      }
    }
    #expect(queue.waitingCount == kept.count)
    var order: [CurlTicket] = []
    while let next = queue.finished("a:80") { order.append(next.ticket) }
    #expect(order.count == kept.count)
    #expect(zip(order, kept).allSatisfy { $0 === $1 })
  }

  // MARK: The loop's core, driven by hand

  @Test("a request cancelled before it reached the loop fails at once instead of waiting")
  func cancelledBeforeStart() throws {
    var configuration = CurlTransport.Configuration.standard
    configuration.maximumConnectionsPerHost = 1
    let harness = try #require(CoreHarness(configuration))
    defer { harness.close() }
    var completions: [CurlLoopCore.Completion] = []
    // Port 9 (discard) on loopback: the transfer is only added, never driven.
    harness.core.start(Self.ticket("http://127.0.0.1:9/a"), completions: &completions)
    #expect(completions.isEmpty && harness.core.count == 1)
    // Its cancellation reached the loop in an earlier turn, when it had not been started.
    let cancelled = Self.ticket("http://127.0.0.1:9/b")
    _ = cancelled.markCancelled()
    harness.core.start(cancelled, completions: &completions)
    #expect(completions.count == 1 && completions.first?.0 === cancelled)
    if case .failure(let error) = completions.first?.1 {
      #expect(error.kind == .cancelled)
    } else {
      Issue.record("the cancelled request did not fail")
    }
  }

  @Test("over the HTTP/2 opt-in only https origins take 100 transfers per connection")
  func http2LimitIsForHTTPS() throws {
    var configuration = CurlTransport.Configuration.standard
    configuration.maximumConnectionsPerHost = 1
    configuration.httpVersion = .http2
    let harness = try #require(CoreHarness(configuration))
    defer { harness.close() }
    var completions: [CurlLoopCore.Completion] = []
    // libcurl speaks HTTP/2 over TLS only: an http origin keeps one transfer per connection.
    for index in 0..<5 {
      harness.core.start(Self.ticket("http://127.0.0.1:9/\(index)"), completions: &completions)
    }
    #expect(completions.isEmpty && harness.core.count == 1)
    var queue = CurlOriginQueue(limit: 1, secureLimit: 100)
    for _ in 0..<100 {
      let admitted = queue.admit("h:443", secure: true)
      #expect(admitted)
    }
    let overLimit = queue.admit("h:443", secure: true)
    let plain = queue.admit("h:80")
    let plainAgain = queue.admit("h:80")
    #expect(!overLimit && plain && !plainAgain)
  }

  @Test("a timeout of zero on a request that did not wait is not blamed on the line")
  func zeroTimeoutWithoutWaiting() throws {
    let harness = try #require(CoreHarness(.standard))
    defer { harness.close() }
    var completions: [CurlLoopCore.Completion] = []
    harness.core.start(
      Self.ticket("http://127.0.0.1:9/a", timeout: .zero), completions: &completions)
    #expect(completions.isEmpty, "handed to libcurl, which times it out after 1 ms")
    #expect(harness.core.count == 1)
  }

  // MARK: Over sockets

  @Test("200 requests at once over 2 connections: each gets its own answer, over 2 connections")
  func manyOverFew() async throws {
    var configuration = CurlTransport.Configuration.standard
    configuration.maximumConnectionsPerHost = 2
    let fixture = try CurlFixture(configuration)
    defer { fixture.shutdown() }
    fixture.server.recordsRequests = false
    fixture.server.setDispatcher { request in .text(request.path) }
    let client = fixture.client
    let answers = try await withThrowingTaskGroup(of: (Int, String).self) { group in
      for index in 0..<200 {
        group.addTask {
          let body = try await client.send(Endpoint<Data>(.get, "n/\(index)"))
          return (index, String(decoding: body, as: UTF8.self))
        }
      }
      return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
    }
    #expect(answers.count == 200)
    for (index, body) in answers { #expect(body == "/n/\(index)") }
    #expect(fixture.transport.openedConnections == 2)
  }

  @Test("a waiting request's timeout counts its wait: it fails timedOut, never sent")
  func waitingTimeout() async throws {
    var configuration = CurlTransport.Configuration.standard
    configuration.maximumConnectionsPerHost = 1
    let fixture = try CurlFixture(configuration)
    defer { fixture.shutdown() }
    fixture.server.setDispatcher { request in
      request.path.hasSuffix("hang") ? MockResponse(fault: .hang) : .text("late")
    }
    let transport = fixture.transport
    let hanging = Task { try await transport.send(Request(url: fixture.server.url("hang"))) }
    _ = try await fixture.server.takeRequest()
    var waiting = Request(url: fixture.server.url("waits"))
    waiting.timeout = .milliseconds(300)
    let started = ContinuousClock.now
    let error = await courierError { try await transport.send(waiting) }
    let waited = ContinuousClock.now - started
    #expect(error?.kind == .timedOut)
    #expect(error?.debugDescription.contains("waited for a connection") == true)
    #expect(waited >= .milliseconds(300))
    // The line's timeouts are checked every 100 ms; the bound only tells a timeout that fired
    // from one that waited for the hanging request (forever), with room for a loaded run.
    #expect(waited < .seconds(60), "the line's timeouts are checked every 100 ms")
    hanging.cancel()
    _ = await hanging.result
    #expect(fixture.server.requestCount == 1, "the timed-out request never reached the server")
  }

  @Test("the time a request waited is taken off the timeout libcurl gets")
  func remainingTimeout() async throws {
    var configuration = CurlTransport.Configuration.standard
    configuration.maximumConnectionsPerHost = 1
    let fixture = try CurlFixture(configuration)
    defer { fixture.shutdown() }
    // When the first request reached the server (a server thread, not the cooperative pool,
    // stamps it): its answer leaves no earlier than a second later.
    let firstArrived = ArrivalStamp()
    fixture.server.setDispatcher { request in
      if request.path.hasSuffix("first") { firstArrived.stamp() }
      return MockResponse(status: 200, delay: .seconds(1))
    }
    let transport = fixture.transport
    let first = Task { try await transport.send(Request(url: fixture.server.url("first"))) }
    _ = try await fixture.server.takeRequest()
    // Sent while the first holds the only connection, it waits for it (up to 1 s), then needs
    // 1 s more: 1.5 s in all is too little, though it would be enough if its clock started
    // when its transfer did.
    var second = Request(url: fixture.server.url("second"))
    second.timeout = .milliseconds(1_500)
    let sent = ContinuousClock.now
    let error = await courierError { try await transport.send(second) }
    _ = try await first.value
    // Only meaningful when it was sent at least 600 ms before the first answer could leave
    // (a loaded machine may run this task late). The stamp is the server's, not this task's:
    // a starved pool resumes a task long after its answer came.
    if let arrived = firstArrived.instant, arrived + .seconds(1) - sent > .milliseconds(600) {
      #expect(error?.kind == .timedOut)
    }
  }

  @Test("a cancelled waiting request leaves the line at once and is never sent")
  func waitingCancelled() async throws {
    var configuration = CurlTransport.Configuration.standard
    configuration.maximumConnectionsPerHost = 1
    let fixture = try CurlFixture(configuration)
    defer { fixture.shutdown() }
    fixture.server.setDispatcher { request in
      request.path.hasSuffix("hang") ? MockResponse(fault: .hang) : .text(request.path)
    }
    let transport = fixture.transport
    let hanging = Task { try await transport.send(Request(url: fixture.server.url("hang"))) }
    _ = try await fixture.server.takeRequest()
    let waiting = Task { try await transport.send(Request(url: fixture.server.url("cancelled"))) }
    let third = Task { try await transport.send(Request(url: fixture.server.url("third"))) }
    waiting.cancel()
    let error = await courierError { _ = try await waiting.value }
    #expect(error?.kind == .cancelled)
    hanging.cancel()
    _ = await hanging.result
    let response = try await third.value
    #expect(String(decoding: response.body, as: UTF8.self) == "/third")
    let paths = [try await fixture.server.takeRequest().path]
    #expect(paths == ["/third"], "the cancelled request was sent: \(paths)")
  }

  @Test("shutdown fails every waiting request")
  func shutdownFailsWaiting() async throws {
    var configuration = CurlTransport.Configuration.standard
    configuration.maximumConnectionsPerHost = 1
    let fixture = try CurlFixture(configuration)
    defer { fixture.server.shutdown() }
    fixture.server.setDispatcher { _ in MockResponse(fault: .hang) }
    let transport = fixture.transport
    let tasks = (0..<4).map { index in
      Task { try await transport.send(Request(url: fixture.server.url("w/\(index)"))) }
    }
    _ = try await fixture.server.takeRequest()
    transport.shutdown()
    // Those that were waiting fail as cancelled; one that had not reached the loop yet is
    // refused as sent to a transport shut down. None hangs.
    for task in tasks {
      let error = await courierError { _ = try await task.value }
      #expect(error?.kind == .cancelled || error?.kind == .invalidRequest)
    }
  }
}

/// A ``CurlLoopCore`` over a multi handle of its own, driven by the test (no loop thread).
private final class CoreHarness {
  let multi: UnsafeMutableRawPointer
  let interest = CurlSocketInterest()
  let core: CurlLoopCore

  init?(_ configuration: CurlTransport.Configuration) {
    guard courier_curl_load_failure() == nil, let multi = courier_curl_multi_init() else {
      return nil
    }
    self.multi = multi
    interest.install(on: multi)
    core = CurlLoopCore(multi: multi, configuration: configuration, sockets: interest)
  }

  /// Fails what is left (the completions are dropped) and cleans up the multi handle.
  func close() {
    var completions: [CurlLoopCore.Completion] = []
    core.shutDown(completions: &completions)
    courier_curl_multi_cleanup(multi)
    withExtendedLifetime(interest) {}
  }
}

/// When something happened, stamped from any thread.
private final class ArrivalStamp: Sendable {
  private let stamped = Mutex<ContinuousClock.Instant?>(nil)

  func stamp() { stamped.withLock { $0 = $0 ?? .now } }

  var instant: ContinuousClock.Instant? { stamped.withLock { $0 } }
}
