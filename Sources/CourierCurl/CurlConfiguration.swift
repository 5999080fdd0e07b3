import CourierCore

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
    /// The most connections open to one host (`CURLMOPT_MAX_HOST_CONNECTIONS`); requests beyond
    /// it wait inside libcurl for a connection to come free. Default 8, as AsyncHTTPClient's
    /// HTTP/1.1 pool: enough to keep a loopback or LAN service busy without flooding a remote
    /// one (URLSession's default is 6). Idle keep-alive connections are kept up to 4× this
    /// number over all hosts, at least 64 (`CURLMOPT_MAXCONNECTS`). Values outside
    /// 1...65,535 are taken as the nearest end.
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
    /// The HTTP version to speak. Default ``HTTPVersion/http1``.
    public var httpVersion: HTTPVersion
    /// Trust settings for `https`. Default ``TLS/system``.
    public var tls: TLS
    /// Whether a caller adds its transfer to libcurl and sends the request from its own thread
    /// (under the transport's lock), leaving only the response to the event-loop thread.
    /// Default `true`: one request at a time on a kept-alive connection, the loop thread is
    /// then woken once per request instead of twice (see the README's transport table for
    /// what that saves). Needs libcurl 7.88 or later, whose socket writes never raise
    /// `SIGPIPE`; with an older libcurl, or `false`, every transfer is handed to the loop
    /// thread through its queue.
    public var startsTransfersOnCallingThread: Bool

    /// Creates a configuration; every default is ``standard``'s.
    public init(
      maximumConnectionsPerHost: Int = 8,
      connectTimeout: Duration = .seconds(10),
      idleTimeout: Duration? = .seconds(60),
      maximumResponseBodySize: Int = ResponsePipeline.defaultMaximumDecodedBodySize,
      contentDecoding: ContentDecoding = .none,
      httpVersion: HTTPVersion = .http1,
      tls: TLS = .system,
      startsTransfersOnCallingThread: Bool = true
    ) {
      self.maximumConnectionsPerHost = maximumConnectionsPerHost
      self.connectTimeout = connectTimeout
      self.idleTimeout = idleTimeout
      self.maximumResponseBodySize = maximumResponseBodySize
      self.contentDecoding = contentDecoding
      self.httpVersion = httpVersion
      self.tls = tls
      self.startsTransfersOnCallingThread = startsTransfersOnCallingThread
    }

    /// The fewest idle connections kept over all hosts.
    static let minimumIdleConnections = 64

    /// HTTP/1.1, 8 connections per host, 10 s to connect, 60 s idle limit, 32 MiB response
    /// bodies, no content decoding, the system's trust store, transfers started on the
    /// calling thread.
    public static var standard: Configuration { Configuration() }
  }

  /// Whether libcurl decodes compressed response bodies.
  ///
  /// - ``none`` (the default): libcurl sends no `Accept-Encoding` of its own
  ///   (`CURLOPT_ACCEPT_ENCODING` unset) and never decodes (`CURLOPT_HTTP_CONTENT_DECODING`
  ///   0). `GzipMiddleware` asks for gzip and decodes next to the wire, within its size and
  ///   ratio limits, and makes `Content-Encoding` and `Content-Length` true afterwards; a body
  ///   labelled `gzip` that is not compressed (some servers do that) is passed through instead
  ///   of failing as it does in URLSession. One decoder, with one set of limits and one
  ///   behaviour on every transport. Downloads to a file, which never pass through
  ///   `GzipMiddleware`, are decoded by libcurl into the file, as URLSession decodes them.
  /// - ``automatic``: libcurl asks for and decodes gzip, deflate, brotli and zstd itself
  ///   (`CURLOPT_ACCEPT_ENCODING ""`). The body limit is counted on the decoded bytes, so a
  ///   gzip bomb is still stopped at ``Configuration/maximumResponseBodySize``; the response
  ///   keeps the `Content-Encoding` header it was sent with, as URLSession's does.
  public struct ContentDecoding: Sendable, Hashable, CustomStringConvertible {
    let automatic: Bool

    /// Bodies arrive as sent; decoding is left to `GzipMiddleware`.
    public static let none = ContentDecoding(automatic: false)
    /// libcurl decodes every encoding it was built with.
    public static let automatic = ContentDecoding(automatic: true)

    /// `none` or `automatic`.
    public var description: String { automatic ? "automatic" : "none" }
  }

  /// The HTTP version a ``CurlTransport`` speaks.
  public struct HTTPVersion: Sendable, Hashable, CustomStringConvertible {
    let name: String

    /// HTTP/1.1 only (`CURL_HTTP_VERSION_1_1`).
    public static let http1 = HTTPVersion(name: "HTTP/1.1")
    /// HTTP/2 where TLS negotiates it with ALPN, HTTP/1.1 otherwise
    /// (`CURL_HTTP_VERSION_2TLS`). Requests to one host share one connection as streams:
    /// requests that start while the first connection is still being made wait for it
    /// (`CURLOPT_PIPEWAIT`) instead of opening their own. Opt-in: HTTP/2 without TLS (prior
    /// knowledge) is not offered, because Debian's libcurl 7.88 has known bugs there. An
    /// answer that arrives whole (by its `Content-Length`) while the request body is still
    /// going out ends the transfer with that answer: libcurl 7.88 would wait for the rest of
    /// the upload, which a server answering without reading (nginx's `return`) never takes,
    /// until a timeout. With ``ContentDecoding/automatic`` the received bytes cannot be
    /// counted, and that wait remains.
    public static let http2 = HTTPVersion(name: "HTTP/2 over TLS")

    /// `HTTP/1.1` or `HTTP/2 over TLS`.
    public var description: String { name }
  }

  /// Trust settings for `https` requests (OpenSSL).
  public struct TLS: Sendable, Hashable {
    /// A PEM file of certificate authorities to trust instead of the system's
    /// (`CURLOPT_CAINFO`); `nil` for the system's trust store.
    public var caBundlePath: String?
    /// The server's public key must match (`CURLOPT_PINNEDPUBLICKEY`): a PEM or DER file, or
    /// `sha256//` base64 hashes separated by `;`. A mismatch fails with
    /// ``CourierError/Kind/secureConnectionFailed``. `nil` for no pinning.
    public var pinnedPublicKey: String?

    /// Creates TLS settings.
    public init(caBundlePath: String? = nil, pinnedPublicKey: String? = nil) {
      self.caBundlePath = caBundlePath
      self.pinnedPublicKey = pinnedPublicKey
    }

    /// The system's trust store, no pinning.
    public static var system: TLS { TLS() }
  }
}
