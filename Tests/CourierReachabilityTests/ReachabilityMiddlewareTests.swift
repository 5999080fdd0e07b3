import CourierCore
import CourierReachability
import CourierTesting
import Foundation
import Testing

@Suite("ReachabilityMiddleware over a fake monitor", .timeLimit(.minutes(5)))
struct ReachabilityMiddlewareTests {
  @Test(
    "offline with fail fast, an address whose route is unknown: nothing is sent, kind notReachable, reason in zh-Hans"
  )
  func failFast() async throws {
    let stub = StubTransport([.json("{}")])
    let monitor = FakePathMonitor(.unsatisfied(reason: .noUsableInterface))
    let client = stubClient(
      stub, middleware: [ReachabilityMiddleware(monitor: monitor, whenOffline: .failFast)],
      base: addressBase, locale: "zh-Hans")
    let error = await thrownError { try await client.send(Endpoint<Void>(.get, "ping")) }
    #expect(error?.kind == .notReachable)
    #expect(error?.reason == "您连接的网络不正常，请检查您的网络连接")
    #expect(error?.debugDescription.contains("failing fast") == true)
    #expect(error?.stage == "reachability")
    #expect(stub.requests.isEmpty)
    #expect(monitor.subscriberCount == 0, "failing fast subscribes to nothing")
    #expect(monitor.routeLookups == [try #require(RouteDestination("192.0.2.10"))])
  }

  @Test("offline with fail fast, English reason")
  func failFastEnglish() async {
    let stub = StubTransport()
    let monitor = FakePathMonitor(.unsatisfied(reason: .noDefaultRoute))
    let client = stubClient(
      stub, middleware: [ReachabilityMiddleware(monitor: monitor, whenOffline: .failFast)],
      base: addressBase)
    let error = await thrownError { try await client.send(Endpoint<Void>(.get, "ping")) }
    #expect(error?.reason == "You seem to be offline. Check your network connection.")
    #expect(error?.debugDescription.contains("no default route") == true)
  }

  @Test(
    "offline, a request to loopback is still sent: it never leaves the machine",
    arguments: [
      "http://127.0.0.1:8080/x", "http://127.3.4.5/x", "http://localhost/x", "http://[::1]:9/x",
      "http://api.localhost/x",
      // The unspecified address, which connects to loopback, and the spellings of loopback
      // that libcurl reads as addresses.
      "http://0.0.0.0:8080/x", "http://[::]:8080/x", "http://127.1/x", "http://0x7f.1/x",
      "http://2130706433/x", "http://[0:0:0:0:0:0:0:1]/x", "http://[::ffff:127.0.0.1]/x",
    ])
  func loopbackSkipsThePathCheck(url: String) async throws {
    let stub = StubTransport([.json("{}")])
    let monitor = FakePathMonitor(.unsatisfied(reason: .noDefaultRoute))
    monitor.unlistedRoute = .unroutable
    let client = stubClient(
      stub, middleware: [ReachabilityMiddleware(monitor: monitor, whenOffline: .failFast)])
    let response = try await client.send(Request(method: .get, url: try #require(URL(string: url))))
    #expect(response.status == 200)
    #expect(stub.requests.count == 1)
    #expect(monitor.routeLookups.isEmpty, "loopback needs no route lookup")
  }

  @Test(
    "offline with fail fast, an address that only looks like loopback is refused",
    arguments: ["http://128.0.0.1/x", "http://[::2]/x"])
  func addressLookalikesFailFast(url: String) async throws {
    let stub = StubTransport([.json("{}")])
    let monitor = FakePathMonitor(.unsatisfied(reason: .noDefaultRoute))
    let client = stubClient(
      stub, middleware: [ReachabilityMiddleware(monitor: monitor, whenOffline: .failFast)])
    let error = await thrownError {
      _ = try await client.send(Request(method: .get, url: try #require(URL(string: url))))
    }
    #expect(error?.kind == .notReachable)
    #expect(stub.requests.isEmpty)
  }

  @Test(
    "offline, names that only look like loopback are not loopback: a network failure is reported offline",
    arguments: ["http://127.0.0.1.example.com/x", "http://localhost.com/x"])
  func nameLookalikesAreReported(url: String) async throws {
    let stub = StubTransport([networkFailure(.cannotConnect)])
    let monitor = FakePathMonitor(.unsatisfied(reason: .noUsableInterface))
    let client = stubClient(
      stub, middleware: [ReachabilityMiddleware(monitor: monitor, whenOffline: .failFast)])
    let error = await thrownError {
      _ = try await client.send(Request(method: .get, url: try #require(URL(string: url))))
    }
    #expect(error?.kind == .notReachable)
    #expect(stub.requests.count == 1, "a host name is sent, not refused on the status")
  }

  @Test(
    "a satisfied path sends at once, without a route lookup",
    arguments: [ReachabilityMiddleware.OfflinePolicy.inform, .failFast, .wait()])
  func satisfiedSends(policy: ReachabilityMiddleware.OfflinePolicy) async throws {
    let stub = StubTransport([.json("{}")])
    let monitor = FakePathMonitor(.satisfied(interfaces: [.wired]))
    monitor.unlistedRoute = .unroutable
    let client = stubClient(
      stub, middleware: [ReachabilityMiddleware(monitor: monitor, whenOffline: policy)])
    let response = try await client.send(Request(method: .get, url: addressBase))
    #expect(response.status == 200)
    #expect(stub.requests.count == 1)
    #expect(monitor.routeLookups.isEmpty)
    #expect(monitor.subscriberCount == 0)
  }

  @Test("waiting: the request goes out when the path comes back")
  func waitThenSend() async throws {
    let clock = TestClock()
    let stub = StubTransport([.json("{}")])
    let monitor = FakePathMonitor(.unsatisfied(reason: .noUsableInterface))
    let client = stubClient(
      stub,
      middleware: [
        ReachabilityMiddleware(
          monitor: monitor, whenOffline: .wait(upTo: .seconds(10)), clock: clock)
      ])
    let task = Task { try await client.send(Request(method: .get, url: addressBase)) }
    await monitor.waitForSubscribers(1)
    await clock.waitForSleepers(1)
    #expect(stub.requests.isEmpty, "nothing is sent while offline")
    monitor.status = .unsatisfied(reason: .noDefaultRoute)  // still offline: keeps waiting
    clock.advance(by: .seconds(9))
    #expect(stub.requests.isEmpty)
    monitor.status = .satisfied(interfaces: [.wifi])
    let response = try await task.linkedValue
    #expect(response.status == 200)
    #expect(stub.requests.count == 1)
    #expect(monitor.subscriberCount == 0, "the wait's subscription ends with it")
    #expect(clock.sleeperCount == 0, "the wait's timer ends with it")
  }

  @Test("waiting: the bound passes with the path still down → notReachable, nothing sent")
  func waitBoundExceeded() async {
    let clock = TestClock()
    let stub = StubTransport()
    let monitor = FakePathMonitor(.unsatisfied(reason: .noUsableInterface))
    let middleware = ReachabilityMiddleware(
      monitor: monitor, whenOffline: .wait(upTo: .seconds(10)), clock: clock)
    let client = stubClient(stub, middleware: [middleware])
    let task = Task { try await client.send(Request(method: .get, url: addressBase)) }
    await monitor.waitForSubscribers(1)
    await clock.waitForSleepers(1)
    clock.advance(by: .seconds(10) - .milliseconds(1))
    #expect(monitor.subscriberCount == 1, "still waiting a millisecond before the bound")
    clock.advance(by: .milliseconds(1))
    let error = await thrownError { _ = try await task.linkedValue }
    #expect(error?.kind == .notReachable)
    #expect(error?.debugDescription.contains("the wait of 10 s ran out") == true)
    #expect(stub.requests.isEmpty)
  }

  @Test("waiting: the request's deadline caps the wait")
  func deadlineCapsWait() async {
    let clock = TestClock()
    let stub = StubTransport()
    let monitor = FakePathMonitor(.unsatisfied(reason: .noUsableInterface))
    let client = stubClient(
      stub,
      middleware: [
        ReachabilityMiddleware(
          monitor: monitor, whenOffline: .wait(upTo: .seconds(10)), clock: clock)
      ])
    var request = Request(method: .get, url: addressBase)
    request.attributes[DeadlineAttribute.self] = Deadline(after: .seconds(3), clock: clock)
    let sent = request
    let task = Task { try await client.send(sent) }
    await clock.waitForSleepers(1)
    clock.advance(by: .seconds(3))
    let error = await thrownError { _ = try await task.linkedValue }
    #expect(error?.kind == .notReachable)
    #expect(error?.debugDescription.contains("the request's deadline (3 s overall)") == true)

    // A deadline already passed fails without waiting at all.
    clock.advance(by: .seconds(1))
    let late = await thrownError { _ = try await client.send(sent) }
    #expect(late?.kind == .notReachable)
    #expect(late?.debugDescription.contains("left no time") == true)
    #expect(stub.requests.isEmpty)
  }

  @Test("cancelling the task ends the wait at once with kind cancelled")
  func taskCancellation() async {
    let stub = StubTransport()
    let monitor = FakePathMonitor(.unsatisfied(reason: .noUsableInterface))
    let client = stubClient(
      stub,
      middleware: [ReachabilityMiddleware(monitor: monitor, whenOffline: .wait(upTo: .seconds(30)))]
    )
    let task = Task { try await client.send(Request(method: .get, url: addressBase)) }
    await monitor.waitForSubscribers(1)
    let clock = ContinuousClock()
    let start = clock.now
    task.cancel()
    let error = await thrownError { _ = try await task.linkedValue }
    let elapsed = start.duration(to: clock.now)
    #expect(error?.kind == .cancelled)
    // Against a 30 s wait. Not a latency bound: in a full `swift test` on 2 cores, exit tests
    // hold the cooperative pool's threads while their children run, and CI measured 0.99 s
    // here; alone it takes milliseconds.
    #expect(elapsed < .seconds(5), "took \(elapsed)")
    #expect(stub.requests.isEmpty)
  }

  @Test("Client.cancelAll() ends the wait at once with kind cancelled")
  func cancelAll() async {
    let stub = StubTransport()
    let monitor = FakePathMonitor(.unsatisfied(reason: .noUsableInterface))
    let client = stubClient(
      stub,
      middleware: [ReachabilityMiddleware(monitor: monitor, whenOffline: .wait(upTo: .seconds(30)))]
    )
    let task = Task { try await client.send(Request(method: .get, url: addressBase)) }
    await monitor.waitForSubscribers(1)
    let clock = ContinuousClock()
    let start = clock.now
    client.cancelAll()
    let error = await thrownError { _ = try await task.linkedValue }
    let elapsed = start.duration(to: clock.now)
    #expect(error?.kind == .cancelled)
    // Against a 30 s wait. Not a latency bound: in a full `swift test` on 2 cores, exit tests
    // hold the cooperative pool's threads while their children run, and CI measured 0.99 s
    // here; alone it takes milliseconds.
    #expect(elapsed < .seconds(5), "took \(elapsed)")
  }

  @Test("a monitor that stops while a request waits fails it with notReachable")
  func monitorEnds() async {
    let stub = StubTransport()
    let monitor = FakePathMonitor(.unsatisfied(reason: .noUsableInterface))
    let client = stubClient(
      stub,
      middleware: [ReachabilityMiddleware(monitor: monitor, whenOffline: .wait(upTo: .seconds(30)))]
    )
    let task = Task { try await client.send(Request(method: .get, url: addressBase)) }
    await monitor.waitForSubscribers(1)
    monitor.finish()
    let error = await thrownError { _ = try await task.linkedValue }
    #expect(error?.kind == .notReachable)
    #expect(error?.debugDescription.contains("monitor stopped") == true)
  }

  @Test("probe: a closed loopback port → notReachable, nothing sent")
  func probeFails() async throws {
    let closed = try RefusingPort()
    let stub = StubTransport([.json("{}")])
    let client = stubClient(
      stub,
      middleware: [ReachabilityMiddleware(monitor: FakePathMonitor(), probe: .tcpConnect())],
      base: closed.baseURL)
    let error = await thrownError { try await client.send(Endpoint<Void>(.get, "ping")) }
    #expect(error?.kind == .notReachable)
    #expect(error?.debugDescription.contains("probe of 127.0.0.1:\(closed.port)") == true)
    #expect(stub.requests.isEmpty)
    withExtendedLifetime(closed) {}
  }

  @Test("probe: a listening loopback port → the request is sent")
  func probeSucceeds() async throws {
    let open = try ListeningPort()
    let stub = StubTransport([.json("{}")])
    let client = stubClient(
      stub,
      middleware: [ReachabilityMiddleware(monitor: FakePathMonitor(), probe: .tcpConnect())],
      base: open.url)
    try await client.send(Endpoint<Void>(.get, "ping"))
    #expect(stub.requests.count == 1)
  }

  @Test("description: the type and its key settings on one line, the mode first")
  func description() {
    let monitor = FakePathMonitor()
    #expect(
      ReachabilityMiddleware(monitor: monitor).description
        == "ReachabilityMiddleware(inform; probe: off)")
    #expect(
      ReachabilityMiddleware(monitor: monitor, whenOffline: .failFast).description
        == "ReachabilityMiddleware(fail fast; probe: off)")
    #expect(ReachabilityMiddleware(monitor: monitor).whenOffline == .inform)
    #expect(ReachabilityMiddleware.OfflinePolicy.inform.maximumWait == nil)
    #expect(ReachabilityMiddleware.OfflinePolicy.failFast.maximumWait == nil)
    #expect(ReachabilityMiddleware.OfflinePolicy.wait().maximumWait == .seconds(10))
    #expect(
      ReachabilityMiddleware(monitor: monitor, whenOffline: .wait(), probe: .tcpConnect())
        .description == "ReachabilityMiddleware(wait up to 10 s; probe: 1 s)")
    #expect(
      ReachabilityMiddleware(
        monitor: monitor, whenOffline: .wait(upTo: .milliseconds(1500)),
        probe: .tcpConnect(timeout: .milliseconds(250))
      ).description == "ReachabilityMiddleware(wait up to 1.5 s; probe: 250 ms)")
    #expect(ReachabilityMiddleware.defaultMaximumWait == .seconds(10))
    #expect(HostProbe.defaultTimeout == .seconds(1))
  }
}

@Suite("PathStatusBroadcaster", .timeLimit(.minutes(5)))
struct PathStatusBroadcasterTests {
  @Test("every subscriber gets the current status first, then each change")
  func multipleSubscribers() async {
    let broadcaster = PathStatusBroadcaster(.unsatisfied(reason: .unknown))
    let first = broadcaster.updates()
    let second = broadcaster.updates()
    #expect(broadcaster.subscriberCount == 2)
    broadcaster.publish(.satisfied(interfaces: [.wired]))
    broadcaster.publish(.satisfied(interfaces: [.wired]))  // unchanged: not published again
    broadcaster.finish()
    for stream in [first, second] {
      var seen: [PathStatus] = []
      for await status in stream { seen.append(status) }
      // Newest-only buffering: a consumer that was not listening keeps the latest status.
      #expect(seen == [.satisfied(interfaces: [.wired])])
    }
    #expect(broadcaster.subscriberCount == 0)
  }

  @Test("a listening subscriber sees every change in order")
  func listeningSubscriberSeesChanges() async {
    let broadcaster = PathStatusBroadcaster(.unsatisfied(reason: .unknown))
    let stream = broadcaster.updates()
    var iterator = stream.makeAsyncIterator()
    #expect(await iterator.next() == .unsatisfied(reason: .unknown))
    broadcaster.publish(.satisfied(interfaces: [.wifi]))
    #expect(await iterator.next() == .satisfied(interfaces: [.wifi]))
    broadcaster.publish(.unsatisfied(reason: .noDefaultRoute))
    #expect(await iterator.next() == .unsatisfied(reason: .noDefaultRoute))
    #expect(
      PathStatus.satisfied(interfaces: [.wifi, .wired]).description == "satisfied (wifi, wired)")
  }
}
