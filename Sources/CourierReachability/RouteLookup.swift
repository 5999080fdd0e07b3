#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// An IP address that a request is sent to, for asking a ``PathMonitor`` whether the system
/// has a route to it (``PathMonitor/route(to:)``).
///
/// Made from a URL's host when that host is an IP literal: `10.0.0.7`, `2001:db8::7` or
/// `[2001:db8::7]`. A host name, an IPv6 address with a zone (`fe80::1%eth0`), or a short
/// IPv4 form such as `10.1` gives `nil`: its address is not known before it is resolved, so
/// it is never refused on a route lookup. An IPv4-mapped IPv6 address (`::ffff:10.0.0.7`) is
/// taken as the IPv4 address it carries, which is the route a connection to it uses.
///
/// ```swift
/// let destination = RouteDestination("[2001:db8::7]")
/// print(destination.map { "\($0)" } ?? "a host name")  // "2001:db8::7"
/// print(RouteDestination("api.example.com") == nil)  // "true"
/// ```
public struct RouteDestination: Hashable, Sendable, CustomStringConvertible {
  /// The address family.
  public enum Family: Hashable, Sendable {
    /// IPv4: 4 bytes.
    case ipv4
    /// IPv6: 16 bytes.
    case ipv6
  }

  /// IPv4 or IPv6.
  public let family: Family
  /// The address in network byte order: 4 bytes for IPv4, 16 for IPv6.
  public let bytes: [UInt8]

  /// The address `host` spells, brackets allowed around an IPv6 literal; `nil` when `host` is
  /// not an IP literal (a name, an address with a zone, a short IPv4 form).
  public init?(_ host: String) {
    var text = Substring(host)
    if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
    guard !text.isEmpty, text.utf8.count <= 45, !text.contains("%") else { return nil }
    #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
      var v4 = in_addr()
      if inet_pton(AF_INET, String(text), &v4) == 1 {
        family = .ipv4
        bytes = withUnsafeBytes(of: &v4) { Array($0) }
        return
      }
      var v6 = in6_addr()
      guard inet_pton(AF_INET6, String(text), &v6) == 1 else { return nil }
      let all = withUnsafeBytes(of: &v6) { Array($0) }
      if all[0..<10].allSatisfy({ $0 == 0 }), all[10] == 0xff, all[11] == 0xff {
        family = .ipv4
        bytes = Array(all[12..<16])
      } else {
        family = .ipv6
        bytes = all
      }
    #else
      return nil
    #endif
  }

  /// The address as text: `10.0.0.7`, `2001:db8::7`.
  public var description: String {
    switch family {
    case .ipv4:
      return bytes.map(String.init).joined(separator: ".")
    case .ipv6:
      #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        var address = in6_addr()
        withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: bytes.prefix(16)) }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else {
          return "?"
        }
        return String(
          decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      #else
        return bytes.map { String($0, radix: 16) }.joined(separator: ":")
      #endif
    }
  }
}

/// What a ``PathMonitor`` knows of the route to a ``RouteDestination``.
public enum RouteAnswer: Hashable, Sendable, CustomStringConvertible {
  /// The system has a route to the destination, through a link that has its carrier: a
  /// connection attempt will leave the machine (whether the host answers is another matter).
  case routable
  /// The system has no usable route: none matches, one matches that is `unreachable`,
  /// `prohibit` or `blackhole`, or its link is down or has lost its carrier. A connection
  /// attempt fails at once or never completes.
  case unroutable
  /// The monitor cannot tell: it does not look routes up (`NWPathMonitor` has no such
  /// question), or the lookup failed.
  case unknown

  /// `"routable"`, `"unroutable"` or `"unknown"`.
  public var description: String {
    switch self {
    case .routable: "routable"
    case .unroutable: "unroutable"
    case .unknown: "unknown"
    }
  }
}
