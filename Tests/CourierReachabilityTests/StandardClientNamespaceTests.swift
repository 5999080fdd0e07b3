#if os(Linux)
  import Courier
  import CourierTesting
  import Foundation
  import Testing

  /// `Client.standard` as a new user meets it on a server or in an offline sandbox, with the
  /// preset's own reachability mode, its monitor watching a network namespace this test makes,
  /// and a `CurlTransport` whose sockets live in that namespace.
  @Suite(
    "Client.standard inside network namespaces", .serialized, .timeLimit(.minutes(5)),
    .enabled(
      if: canMakeNamespaces,
      "needs root, iproute2's ip and permission to make network namespaces (ip netns add)")
  )
  struct StandardClientNamespaceTests {
    /// The preset's reachability, with `monitor` in place of the process's shared one.
    static func presetReachability(
      monitor: any PathMonitor
    ) throws -> ReachabilityMiddleware {
      let preset = try #require(
        StandardMiddleware().reachability, "the preset has reachability where a monitor starts")
      return ReachabilityMiddleware(
        monitor: monitor, whenOffline: preset.whenOffline, probe: preset.probe)
    }

    /// A `CurlTransport` made on a thread inside `namespace`, that starts no transfer on a
    /// caller's thread: every socket it opens (and libcurl's resolver threads) is there.
    static func transport(in namespace: String) throws -> CurlTransport {
      try inNamespace(namespace) {
        var configuration = CurlTransport.Configuration.standard
        configuration.startsTransfersOnCallingThread = false
        return CurlTransport(configuration: configuration)
      }
    }

    @Test("a subnet without a default route: the preset reaches the peer; fail fast sends to it")
    func subnetWithoutDefaultRoute() async throws {
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
      let server = try inNamespace(network.outer) { try MockServer(host: TestNetwork.peer) }
      defer { server.shutdown() }
      server.setDispatcher { _ in .json(#"{"temperature":21}"#) }
      let transport = try Self.transport(in: network.inner)
      defer { transport.shutdown() }

      let preset = try Self.presetReachability(monitor: monitor)
      let client = Client.standard(baseURL: server.baseURL, transport: transport) {
        $0.reachability = preset
      }
      #expect(client.chainDescription.contains("ReachabilityMiddleware(inform; probe: off)"))
      let response = try await client.send(Request(method: .get, url: server.url("/weather")))
      #expect(response.status == 200)
      #expect(String(decoding: response.body, as: UTF8.self) == #"{"temperature":21}"#)

      // Fail fast, asked for: the kernel has a route to the peer, so it is sent.
      let failFast = Client.standard(baseURL: server.baseURL, transport: transport) {
        $0.reachability = ReachabilityMiddleware(monitor: monitor, whenOffline: .failFast)
      }
      let again = try await failFast.send(Request(method: .get, url: server.url("/weather")))
      #expect(again.status == 200)
      #expect(server.requestCount == 2)
    }

    @Test("no route at all: the preset over StubTransport returns the stubbed value")
    func offlineSandboxWithStub() async throws {
      let namespace = try EmptyNamespace()
      defer { namespace.destroy() }
      let monitor = try NetlinkPathMonitor(networkNamespace: namespace.name)
      defer { monitor.stop() }
      #expect(!monitor.status.isSatisfied)
      for monitor in [monitor, FakePathMonitor(.unsatisfied(reason: .noUsableInterface))]
        as [any PathMonitor]
      {
        let stub = StubTransport()
        stub.on(.get, "user/{id}", .json(#"{"name":"Li"}"#))
        let preset = try Self.presetReachability(monitor: monitor)
        let client = Client.standard(
          baseURL: URL(string: "https://api.example.com/")!, transport: stub
        ) { $0.reachability = preset }
        let user = try await client.send(Endpoint<User>(.get, "user/7"))
        #expect(user.name == "Li")
        #expect(stub.requests.count == 1)
      }
    }

    @Test(
      "no route at all: the preset over CurlTransport to a host name fails within a second with notReachable"
    )
    func offlineHostName() async throws {
      let namespace = try EmptyNamespace()
      defer { namespace.destroy() }
      let monitor = try NetlinkPathMonitor(networkNamespace: namespace.name)
      defer { monitor.stop() }
      let transport = try Self.transport(in: namespace.name)
      defer { transport.shutdown() }
      let preset = try Self.presetReachability(monitor: monitor)
      for (locale, reason) in [
        ("en", "You seem to be offline. Check your network connection."),
        ("zh-Hans", "您连接的网络不正常，请检查您的网络连接"),
      ] {
        let client = Client.standard(
          baseURL: URL(string: "http://api.courier.test/")!, transport: transport, locale: locale
        ) { $0.reachability = preset }
        let clock = ContinuousClock()
        let start = clock.now
        let error = await thrownError { try await client.send(Endpoint<Void>(.get, "ping")) }
        let elapsed = start.duration(to: clock.now)
        print(
          "offline, a host name over CurlTransport failed after \(elapsed): \(error.map { $0.debugDescription } ?? "no error")"
        )
        #expect(error?.kind == .notReachable)
        #expect(error?.reason == reason)
        #expect(elapsed < .seconds(1), "took \(elapsed)")
        let original = try #require(error?.underlying as? CourierError)
        #expect([.cannotFindHost, .cannotConnect].contains(original.kind))
        #expect(original.underlying is CurlError, "libcurl's own error under the original")
        #expect(error?.attempts == 1, "reported offline, not retried")
      }
    }
  }

  private struct User: Decodable, Sendable {
    let name: String
  }
#endif
