import CourierReachability
import CourierTesting
import Testing

@Suite("Route destinations and scripted route lookups")
struct RouteDestinationTests {
  @Test(
    "route destinations: IP literals, brackets stripped, IPv4-mapped taken as IPv4",
    arguments: [
      ("10.0.0.7", "10.0.0.7", RouteDestination.Family.ipv4),
      ("[2001:db8::7]", "2001:db8::7", .ipv6),
      ("2001:DB8:0:0::7", "2001:db8::7", .ipv6),
      ("::ffff:10.0.0.7", "10.0.0.7", .ipv4),
      ("[::1]", "::1", .ipv6),
      // The forms libcurl reads as IPv4 addresses and connects to without resolving.
      ("127.1", "127.0.0.1", .ipv4), ("0x7f.1", "127.0.0.1", .ipv4),
      ("0x7f.0.0.1", "127.0.0.1", .ipv4), ("2130706433", "127.0.0.1", .ipv4),
      ("017700000001", "127.0.0.1", .ipv4), ("10.1", "10.0.0.1", .ipv4),
      ("10.0.513", "10.0.2.1", .ipv4), ("0XA.0", "10.0.0.0", .ipv4), ("0", "0.0.0.0", .ipv4),
    ] as [(String, String, RouteDestination.Family)])
  func destinations(host: String, text: String, family: RouteDestination.Family) throws {
    let destination = try #require(RouteDestination(host))
    #expect(destination.description == text)
    #expect(destination.family == family)
    #expect(destination.bytes.count == (family == .ipv4 ? 4 : 16))
  }

  @Test(
    "route destinations: names, zoned addresses and numbers libcurl does not read as IPv4 give nil",
    arguments: [
      "api.example.com", "10.0.0.256", "1.2.3.4.5", "fe80::1%eth0", "fe80::1%25eth0", "", "[]",
      "[10.0.0.7", "localhost", "08.1", "0x", "1.0x", "+1.2.3.4", "1.2.3.-4", "1.2.3.4.",
      "1..2", "4294967296", "1.16777216", "1.2.65536", "10.0.0.7 ", "0x7g.1", "１.2.3.4",
    ])
  func notDestinations(host: String) {
    #expect(RouteDestination(host) == nil)
  }

  @Test("FakePathMonitor answers route lookups from its script and records them")
  func scriptedRoutes() throws {
    let peer = try #require(RouteDestination("10.213.0.1"))
    let other = try #require(RouteDestination("2001:db8::9"))
    let monitor = FakePathMonitor()
    #expect(monitor.route(to: peer) == .unknown, "unknown unless scripted")
    monitor.routes[peer] = .routable
    monitor.unlistedRoute = .unroutable
    #expect(monitor.route(to: peer) == .routable)
    #expect(monitor.route(to: other) == .unroutable)
    #expect(monitor.routeLookups == [peer, peer, other])
  }

  @Test("a monitor of your own that does not look routes up answers unknown")
  func defaultAnswer() throws {
    struct Fixed: PathMonitor {
      var status: PathStatus { .unsatisfied(reason: .unknown) }
      func updates() -> AsyncStream<PathStatus> { AsyncStream { $0.finish() } }
    }
    #expect(Fixed().route(to: try #require(RouteDestination("192.0.2.1"))) == .unknown)
  }
}
