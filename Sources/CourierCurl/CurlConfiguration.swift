import CourierCore
import Foundation

extension CurlTransport {
  /// How a ``CurlTransport`` connects, what it accepts and how long it waits.
  ///
  /// Start from ``standard`` and change what you need:
  ///
  /// ```swift
  /// var configuration = CurlTransport.Configuration.standard
  /// configuration.maximumConnectionsPerHost = 16
  /// configuration.tls = .init(caBundlePath: "/etc/ssl/internal-ca.pem")
  /// let transport = CurlTransport(configuration: configuration)
  /// transport.shutdown()
  /// ```
  public struct Configuration: Sendable, Hashable {
    /// The most connections open to one host, shared out between the ``eventLoops``; requests
    /// beyond it wait in the transport, in order, for a connection to come free.
    ///
    /// Default 16. Over HTTP/1.1 a connection carries one request at a time, so requests
    /// beyond the limit wait their turn. With many requests at once to a busy service, 16
    /// connections got more done per second than AsyncHTTPClient's 8, at less CPU per request
    /// (`courier-bench curve`, Docs/Benchmarks.md), and 16 is still a modest load for a remote
    /// server (a browser opens 6 per host). Each loop keeps up to 4× its share of idle
    /// keep-alive connections over all hosts, at least 64 (`CURLMOPT_MAXCONNECTS`). Values
    /// outside 1...65,535 are taken as the nearest end.
    public var maximumConnectionsPerHost: Int
    /// The longest a connection (DNS, TCP and TLS) may take (`CURLOPT_CONNECTTIMEOUT_MS`).
    /// Default 10 s: libcurl's own 300 s would outlast any request deadline.
    public var connectTimeout: Duration
    /// Fail with ``CourierError/Kind/timedOut`` when not one byte moved for this long
    /// (`CURLOPT_LOW_SPEED_TIME`, whole seconds, rounded up); `nil` for no idle limit. Default
    /// 60 s, URLSession's request timeout, so a server that never answers cannot hang a
    /// request that has no ``Request/timeout`` and no `TimeoutMiddleware`.
    public var idleTimeout: Duration?
    /// The most response body bytes kept, counted after any decoding libcurl does; a larger
    /// body aborts the transfer from libcurl's write callback and fails with
    /// ``CourierError/Kind/bodyTooLarge``. Default 32 MiB
    /// (`ResponsePipeline.defaultMaximumDecodedBodySize`), the limit the response pipeline
    /// and `GzipMiddleware` apply too. A negative value counts as 0.
    public var maximumResponseBodySize: Int
    /// Whether libcurl decodes compressed responses. Default ``ContentDecoding/none``.
    public var contentDecoding: ContentDecoding
    /// The HTTP version to speak. Default ``HTTPVersion/http1``, over TLS too: against nginx
    /// over TLS, HTTP/1.1 did more requests per second than HTTP/2 negotiated by ALPN, one at
    /// a time and 16 at once, at about the same CPU per request (`courier-bench
    /// tls-versions`, Docs/Benchmarks.md). HTTP/2 pays where one connection must carry many
    /// requests (a server or proxy that limits connections, high latency): opt in with
    /// ``HTTPVersion/http2``.
    public var httpVersion: HTTPVersion
    /// Trust settings for `https`, and the client certificate to present. Default
    /// ``TLS/system``.
    public var tls: TLS
    /// A Unix domain socket every request of the transport is sent over
    /// (`CURLOPT_UNIX_SOCKET_PATH`), instead of a TCP connection to the URL's host, as
    /// `curl --unix-socket` does; `nil` (the default) for TCP. The URLs stay ordinary `http`
    /// (or `https`) URLs: their host goes in `Host` and keys the connections, and the socket
    /// is where they all go — `http://localhost/v1.43/info` with
    /// `/var/run/docker.sock` for the Docker Engine API. A path where nobody listens fails
    /// with ``CourierError/Kind/cannotConnect``, the path in its `debugDescription`.
    ///
    /// A setting of the transport rather than a URL form (AsyncHTTPClient's
    /// `http+unix://%2Fvar%2Frun%2Fdocker.sock/…`): a socket is where one service lives, so a
    /// transport (and a ``Client`` with a plain base URL) per socket reads as what it is, and
    /// every middleware, log and redirect rule keeps seeing an `http` URL with a host.
    public var unixSocketPath: String?
    /// How host names become addresses: fixed addresses for some names, the address family,
    /// the Happy Eyeballs delay. Default ``NameResolution/system``.
    public var nameResolution: NameResolution
    /// Whether requests go through a proxy. Default ``ProxyPolicy/environment``: the proxy
    /// the process's `http_proxy`, `HTTPS_PROXY`, `ALL_PROXY` and `NO_PROXY` name, as curl
    /// reads them; ``ProxyPolicy/direct`` for none, ``ProxyPolicy/through(_:)`` for one of
    /// your own.
    public var proxy: ProxyPolicy
    /// Whether a caller adds its transfer to libcurl and sends the request from its own thread
    /// (under the transport's lock), leaving only the response to the event-loop thread.
    /// Default `true`: one request at a time on a kept-alive connection, the loop thread is
    /// then woken once per request instead of twice, which saves CPU per request. A caller
    /// does so only when no other request of the transport is in progress. Needs libcurl 7.88
    /// or later, whose socket writes never raise `SIGPIPE`; with an older libcurl, or `false`,
    /// every transfer is handed to the loop thread through its queue.
    public var startsTransfersOnCallingThread: Bool
    /// How many event-loop threads drive the transport's transfers, each with a libcurl multi
    /// handle and connections of its own. Default ``defaultEventLoops``: 2 where the machine
    /// has two cores or more, else 1.
    ///
    /// With many requests at once, one thread handing every response to libcurl and every
    /// request to the socket becomes the limit before the cores do; a second one shares that
    /// work. A request goes to the first loop whenever that one has nothing else to do, so one
    /// request at a time always uses the same thread and connection. ``maximumConnectionsPerHost``
    /// is shared out between the loops (a limit of 8 is 4 per loop with 2), and there are never
    /// more loops than connections allowed; a request goes to a loop with connections to its
    /// host left, so the limit is the host's over all loops. Over HTTP/2 (``HTTPVersion/http2``,
    /// ``HTTPVersion/http2PriorKnowledge``) the transport runs one loop whatever this says, so
    /// that requests to one host share one connection as streams. Values below 1 count as 1, and there are never more
    /// loops than the machine has active cores: a loop never blocks, so more of them would
    /// only take turns on the same cores (and a mistaken large value would start thousands of
    /// threads).
    public var eventLoops: Int

    /// 2 where the machine has two cores or more, else 1.
    public static var defaultEventLoops: Int {
      min(2, max(1, ProcessInfo.processInfo.activeProcessorCount))
    }

    /// Creates a configuration; every default is ``standard``'s.
    public init(
      maximumConnectionsPerHost: Int = 16,
      connectTimeout: Duration = .seconds(10),
      idleTimeout: Duration? = .seconds(60),
      maximumResponseBodySize: Int = ResponsePipeline.defaultMaximumDecodedBodySize,
      contentDecoding: ContentDecoding = .none,
      httpVersion: HTTPVersion = .http1,
      tls: TLS = .system,
      proxy: ProxyPolicy = .environment,
      startsTransfersOnCallingThread: Bool = true,
      eventLoops: Int = Configuration.defaultEventLoops,
      unixSocketPath: String? = nil,
      nameResolution: NameResolution = .system
    ) {
      self.maximumConnectionsPerHost = maximumConnectionsPerHost
      self.connectTimeout = connectTimeout
      self.idleTimeout = idleTimeout
      self.maximumResponseBodySize = maximumResponseBodySize
      self.contentDecoding = contentDecoding
      self.httpVersion = httpVersion
      self.tls = tls
      self.proxy = proxy
      self.startsTransfersOnCallingThread = startsTransfersOnCallingThread
      self.eventLoops = eventLoops
      self.unixSocketPath = unixSocketPath
      self.nameResolution = nameResolution
    }

    /// ``maximumConnectionsPerHost`` within 1...65,535: a host has at most 65,535 ports to be
    /// reached on, and `4 ×` the value (libcurl's idle cache) cannot overflow.
    var connectionLimit: Int { min(max(1, maximumConnectionsPerHost), 65_535) }

    /// The fewest idle connections kept over all hosts.
    static let minimumIdleConnections = 64

    /// HTTP/1.1, 16 connections per host, 10 s to connect, 60 s idle limit, 32 MiB response
    /// bodies, no content decoding, the system's trust store, the environment's proxy,
    /// transfers started on the calling thread, ``defaultEventLoops`` loop threads, TCP with
    /// the system's name resolution.
    public static var standard: Configuration { Configuration() }
  }
}
