extension CurlTransport {
  /// Whether a ``CurlTransport``'s requests go through a proxy: as the environment says (the
  /// default), never, or always through one you name.
  ///
  /// ```swift
  /// var configuration = CurlTransport.Configuration.standard
  /// configuration.proxy = .through(
  ///   CurlTransport.Proxy(
  ///     .http, host: "egress.internal", port: 3128, username: "svc-orders",
  ///     password: "from-the-secret-store", bypass: ["localhost", ".svc.cluster.local"]))
  /// let transport = CurlTransport(configuration: configuration)
  /// transport.shutdown()
  /// ```
  public struct ProxyPolicy: Sendable, Hashable, CustomStringConvertible {
    enum Choice: Sendable, Hashable {
      case environment
      case direct
      case proxy(Proxy)
    }

    let choice: Choice

    /// The proxy the process's environment names, as curl reads it: `http_proxy` for `http`
    /// URLs (lower case only: a CGI program gets a request's `Proxy:` header as
    /// `HTTP_PROXY`), `HTTPS_PROXY` or `https_proxy` for `https` URLs, `ALL_PROXY` or
    /// `all_proxy` for both when the other is unset, and `NO_PROXY` or `no_proxy` for the
    /// hosts reached directly (comma-separated names, where `.example.com` and
    /// `example.com` both cover its subdomains, `*` for every host, and IP ranges in CIDR
    /// notation such as `10.0.0.0/8`). A variable's value is a proxy URL
    /// (`http://user:password@host:port`, `socks5h://host:1080`). Read for every request.
    ///
    /// The default: a service in a container or behind a corporate egress is told its proxy
    /// this way, and curl, Go's standard client and URLSession on Linux all follow it.
    public static let environment = ProxyPolicy(choice: .environment)

    /// No proxy, whatever the environment says.
    public static let direct = ProxyPolicy(choice: .direct)

    /// Every request through `proxy`, except to the hosts of its ``Proxy/bypass`` list; the
    /// environment is not read.
    public static func through(_ proxy: Proxy) -> ProxyPolicy {
      ProxyPolicy(choice: .proxy(proxy))
    }

    /// The named proxy, if the policy has one.
    public var proxy: Proxy? {
      if case .proxy(let proxy) = choice { return proxy }
      return nil
    }

    /// `from the environment`, `direct`, or the proxy's description (never its password).
    public var description: String {
      switch choice {
      case .environment: "from the environment"
      case .direct: "direct"
      case .proxy(let proxy): proxy.description
      }
    }
  }

  /// A proxy that a ``CurlTransport`` sends requests through (``ProxyPolicy/through(_:)``).
  ///
  /// Its credentials go to the proxy only (`Proxy-Authorization` for an HTTP proxy, the
  /// SOCKS5 username and password exchange), never to a server, and are never printed: the
  /// description and `dump` leave the password out.
  public struct Proxy: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// How the transport talks to a proxy.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
      let name: String
      /// libcurl's `CURLPROXY_*` value.
      let curlType: Int

      /// An HTTP proxy: an `http` request goes to it whole, an `https` request through a
      /// `CONNECT` tunnel, so the proxy sees only the host and port.
      public static let http = Kind(name: "http", curlType: 0)
      /// A SOCKS5 proxy that is given the server's address: host names are resolved here.
      public static let socks5 = Kind(name: "socks5", curlType: 5)
      /// A SOCKS5 proxy that is given the server's host name and resolves it itself, for
      /// names only the proxy's network knows.
      public static let socks5RemoteDNS = Kind(name: "socks5h", curlType: 7)

      /// `http`, `socks5` or `socks5h`, as in a proxy URL.
      public var description: String { name }
    }

    /// How the transport talks to the proxy.
    public var kind: Kind
    /// The proxy's host name or IP address (an IPv6 address without brackets). One that is
    /// empty or not a host name (`/`, `@`, `?`, `#`, `,`, `+`, `*`, a quote or another
    /// character a URL's host cannot hold, white space, a control character, `:` outside an
    /// IPv6 address, brackets around anything else) fails every request with
    /// ``CourierError/Kind/invalidRequest``.
    public var host: String
    /// The proxy's port; one outside 1...65,535 fails every request with
    /// ``CourierError/Kind/invalidRequest``.
    public var port: Int
    /// The user name the proxy asks for; `nil` for none.
    public var username: String?
    /// The password that goes with ``username``; never printed.
    public var password: String?
    /// Hosts reached directly, in `NO_PROXY`'s syntax (see ``ProxyPolicy/environment``):
    /// `localhost`, `.internal.example` (and its subdomains), `10.0.0.0/8`, or `*` for all.
    /// Default: none.
    public var bypass: [String]

    /// A proxy at `host` and `port`.
    public init(
      _ kind: Kind, host: String, port: Int, username: String? = nil, password: String? = nil,
      bypass: [String] = []
    ) {
      self.kind = kind
      self.host = host
      self.port = port
      self.username = username
      self.password = password
      self.bypass = bypass
    }

    /// The value for `CURLOPT_PROXY`: `scheme://host:port`, an IPv6 address in brackets.
    var curlAddress: String {
      let host = self.host.contains(":") && !self.host.hasPrefix("[") ? "[\(self.host)]" : self.host
      return "\(kind.name)://\(host):\(port)"
    }

    /// The value for `CURLOPT_NOPROXY`: the bypass entries joined with commas, or `*` alone
    /// when one entry is `*` (libcurl covers every host with `*` only when it is the whole
    /// list).
    var curlBypass: String {
      let entries = bypass.map { $0.trimmingCharacters(in: .whitespaces) }
      return entries.contains("*") ? "*" : entries.joined(separator: ",")
    }

    /// Why libcurl cannot be given this proxy's address, or `nil`: a port outside
    /// 1...65,535, or a host that is empty or not a host name or IP address (libcurl would
    /// read `/`, `@`, `?` or `#` as parts of a URL, stop at a NUL, and refuse the rest of
    /// ``forbiddenHostCharacters`` as a proxy it cannot resolve). The host is not repeated:
    /// one with `@` may hold credentials.
    var addressProblem: String? {
      guard (1...65_535).contains(port) else {
        return "CurlTransport.Proxy: the port \(port) is not in 1...65535"
      }
      var bare = Substring(host)
      let bracketed = bare.hasPrefix("[") && bare.hasSuffix("]")
      if bracketed { bare = bare.dropFirst().dropLast() }
      let plain =
        !bare.isEmpty
        && !bare.contains { character in
          Self.forbiddenHostCharacters.contains(character) || character.isWhitespace
            || character.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
        }
        && (!bracketed || bare.contains(":"))
        && (!bare.contains(":")
          || CurlTransport.NameResolution.Override.numericAddress(String(bare)) != nil)
      guard plain else {
        return "CurlTransport.Proxy: the host is not a host name or an IP address (empty, or "
          + "with `/`, `@`, `?`, `#`, `,`, `+`, `*`, a quote or another character a URL's host "
          + "cannot hold, white space, a control character, `:` outside an IPv6 address, or "
          + "brackets around anything else)"
      }
      return nil
    }

    /// The characters libcurl's URL parser refuses in a host name (`hostname_check`), `:`
    /// aside (an IPv6 address has it): a proxy URL with one fails as a proxy that cannot be
    /// resolved, which reads (and is retried) as a DNS failure.
    static let forbiddenHostCharacters = Set(#"/@?#\[]%!{}$'"^`*<>=;,+&()"#)

    /// ``host`` as descriptions show it: a host written with credentials
    /// (`user:password@proxy`, which requests refuse) without them.
    var shownHost: String {
      guard let at = host.lastIndex(of: "@") else { return host }
      return "<redacted>" + host[at...]
    }

    /// `http proxy egress.internal:3128 as svc-orders (password set), bypass localhost`.
    public var description: String {
      let host = shownHost.contains(":") && !shownHost.hasPrefix("[") ? "[\(shownHost)]" : shownHost
      var text = "\(kind) proxy \(host):\(port)"
      if let username { text += " as \(username)" }
      if password != nil { text += " (password set)" }
      if !bypass.isEmpty { text += ", bypass \(bypass.joined(separator: ","))" }
      return text
    }

    /// The proxy without its password, for `dump` and debuggers.
    public var customMirror: Mirror {
      Mirror(
        self,
        children: [
          "kind": kind, "host": shownHost, "port": port, "username": username as Any,
          "password": password == nil ? "nil" : "<redacted>", "bypass": bypass,
        ])
    }
  }
}
