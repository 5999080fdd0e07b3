#if os(Linux)
  import CourierCore
  import CourierReachability
  import CourierTesting
  import Foundation
  import Glibc
  import Testing

  /// Against the kernel for real: a monitor inside a network namespace this test makes, with a
  /// veth pair whose ends both live in namespaces this test makes (never the machine's own).
  @Suite(
    "NetlinkPathMonitor against the kernel", .serialized, .timeLimit(.minutes(5)),
    .enabled(
      if: canMakeNamespaces,
      "needs root, iproute2's ip and permission to make network namespaces (ip netns add)")
  )
  struct NetlinkPathMonitorTests {
    @Test(
      "link down (carrier lost) → unsatisfied, the peer has no route, and fail fast refuses it in < 100 ms"
    )
    func linkDownFailsFast() async throws {
      let network = try TestNetwork()
      defer { network.destroy() }
      let monitor = try NetlinkPathMonitor(networkNamespace: network.inner)
      defer { monitor.stop() }
      #expect(monitor.status == .satisfied(interfaces: [.wired]), "veth is Ethernet: wired")
      let peer = try #require(RouteDestination(TestNetwork.peer))
      #expect(monitor.route(to: peer) == .routable)

      var changes = monitor.updates().makeAsyncIterator()
      #expect(await changes.next() == .satisfied(interfaces: [.wired]))
      let clock = ContinuousClock()
      let linkDown = clock.now
      try network.setPeer(up: false)
      let next = await changes.next()
      print(
        "the kernel's event reached the monitor \(linkDown.duration(to: clock.now)) after ip link set down"
      )
      #expect(next == .unsatisfied(reason: .noUsableInterface))
      #expect(monitor.status == .unsatisfied(reason: .noUsableInterface))
      // The subnet route stays in the table, marked linkdown: no usable route.
      #expect(monitor.route(to: peer) == .unroutable)

      let stub = StubTransport([.json("{}")])
      let client = stubClient(
        stub, middleware: [ReachabilityMiddleware(monitor: monitor, whenOffline: .failFast)],
        base: try #require(URL(string: "http://\(TestNetwork.peer):8080/")))
      let start = clock.now
      let error = await thrownError { try await client.send(Endpoint<Void>(.get, "ping")) }
      let elapsed = start.duration(to: clock.now)
      print("fail fast with the link down took \(elapsed)")
      #expect(error?.kind == .notReachable)
      #expect(error?.debugDescription.contains("no route to \(TestNetwork.peer)") == true)
      #expect(elapsed < .milliseconds(100), "took \(elapsed)")
      #expect(stub.requests.isEmpty)

      // A host name is never refused on the status: sent (and a stub answers it).
      let named = stubClient(
        stub, middleware: [ReachabilityMiddleware(monitor: monitor, whenOffline: .failFast)])
      try await named.send(Endpoint<Void>(.get, "ping"))
      #expect(stub.requests.count == 1)
    }

    @Test("waiting on: the link comes up 1 s later and the request succeeds")
    func waitForLinkUp() async throws {
      let network = try TestNetwork()
      defer { network.destroy() }
      let monitor = try NetlinkPathMonitor(networkNamespace: network.inner)
      defer { monitor.stop() }
      try network.setPeer(up: false)
      // The kernel reports the carrier change asynchronously (linkwatch): wait for the event.
      for await status in monitor.updates() where !status.isSatisfied { break }
      #expect(monitor.status == .unsatisfied(reason: .noUsableInterface))

      let observed = ObservedMonitor(monitor)
      let stub = StubTransport([.json("{}")])
      // To the peer's address, which has no usable route while the link is down (a host name
      // would be sent at once).
      let client = stubClient(
        stub,
        middleware: [
          ReachabilityMiddleware(monitor: observed, whenOffline: .wait(upTo: .seconds(10)))
        ], base: try #require(URL(string: "http://\(TestNetwork.peer):8080/")))
      let clock = ContinuousClock()
      let start = clock.now
      let task = Task { try await client.send(Endpoint<Void>(.get, "ping")) }
      for await _ in observed.subscriptions { break }  // the request is waiting now
      // The scenario itself, not synchronisation: the network comes back a second later.
      try await Task.sleep(for: .seconds(1))
      #expect(stub.requests.isEmpty, "nothing sent while the link is down")
      try network.setPeer(up: true)
      try await task.linkedValue
      let elapsed = start.duration(to: clock.now)
      print("wait for the link, up after 1 s: request done after \(elapsed)")
      #expect(stub.requests.count == 1)
      #expect(elapsed >= .seconds(1))
      // The kernel's linkwatch reports a veth carrier change up to about a second later.
      #expect(elapsed < .seconds(5), "took \(elapsed)")
      #expect(monitor.status == .satisfied(interfaces: [.wired]))
    }

    @Test(
      "waiting on a network without a default route: the link comes back and the request goes"
    )
    func waitForSubnetLinkUp() async throws {
      let network = try TestNetwork(defaultRoute: false)
      defer { network.destroy() }
      let monitor = try NetlinkPathMonitor(networkNamespace: network.inner)
      defer { monitor.stop() }
      try network.setPeer(up: false)
      for await status in monitor.updates()
      where status == .unsatisfied(reason: .noUsableInterface) { break }
      let peer = try #require(RouteDestination(TestNetwork.peer))
      #expect(monitor.route(to: peer) == .unroutable)

      let observed = ObservedMonitor(monitor)
      let stub = StubTransport([.json("{}")])
      let client = stubClient(
        stub,
        middleware: [
          ReachabilityMiddleware(monitor: observed, whenOffline: .wait(upTo: .seconds(20)))
        ], base: try #require(URL(string: "http://\(TestNetwork.peer):8080/")))
      let clock = ContinuousClock()
      let start = clock.now
      let task = Task { try await client.send(Endpoint<Void>(.get, "ping")) }
      for await _ in observed.subscriptions { break }  // the request is waiting now
      #expect(stub.requests.isEmpty, "nothing sent while the link is down")
      try network.setPeer(up: true)
      try await task.linkedValue
      let elapsed = start.duration(to: clock.now)
      print("wait for the link without a default route: request done after \(elapsed)")
      #expect(stub.requests.count == 1)
      // The kernel's linkwatch reports a veth carrier change up to about a second later.
      #expect(elapsed < .seconds(5), "took \(elapsed)")
      #expect(monitor.status == .unsatisfied(reason: .noDefaultRoute), "still no default route")
    }

    @Test("no default route → unsatisfied; the route back → satisfied")
    func defaultRoute() async throws {
      let network = try TestNetwork()
      defer { network.destroy() }
      let monitor = try NetlinkPathMonitor(networkNamespace: network.inner)
      defer { monitor.stop() }
      var changes = monitor.updates().makeAsyncIterator()
      #expect(await changes.next() == .satisfied(interfaces: [.wired]))
      try TestNetwork.ip("-n", network.inner, "route", "del", "default")
      #expect(await changes.next() == .unsatisfied(reason: .noDefaultRoute))
      try network.addDefaultRoute()
      #expect(await changes.next() == .satisfied(interfaces: [.wired]))
    }

    @Test(
      "route lookups answer for the monitor's namespace: subnet, local, missing and linkdown routes"
    )
    func routeLookups() async throws {
      let network = try TestNetwork(defaultRoute: false)
      defer { network.destroy() }
      let monitor = try NetlinkPathMonitor(networkNamespace: network.inner)
      defer { monitor.stop() }
      // The kernel reports vethA's carrier asynchronously (linkwatch, up to about a second
      // after the pair is made): until then the status is noUsableInterface and the subnet
      // route is marked linkdown. Wait for the event.
      for await status in monitor.updates() where status == .unsatisfied(reason: .noDefaultRoute) {
        break
      }
      try TestNetwork.ip("-n", network.inner, "route", "add", "blackhole", "10.60.0.0/24")
      try TestNetwork.ip("-n", network.inner, "route", "add", "prohibit", "10.61.0.0/24")
      try TestNetwork.ip("-n", network.inner, "route", "add", "unreachable", "10.62.0.0/24")
      try TestNetwork.ip("-n", network.inner, "link", "set", "lo", "up")
      let expected: [(String, RouteAnswer)] = [
        // A connection to the unspecified address goes to loopback; the kernel's fibmatch
        // lookup for it answers EHOSTUNREACH.
        ("0.0.0.0", .routable), ("::", .routable),
        (TestNetwork.peer, .routable),  // the subnet route
        ("10.77.0.1", .routable),  // the namespace's own address: the local table
        // No default route here, while the machine's own namespace has one: answered from
        // the monitor's namespace, these would be routable.
        ("192.0.2.1", .unroutable), ("2001:db8::1", .unroutable),
        ("10.60.0.1", .unroutable), ("10.61.0.1", .unroutable), ("10.62.0.1", .unroutable),
        ("::ffff:\(TestNetwork.peer)", .routable),
      ]
      for (address, answer) in expected {
        let destination = try #require(RouteDestination(address))
        #expect(monitor.route(to: destination) == answer, "\(address)")
      }
      // The carrier lost: the subnet route stays in the table, marked linkdown, unusable.
      var changes = monitor.updates().makeAsyncIterator()
      _ = await changes.next()
      try network.setPeer(up: false)
      #expect(await changes.next() == .unsatisfied(reason: .noUsableInterface))
      #expect(monitor.route(to: try #require(RouteDestination(TestNetwork.peer))) == .unroutable)

      monitor.stop()
      #expect(monitor.route(to: try #require(RouteDestination(TestNetwork.peer))) == .unknown)
    }

    @Test("several subscribers each get the change")
    func severalSubscribers() async throws {
      let network = try TestNetwork()
      defer { network.destroy() }
      let monitor = try NetlinkPathMonitor(networkNamespace: network.inner)
      defer { monitor.stop() }
      var first = monitor.updates().makeAsyncIterator()
      var second = monitor.updates().makeAsyncIterator()
      _ = await first.next()
      _ = await second.next()
      try network.setPeer(up: false)
      #expect(await first.next() == .unsatisfied(reason: .noUsableInterface))
      #expect(await second.next() == .unsatisfied(reason: .noUsableInterface))
    }

    @Test("a namespace that does not exist fails to start, with the reason")
    func missingNamespace() {
      #expect(throws: PathMonitorError.self) {
        _ = try NetlinkPathMonitor(networkNamespace: "courier-test-does-not-exist")
      }
    }

    @Test("stop ends every stream and releases the thread")
    func stopEndsStreams() async throws {
      let network = try TestNetwork()
      defer { network.destroy() }
      let monitor = try NetlinkPathMonitor(networkNamespace: network.inner)
      let stream = monitor.updates()
      monitor.stop()
      monitor.stop()  // idempotent
      var seen = 0
      for await _ in stream { seen += 1 }
      #expect(seen == 1, "the status at subscription, then the end")
      #expect(threads(named: NetlinkPathMonitor.namespaceThreadName) == 0)
    }
  }

  @Suite("Interface kinds on Linux", .timeLimit(.minutes(5)))
  struct InterfaceKindTests {
    @Test(
      "hardware type first, then the name",
      arguments: [
        ("eth0", 1, InterfaceKind.wired),
        ("enp3s0", 1, .wired),
        ("wlan0", 1, .wifi),
        ("wlp2s0", 1, .wifi),
        ("mon0", 803, .wifi),
        ("wwan0", 1, .cellular),
        ("rmnet_data0", 519, .cellular),
        ("qmimux0", 519, .cellular),
        ("lo", 772, .loopback),
        ("tun0", 65534, .other),
        ("wg0", 65534, .other),
      ] as [(String, Int, InterfaceKind)])
    func kinds(name: String, hardwareType: Int, expected: InterfaceKind) {
      let facts = InterfaceFacts(name: name, hardwareType: UInt16(hardwareType))
      #expect(Snapshot.kind(of: facts, readsSysfs: false) == expected)
    }

    @Test("usable means up, running, not loopback and addressed")
    func usable() {
      let up = UInt32(IFF_UP)
      let running = UInt32(IFF_RUNNING)
      let loopback = UInt32(IFF_LOOPBACK)
      #expect(InterfaceFacts(name: "e", flags: up | running, hasRoutableAddress: true).isUsable)
      #expect(!InterfaceFacts(name: "e", flags: up, hasRoutableAddress: true).isUsable)
      #expect(!InterfaceFacts(name: "e", flags: running, hasRoutableAddress: true).isUsable)
      #expect(!InterfaceFacts(name: "e", flags: up | running).isUsable)
      #expect(
        !InterfaceFacts(name: "lo", flags: up | running | loopback, hasRoutableAddress: true)
          .isUsable)
    }
  }

  @Suite("NetlinkPathMonitor life cycle", .timeLimit(.minutes(5)))
  struct NetlinkPathMonitorLifeCycleTests {
    @Test(
      "start and stop leave descriptors and threads as they were",
      .enabled(if: hasProcFS, "counts descriptors and threads through /proc")
    )
    func cleanStop() async {
      // In a child process, where no concurrently running test opens or closes descriptors or
      // threads between the measurements, so the totals can be compared exactly. The child
      // gives its verdict as exit code 42 (clean) or 43 (with the difference on standard
      // error). Any other end, with nothing on standard error, means the child never reached a
      // verdict: seen once in CI (status 1 and no output at all), cause not found (a full
      // run here keeps both pool threads busy for ~25 s, so the child waits that long to be
      // reaped, but none ended like that here). Such a run is repeated, at most three times;
      // a verdict is never repeated.
      for attempt in 1...3 {
        let result = await withTaskExecutorPreference(OwnThreadExecutor.shared) {
          await #expect(
            processExitsWith: .failure, observing: [\.exitStatus, \.standardErrorContent]
          ) {
            exit(cleanStopScenario() == 0 ? 42 : 43)
          }
        }
        let report = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        print(report)
        switch result?.exitStatus {
        case .exitCode(42)?:
          #expect(report.contains("round 3: +5 descriptors while running, 0 after stop"))
          return
        case .exitCode(43)?:
          Issue.record("the monitor left descriptors or threads behind: \(report)")
          return
        default:
          let status = String(describing: result?.exitStatus)
          print("attempt \(attempt): no verdict from the child (\(status))")
        }
      }
      Issue.record("three child processes ended without a verdict")
    }
  }

  /// Whether the number of threads named `name` is `count`, allowing the kernel up to 2 s to
  /// take a joined thread out of `/proc/self/task`. `pthread_join` returns when the kernel
  /// clears the thread's id at exit, a moment before it reaps the task: in about 1 run in 10
  /// the joined thread was still listed, under its name, right after `stop()` returned. No
  /// event tells when the listing is gone, so this looks again every millisecond, bounded.
  private func threadsSettle(named name: String, at count: Int) -> Bool {
    for _ in 0..<2_000 {
      if threads(named: name) == count { return true }
      usleep(1_000)
    }
    return threads(named: name) == count
  }

  /// The body of the clean-stop test: 0 when everything was released, else 1 with the
  /// difference on standard error.
  private func cleanStopScenario() -> Int32 {
    func fail(_ message: String) -> Int32 {
      FileHandle.standardError.write(Data((message + "\n").utf8))
      return 1
    }
    let name = NetlinkPathMonitor.threadName
    do {
      // Warm up: anything the runtime makes lazily on first use is not the monitor's.
      try NetlinkPathMonitor().stop()
      let baseline = ownDescriptors()
      let baselineThreads = threads(named: name)
      for round in 1...3 {
        let monitor = try NetlinkPathMonitor()
        let running = ownDescriptors()
        let added = running.filter { baseline[$0.key] != $0.value }
        // Three netlink sockets (events, dumps, route lookups) and the stop pipe's two ends.
        guard added.count == 5, threads(named: name) == baselineThreads + 1 else {
          return fail("round \(round) running: added \(added), threads \(threads(named: name))")
        }
        monitor.stop()
        let after = ownDescriptors()
        guard after == baseline, threadsSettle(named: name, at: baselineThreads) else {
          return fail(
            "round \(round) after stop: \(after.filter { baseline[$0.key] != $0.value }), "
              + "threads \(threads(named: name))")
        }
        FileHandle.standardError.write(
          Data("round \(round): +\(added.count) descriptors while running, 0 after stop\n".utf8))
      }
      // Released without stop(): deinit stops it.
      do { _ = try NetlinkPathMonitor() }
      guard ownDescriptors() == baseline, threadsSettle(named: name, at: baselineThreads) else {
        return fail("after release without stop: \(ownDescriptors().count) descriptors")
      }
      return 0
    } catch {
      return fail("monitor failed to start: \(error)")
    }
  }
#endif
