#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension CurlTransport {
  /// How a ``CurlTransport`` turns host names into addresses: fixed answers for some names
  /// (as `curl --resolve`), which address family to use, and how long IPv6 gets before IPv4
  /// is tried too.
  ///
  /// ```swift
  /// var configuration = CurlTransport.Configuration.standard
  /// configuration.nameResolution.overrides = [
  ///   .init(host: "api.internal.test", port: 443, addresses: ["10.0.0.7", "fd00::7"])
  /// ]
  /// configuration.nameResolution.addressFamily = .ipv4
  /// let transport = CurlTransport(configuration: configuration)
  /// transport.shutdown()
  /// ```
  public struct NameResolution: Sendable, Hashable {
    /// Fixed addresses for one host name and port (`CURLOPT_RESOLVE`): requests to that
    /// host and port connect to these addresses, without asking DNS, and still send the host
    /// name (in `Host` and in TLS's server name, whose certificate must match it).
    ///
    /// A request that goes through an HTTP proxy, or a SOCKS5 one with remote DNS, names the
    /// host to the proxy, which resolves it itself: the override does not apply. The default
    /// ``CurlTransport/ProxyPolicy/environment`` uses such a proxy whenever `http_proxy`,
    /// `HTTPS_PROXY` or `ALL_PROXY` is set; list the host in `NO_PROXY` (or the proxy's
    /// ``CurlTransport/Proxy/bypass``), or choose ``CurlTransport/ProxyPolicy/direct``.
    public struct Override: Sendable, Hashable {
      /// The host name as requests' URLs spell it (compared without case).
      public var host: String
      /// The port the URLs use (443 for an `https` URL that names none, 80 for `http`).
      public var port: Int
      /// IPv4 or IPv6 addresses (`::1` or `[::1]`), tried in this order (IPv6 first, with
      /// Happy Eyeballs, when there are both).
      public var addresses: [String]

      /// Creates an override.
      public init(host: String, port: Int, addresses: [String]) {
        self.host = host
        self.port = port
        self.addresses = addresses
      }

      /// The line `CURLOPT_RESOLVE` takes (`host:port:address,[v6address]`), or why the
      /// override is refused.
      func resolveLine() -> Result<String, OverrideProblem> {
        let forbidden: Set<Character> = [":", ",", " ", "\t", "[", "]", "/", "\0"]
        // A leading `+` or `-` is libcurl's flag (an entry that times out; a removal), not
        // part of the name.
        guard !host.isEmpty, !host.contains(where: { forbidden.contains($0) }),
          host.first != "+", host.first != "-",
          !host.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else {
          return .failure(.init(message: "the host name \"\(host)\" is not a plain host name"))
        }
        guard (1...65_535).contains(port) else {
          return .failure(.init(message: "the port \(port) of \(host) is not in 1...65535"))
        }
        guard !addresses.isEmpty else {
          return .failure(.init(message: "the override for \(host):\(port) has no address"))
        }
        var written: [String] = []
        for address in addresses {
          guard let text = Self.numericAddress(address) else {
            return .failure(
              .init(message: "\"\(address)\" for \(host):\(port) is not an IPv4 or IPv6 address"))
          }
          written.append(text)
        }
        return .success("\(host):\(port):" + written.joined(separator: ","))
      }

      /// `address` as `CURLOPT_RESOLVE` takes it (an IPv6 one in brackets), or `nil` when it
      /// is not a numeric address: libcurl would skip it with no more than a log line.
      static func numericAddress(_ address: String) -> String? {
        // `inet_pton` reads up to a NUL, and libcurl would too: refused, not cut short.
        guard !address.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else { return nil }
        var bare = Substring(address)
        if bare.hasPrefix("["), bare.hasSuffix("]") { bare = bare.dropFirst().dropLast() }
        var buffer = (UInt64(0), UInt64(0))
        return withUnsafeMutableBytes(of: &buffer) { bytes in
          if !bare.contains(":"), inet_pton(AF_INET, String(bare), bytes.baseAddress) == 1 {
            return String(bare)
          }
          if inet_pton(AF_INET6, String(bare), bytes.baseAddress) == 1 { return "[\(bare)]" }
          return nil
        }
      }
    }

    /// Why an override cannot be used with `addressFamily`, or `nil`: one with no address of
    /// that family. libcurl drops such an entry from its cache and asks DNS instead ("doesn't
    /// have needed family, zapped"), which would send the request wherever DNS says.
    func familyProblem() -> OverrideProblem? {
      guard addressFamily != .any else { return nil }
      let wantsIPv6 = addressFamily == .ipv6
      for override in overrides {
        let usable = override.addresses.contains { address in
          Override.numericAddress(address).map { $0.hasPrefix("[") == wantsIPv6 } ?? false
        }
        if usable { continue }
        return OverrideProblem(
          message: "the override for \(override.host):\(override.port) has no \(addressFamily) "
            + "address, and addressFamily is \(addressFamily)")
      }
      return nil
    }

    /// Why an ``Override`` cannot be used.
    struct OverrideProblem: Error {
      let message: String
    }

    /// Which addresses a connection may use (`CURLOPT_IPRESOLVE`).
    public struct AddressFamily: Sendable, Hashable, CustomStringConvertible {
      let value: Int
      let name: String

      /// IPv4 and IPv6, whichever connects first (Happy Eyeballs); the default.
      public static let any = AddressFamily(value: 0, name: "any")
      /// IPv4 addresses only: a name with only IPv6 addresses fails with
      /// ``CourierError/Kind/cannotFindHost``.
      public static let ipv4 = AddressFamily(value: 1, name: "IPv4")
      /// IPv6 addresses only: a name with only IPv4 addresses fails with
      /// ``CourierError/Kind/cannotFindHost``.
      public static let ipv6 = AddressFamily(value: 2, name: "IPv6")

      /// `any`, `IPv4` or `IPv6`.
      public var description: String { name }
    }

    /// Fixed addresses for host names; empty (the default) for DNS and the hosts file only.
    /// An override that is not a plain host name, a port in 1...65,535 and numeric addresses,
    /// or that has no address of the ``addressFamily`` (other than ``AddressFamily/any``),
    /// makes every request of the transport fail with ``CourierError/Kind/invalidRequest``
    /// (libcurl would ignore it and ask DNS).
    public var overrides: [Override]
    /// Which address family to connect over. Default ``AddressFamily/any``.
    public var addressFamily: AddressFamily
    /// How long a connection attempt over IPv6 gets before one over IPv4 starts beside it,
    /// for a name with both (`CURLOPT_HAPPY_EYEBALLS_TIMEOUT_MS`); `nil` (the default) for
    /// libcurl's 200 ms, as RFC 8305 recommends.
    public var happyEyeballsDelay: Duration?

    /// Creates name-resolution settings.
    public init(
      overrides: [Override] = [], addressFamily: AddressFamily = .any,
      happyEyeballsDelay: Duration? = nil
    ) {
      self.overrides = overrides
      self.addressFamily = addressFamily
      self.happyEyeballsDelay = happyEyeballsDelay
    }

    /// DNS and the hosts file, both address families, libcurl's Happy Eyeballs delay.
    public static var system: NameResolution { NameResolution() }

    /// Whether nothing is changed from ``system``: no option to set.
    var isSystem: Bool { overrides.isEmpty && addressFamily == .any && happyEyeballsDelay == nil }
  }
}
