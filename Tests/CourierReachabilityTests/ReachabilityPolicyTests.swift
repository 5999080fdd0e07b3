import Courier
import CourierTesting
import Foundation
import Testing

/// Inform (the default), and fail fast and wait deciding per destination, over a fake monitor
/// with scripted routes and a stub transport.
@Suite("ReachabilityMiddleware policies over scripted routes", .timeLimit(.minutes(5)))
struct ReachabilityPolicyTests {
  static let address = RouteDestination("192.0.2.10")
  /// A service on a private network, called by name.
  static let serviceBase = URL(string: "http://inventory.internal:8080/")!

  // MARK: - Inform

  @Test("inform is the default: offline with no route, a request is sent and its answer comes back")
  func informSends() async throws {
    let stub = StubTransport([.json(#"{"ok":true}"#)])
    let monitor = FakePathMonitor(.unsatisfied(reason: .noUsableInterface))
    monitor.unlistedRoute = .unroutable
    let client = stubClient(stub, middleware: [ReachabilityMiddleware(monitor: monitor)])
    let response = try await client.send(Request(method: .get, url: addressBase))
    #expect(response.status == 200)
    #expect(stub.requests.count == 1)
    #expect(monitor.routeLookups.isEmpty, "a success asks the monitor nothing")
    #expect(monitor.subscriberCount == 0)
  }

  @Test(
    "inform reports exactly the failures an absent network explains as notReachable",
    arguments: [
      (CourierError.Kind.cannotFindHost, true), (.cannotConnect, true), (.connectionLost, true),
      (.timedOut, false), (.cancelled, false), (.secureConnectionFailed, false),
      (.badResponse, false), (.corruptBody, false), (.bodyTooLarge, false),
      (.invalidRequest, false), (.tooManyRedirects, false), (.transport, false),
      (.notReachable, false),
    ] as [(CourierError.Kind, Bool)])
  func informConvertsNetworkKinds(kind: CourierError.Kind, converted: Bool) async {
    let stub = StubTransport([networkFailure(kind)])
    let monitor = FakePathMonitor(.unsatisfied(reason: .noUsableInterface))
    let client = stubClient(stub, middleware: [ReachabilityMiddleware(monitor: monitor)])
    let error = await thrownError { try await client.send(Endpoint<Void>(.get, "ping")) }
    if converted {
      #expect(error?.kind == .notReachable)
      #expect((error?.underlying as? CourierError)?.kind == kind)
      #expect(error?.stage == "reachability")
    } else {
      #expect(error?.kind == kind)
      #expect(!(error?.underlying is CourierError), "left as the transport reported it")
    }
    #expect(stub.requests.count == 1)
  }

  @Test(
    "inform: a timeout is reported offline only when the stack says the connection never opened",
    arguments: [
      ("Connection timed out after 1001 milliseconds", true),
      ("Failed to connect to api.example.test port 443 after 10000 ms: Timeout was reached", true),
      ("Resolving timed out after 1000 milliseconds", true),
      ("Operation timed out after 30000 milliseconds with 0 bytes received", false),
      ("Operation timed out after 30000 milliseconds with 512 out of 1024 bytes received", false),
      ("", false),
    ])
  func informTimeouts(detail: String, converted: Bool) async {
    let curl = CurlError(code: 28, summary: "Timeout was reached", detail: detail)
    var userInfo: [String: Any] = [:]
    if !detail.isEmpty { userInfo[NSLocalizedDescriptionKey] = detail }
    // URLSession on Linux passes libcurl's words on as the URLError's message.
    let urlError = URLError(.timedOut, userInfo: userInfo)
    for underlying in [curl, urlError] as [any Error] {
      let stub = StubTransport([networkFailure(.timedOut, underlying: underlying)])
      let monitor = FakePathMonitor(.unsatisfied(reason: .noUsableInterface))
      let client = stubClient(stub, middleware: [ReachabilityMiddleware(monitor: monitor)])
      let error = await thrownError { try await client.send(Endpoint<Void>(.get, "ping")) }
      #expect(error?.kind == (converted ? .notReachable : .timedOut), "\(underlying)")
    }
  }

  @Test("inform: Courier's own timeout, which has no stack error underneath, stays timedOut")
  func informLeavesCourierTimeouts() async {
    let stub = StubTransport([.failure(.timedOut)])
    let client = stubClient(
      stub,
      middleware: [
        ReachabilityMiddleware(monitor: FakePathMonitor(.unsatisfied(reason: .noDefaultRoute)))
      ])
    let error = await thrownError { try await client.send(Endpoint<Void>(.get, "ping")) }
    #expect(error?.kind == .timedOut)
  }

  @Test(
    "inform keeps the attempt's error underneath, and gives the offline reason in en and zh-Hans")
  func informKeepsTheOriginal() async throws {
    let curl = CurlError(
      code: 7, summary: "Couldn't connect to server",
      detail: "Failed to connect to 192.0.2.10 port 80 after 0 ms: Network is unreachable")
    for (locale, reason) in [
      ("en", "You seem to be offline. Check your network connection."),
      ("zh-Hans", "您连接的网络不正常，请检查您的网络连接"),
    ] {
      let stub = StubTransport([networkFailure(.cannotConnect, underlying: curl)])
      let monitor = FakePathMonitor(.unsatisfied(reason: .noUsableInterface))
      let client = stubClient(
        stub, middleware: [ReachabilityMiddleware(monitor: monitor)], locale: locale)
      let error = try #require(
        await thrownError { _ = try await client.send(Request(method: .get, url: addressBase)) })
      #expect(error.kind == .notReachable)
      #expect(error.reason == reason)
      #expect(error.attempts == 1)
      let original = try #require(error.underlying as? CourierError)
      #expect(original.kind == .cannotConnect)
      #expect(original.underlying as? CurlError == curl)
      #expect(
        error.debugDescription.contains(
          "the attempt failed with cannotConnect while the path is unsatisfied"))
      #expect(error.debugDescription.contains("Network is unreachable"), "the original's words")
      #expect(monitor.routeLookups == [try #require(Self.address)])
    }
  }

  @Test("inform never touches a success, an HTTP status, a business error or a stubbed failure")
  func informLeavesTheRest() async throws {
    let monitor = FakePathMonitor(.unsatisfied(reason: .noUsableInterface))
    let middleware: [any Middleware] = [ReachabilityMiddleware(monitor: monitor)]

    let status = StubTransport([.status(503)])
    let statusError = await thrownError {
      try await stubClient(status, middleware: middleware).send(Endpoint<Void>(.get, "ping"))
    }
    #expect(statusError?.kind == .httpStatus)

    let business = Client(
      baseURL: testBase, transport: StubTransport([.json(#"{"code":7,"msg":"no"}"#)]),
      middleware: middleware, pipeline: .envelope(.codeZero))
    let businessError = await thrownError { try await business.send(Endpoint<Void>(.get, "ping")) }
    #expect(businessError?.kind == .business)

    // A stub's and a cassette's failures are never the network's, even one built the way a
    // wire transport reports it (a URLError underneath).
    let stubbed = StubTransport([
      .failure(.cannotConnect), .failure(CancellationError()),
      .failure(
        URLErrorMapping.courierError(
          for: URLError(.cannotConnectToHost), request: Request(url: testBase))),
      networkFailure(.cannotFindHost),
    ])
    let stubbedClient = Client(baseURL: testBase, transport: stubbed, middleware: middleware)
    let stubbedError = await thrownError {
      try await stubbedClient.send(Endpoint<Void>(.get, "ping"))
    }
    #expect(stubbedError?.kind == .cannotConnect)
    let cancelled = await thrownError { try await stubbedClient.send(Endpoint<Void>(.get, "ping")) }
    #expect(cancelled?.kind == .cancelled)
    for kind in [CourierError.Kind.cannotConnect, .cannotFindHost] {
      let mapped = await thrownError { try await stubbedClient.send(Endpoint<Void>(.get, "ping")) }
      #expect(mapped?.kind == kind)
      #expect(mapped?.stage == "stub")
    }

    let cassette = Cassette(interactions: [
      Cassette.Interaction(
        request: Cassette.RecordedMessage(method: "GET", url: testBase.absoluteString + "ping"),
        error: Cassette.RecordedError(kind: "cannotConnect", message: "refused"))
    ])
    let replay = Client(
      baseURL: testBase, transport: ReplayTransport(cassette: cassette), middleware: middleware)
    let replayed = await thrownError { try await replay.send(Endpoint<Void>(.get, "ping")) }
    #expect(replayed?.kind == .cannotConnect)
    #expect(monitor.subscriberCount == 0)
  }

  @Test("inform: a satisfied path, loopback or a routable address leaves a failure as it is")
  func informNeedsOfflineAndNoRoute() async throws {
    let address = try #require(Self.address)
    func outcome(
      _ status: PathStatus, _ url: URL, route: RouteAnswer = .unknown
    ) async -> CourierError? {
      let monitor = FakePathMonitor(status)
      monitor.routes[address] = route
      let stub = StubTransport([networkFailure(.cannotConnect)])
      let client = stubClient(stub, middleware: [ReachabilityMiddleware(monitor: monitor)])
      return await thrownError { _ = try await client.send(Request(method: .get, url: url)) }
    }
    let offline = PathStatus.unsatisfied(reason: .noDefaultRoute)
    let loopback = try #require(URL(string: "http://127.0.0.1:9/x"))
    #expect(await outcome(.satisfied(interfaces: [.wired]), addressBase)?.kind == .cannotConnect)
    #expect(await outcome(offline, loopback)?.kind == .cannotConnect)
    #expect(await outcome(offline, addressBase, route: .routable)?.kind == .cannotConnect)
    let unroutable = await outcome(offline, addressBase, route: .unroutable)
    #expect(unroutable?.kind == .notReachable)
    #expect(unroutable?.debugDescription.contains("there is no route to 192.0.2.10") == true)
    #expect(await outcome(offline, addressBase, route: .unknown)?.kind == .notReachable)
    let noInterface = PathStatus.unsatisfied(reason: .noUsableInterface)
    #expect(await outcome(noInterface, testBase)?.kind == .notReachable, "a host name")
    #expect(
      await outcome(offline, testBase)?.kind == .cannotConnect,
      "a host name without a default route: it may be on the networks the interfaces reach")
  }

  @Test(
    "the preset without a default route: a host name's failures are its own, reported as they are and retried"
  )
  func presetHostNameWithoutDefaultRoute() async throws {
    // A server on a service network without a default route calls another service by name
    // (the network's DNS, /etc/hosts).
    let monitor = FakePathMonitor(.unsatisfied(reason: .noDefaultRoute))
    func client(_ stub: StubTransport) -> Client {
      Client.standard(baseURL: Self.serviceBase, transport: NetworkStack(stub)) {
        $0.reachability = ReachabilityMiddleware(monitor: monitor)
        $0.retry = RetryMiddleware(policy: RetryPolicy(baseDelay: .zero), budget: nil)
        // No real-clock limit on stub answers: a loaded full run has stretched one past 30 s.
        $0.timeout = nil
      }
    }
    // The service restarting: refused once, then up.
    let restarting = StubTransport([networkFailure(.cannotConnect), .json("{}")])
    try await client(restarting).send(Endpoint<Void>(.get, "ping"))
    #expect(restarting.requests.count == 2, "refused once, retried")
    // A name that does not exist, answered by the network's DNS.
    let missing = StubTransport(Array(repeating: networkFailure(.cannotFindHost), count: 3))
    let notFound = await thrownError {
      try await client(missing).send(Endpoint<Void>(.get, "ping"))
    }
    #expect(notFound?.kind == .cannotFindHost)
    // No usable interface at all: the same failure is the network's absence.
    monitor.status = .unsatisfied(reason: .noUsableInterface)
    let offline = StubTransport(Array(repeating: networkFailure(.cannotFindHost), count: 3))
    let error = await thrownError { try await client(offline).send(Endpoint<Void>(.get, "ping")) }
    #expect(error?.kind == .notReachable)
    #expect(offline.requests.count == 1)
  }

  @Test(
    "this machine in the spellings libcurl connects to: sent under fail fast, a refusal not reported offline",
    arguments: [
      "0.0.0.0", "127.1", "0x7f.1", "2130706433", "[::]", "[0:0:0:0:0:0:0:1]",
      "[::ffff:127.0.0.1]",
    ])
  func thisMachineInEverySpelling(host: String) async throws {
    let v6 = host == "[::]" || host == "[0:0:0:0:0:0:0:1]"
    // Skipped where the machine has no IPv6 loopback.
    guard let server = try? MockServer(host: v6 ? "::1" : "127.0.0.1") else { return }
    defer { server.shutdown() }
    server.setDispatcher { _ in .json("{}") }
    let refusing = try RefusingPort(host: v6 ? "::1" : "127.0.0.1")
    let transport = CurlTransport()
    defer { transport.shutdown() }
    // Offline, and no route to anything: what the kernel answers for 0.0.0.0 and `::`.
    let monitor = FakePathMonitor(.unsatisfied(reason: .noUsableInterface))
    monitor.unlistedRoute = .unroutable
    let up = try #require(URL(string: "http://\(host):\(server.baseURL.port ?? 0)/"))
    let failFast = Client(
      baseURL: up, transport: transport,
      middleware: [ReachabilityMiddleware(monitor: monitor, whenOffline: .failFast)])
    let response = try await failFast.send(Request(method: .get, url: up))
    #expect(response.status == 200, "libcurl reached the server on loopback")
    let down = try #require(URL(string: "http://\(host):\(refusing.port)/"))
    let inform = Client(
      baseURL: down, transport: transport, middleware: [ReachabilityMiddleware(monitor: monitor)])
    let error = await thrownError { _ = try await inform.send(Request(method: .get, url: down)) }
    #expect(error?.kind == .cannotConnect, "a server down on this machine, not the network")
    #expect(monitor.routeLookups.isEmpty, "this machine needs no route lookup")
  }

  @Test("inform inside retry: a failure reported offline is not retried; online it is")
  func informStopsRetrying() async throws {
    for (status, attempts) in [
      (PathStatus.unsatisfied(reason: .noUsableInterface), 1),
      (.satisfied(interfaces: [.wired]), 3),
    ] {
      let stub = StubTransport(Array(repeating: networkFailure(.cannotConnect), count: 3))
      let client = stubClient(
        stub,
        middleware: [
          RetryMiddleware(policy: RetryPolicy(baseDelay: .zero), budget: nil),
          ReachabilityMiddleware(monitor: FakePathMonitor(status)),
        ])
      let error = await thrownError { try await client.send(Endpoint<Void>(.get, "ping")) }
      #expect(error?.kind == (attempts == 1 ? .notReachable : .cannotConnect))
      #expect(stub.requests.count == attempts)
    }
  }

  // MARK: - Fail fast

  @Test(
    "fail fast refuses only an address the system has no route to (or cannot tell)",
    arguments: [(RouteAnswer.unroutable, false), (.unknown, false), (.routable, true)])
  func failFastPerDestination(route: RouteAnswer, sent: Bool) async throws {
    let address = try #require(Self.address)
    let stub = StubTransport([.json("{}")])
    let monitor = FakePathMonitor(.unsatisfied(reason: .noDefaultRoute))
    monitor.routes[address] = route
    let client = stubClient(
      stub, middleware: [ReachabilityMiddleware(monitor: monitor, whenOffline: .failFast)])
    let error = await thrownError {
      _ = try await client.send(Request(method: .get, url: addressBase))
    }
    #expect(error?.kind == (sent ? nil : .notReachable))
    #expect(stub.requests.count == (sent ? 1 : 0))
    #expect(monitor.routeLookups == [address])
    if route == .unroutable {
      #expect(error?.debugDescription.contains("there is no route to 192.0.2.10") == true)
    }
  }

  @Test("fail fast looks an IPv6 literal up without its brackets")
  func failFastIPv6() async throws {
    let address = try #require(RouteDestination("2001:db8::7"))
    let stub = StubTransport([.json("{}")])
    let monitor = FakePathMonitor(.unsatisfied(reason: .noDefaultRoute))
    monitor.routes[address] = .unroutable
    let client = stubClient(
      stub, middleware: [ReachabilityMiddleware(monitor: monitor, whenOffline: .failFast)])
    let url = try #require(URL(string: "http://[2001:db8::7]:8080/x"))
    let error = await thrownError { _ = try await client.send(Request(method: .get, url: url)) }
    #expect(error?.kind == .notReachable)
    #expect(monitor.routeLookups == [address])
    #expect(stub.requests.isEmpty)
  }

  @Test("fail fast sends a host name; its failure offline is reported as notReachable")
  func failFastHostName() async throws {
    let stub = StubTransport([.json("{}"), networkFailure(.cannotFindHost)])
    let monitor = FakePathMonitor(.unsatisfied(reason: .noUsableInterface))
    monitor.unlistedRoute = .unroutable
    let client = stubClient(
      stub, middleware: [ReachabilityMiddleware(monitor: monitor, whenOffline: .failFast)])
    try await client.send(Endpoint<Void>(.get, "ping"))
    let error = await thrownError { try await client.send(Endpoint<Void>(.get, "ping")) }
    #expect(error?.kind == .notReachable)
    #expect((error?.underlying as? CourierError)?.kind == .cannotFindHost)
    #expect(stub.requests.count == 2, "both sent")
    #expect(monitor.routeLookups.isEmpty, "a name has no address to look up")
  }

  // MARK: - Wait

  @Test("wait sends to a routable address at once, without waiting")
  func waitRoutable() async throws {
    let stub = StubTransport([.json("{}")])
    let monitor = FakePathMonitor(.unsatisfied(reason: .noDefaultRoute))
    monitor.routes[try #require(Self.address)] = .routable
    let client = stubClient(
      stub,
      middleware: [
        ReachabilityMiddleware(
          monitor: monitor, whenOffline: .wait(upTo: .seconds(10)), clock: TestClock())
      ])
    let response = try await client.send(Request(method: .get, url: addressBase))
    #expect(response.status == 200)
    #expect(monitor.subscriberCount == 0, "no wait")
  }

  @Test(
    "wait: the address's route coming back ends the wait, though the status stays unsatisfied")
  func waitEndsWhenTheRouteReturns() async throws {
    let address = try #require(Self.address)
    let clock = TestClock()
    let stub = StubTransport([.json("{}")])
    let monitor = FakePathMonitor(.unsatisfied(reason: .noUsableInterface))
    monitor.routes[address] = .unroutable
    let client = stubClient(
      stub,
      middleware: [
        ReachabilityMiddleware(
          monitor: monitor, whenOffline: .wait(upTo: .seconds(10)), clock: clock)
      ])
    let task = Task { try await client.send(Request(method: .get, url: addressBase)) }
    await monitor.waitForSubscribers(1)
    await clock.waitForSleepers(1)
    #expect(stub.requests.isEmpty, "nothing is sent while there is no route")
    // The link is back on a network without a default route: a route to the address, and a
    // status that changes but stays unsatisfied.
    monitor.routes[address] = .routable
    monitor.status = .unsatisfied(reason: .noDefaultRoute)
    let response = try await task.linkedValue
    #expect(response.status == 200)
    #expect(stub.requests.count == 1)
    #expect(monitor.subscriberCount == 0, "the wait's subscription ends with it")
    #expect(clock.sleeperCount == 0, "the wait's timer ends with it")
  }

  @Test("wait: a host name that fails offline waits for the path, then is tried once more")
  func waitHostNameThenRetry() async throws {
    let clock = TestClock()
    let stub = StubTransport([networkFailure(.cannotConnect), .json("{}")])
    let monitor = FakePathMonitor(.unsatisfied(reason: .noUsableInterface))
    let client = stubClient(
      stub,
      middleware: [
        ReachabilityMiddleware(
          monitor: monitor, whenOffline: .wait(upTo: .seconds(10)), clock: clock)
      ])
    let task = Task { try await client.send(Endpoint<Void>(.get, "ping")) }
    await monitor.waitForSubscribers(1)
    #expect(stub.requests.count == 1, "sent once, failed, now waiting")
    monitor.status = .satisfied(interfaces: [.wifi])
    try await task.linkedValue
    #expect(stub.requests.count == 2)
    #expect(monitor.subscriberCount == 0)
  }

  @Test(
    "wait: a host name's wait ends when the status says only that there is no default route")
  func waitHostNameUntilInterfacesReturn() async throws {
    let stub = StubTransport([networkFailure(.cannotConnect), .json("{}")])
    let monitor = FakePathMonitor(.unsatisfied(reason: .noUsableInterface))
    let client = stubClient(
      stub,
      middleware: [
        ReachabilityMiddleware(
          monitor: monitor, whenOffline: .wait(upTo: .seconds(10)), clock: TestClock())
      ])
    let task = Task { try await client.send(Endpoint<Void>(.get, "ping")) }
    await monitor.waitForSubscribers(1)
    #expect(stub.requests.count == 1, "sent once, failed, now waiting")
    // The link is back on a network without a default route.
    monitor.status = .unsatisfied(reason: .noDefaultRoute)
    try await task.linkedValue
    #expect(stub.requests.count == 2)
    #expect(monitor.subscriberCount == 0)
  }

  @Test(
    "wait: a host name that fails offline, and the path stays down → notReachable, failure underneath"
  )
  func waitHostNameBound() async throws {
    let clock = TestClock()
    let stub = StubTransport([networkFailure(.cannotConnect), .json("{}")])
    let monitor = FakePathMonitor(.unsatisfied(reason: .noUsableInterface))
    let client = stubClient(
      stub,
      middleware: [
        ReachabilityMiddleware(
          monitor: monitor, whenOffline: .wait(upTo: .seconds(10)), clock: clock)
      ])
    let task = Task { try await client.send(Endpoint<Void>(.get, "ping")) }
    await monitor.waitForSubscribers(1)
    await clock.waitForSleepers(1)
    clock.advance(by: .seconds(10))
    let error = await thrownError { try await task.linkedValue }
    #expect(error?.kind == .notReachable)
    #expect((error?.underlying as? CourierError)?.kind == .cannotConnect)
    #expect(error?.debugDescription.contains("the wait of 10 s ran out") == true)
    #expect(stub.requests.count == 1)
  }

  @Test(
    "wait: a connection lost offline, which may have carried the request, is reported, not resent")
  func waitConnectionLost() async {
    let stub = StubTransport([networkFailure(.connectionLost), .json("{}")])
    let monitor = FakePathMonitor(.unsatisfied(reason: .noUsableInterface))
    let client = stubClient(
      stub,
      middleware: [
        ReachabilityMiddleware(
          monitor: monitor, whenOffline: .wait(upTo: .seconds(10)), clock: TestClock())
      ])
    let error = await thrownError {
      _ = try await client.send(Request(method: .post, url: testBase, body: .data(Data("x".utf8))))
    }
    #expect(error?.kind == .notReachable)
    #expect((error?.underlying as? CourierError)?.kind == .connectionLost)
    #expect(stub.requests.count == 1)
    #expect(monitor.subscriberCount == 0, "no wait")
  }
}
