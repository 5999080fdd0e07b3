extension CurlTransport {
  /// The HTTP version a ``CurlTransport`` speaks.
  public struct HTTPVersion: Sendable, Hashable, CustomStringConvertible {
    let name: String

    /// HTTP/1.1 only (`CURL_HTTP_VERSION_1_1`).
    public static let http1 = HTTPVersion(name: "HTTP/1.1")
    /// HTTP/2 where TLS negotiates it with ALPN, HTTP/1.1 otherwise
    /// (`CURL_HTTP_VERSION_2TLS`). Requests to one host share one connection as streams:
    /// requests that start while the first connection is still being made wait for it
    /// (`CURLOPT_PIPEWAIT`) instead of opening their own. Opt-in; plain `http` URLs go over
    /// HTTP/1.1 (``http2PriorKnowledge`` is HTTP/2 without TLS). An
    /// answer that arrives whole (by its `Content-Length`) while the request body is still
    /// going out ends the transfer with that answer: libcurl 7.88 would wait for the rest of
    /// the upload, which a server answering without reading (nginx's `return`) never takes,
    /// until a timeout. With ``ContentDecoding/automatic`` the received bytes cannot be
    /// counted, and that wait remains.
    public static let http2 = HTTPVersion(name: "HTTP/2 over TLS")
    /// HTTP/2 from the first byte over plain TCP, without an `Upgrade` (h2c with prior
    /// knowledge, `CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE`), for internal services known to
    /// speak it (nginx's `listen … http2;` without `ssl`, gRPC-style servers); `https` URLs
    /// negotiate HTTP/2 by ALPN as with ``http2``. Requests share connections as streams,
    /// and the early-answer rule applies, as with ``http2``. A server that speaks only
    /// HTTP/1.1 cannot read the connection preface: its requests fail (with
    /// ``CourierError/Kind/connectionLost`` or ``CourierError/Kind/badResponse``), and are not
    /// tried again over HTTP/1.1. With libcurl older than 8.0 (Debian 12 has 7.88), each
    /// request gets a connection of its own, made for it and closed after it: those versions
    /// fail any request sent on an h2c connection another one made (curl/curl#10634).
    public static let http2PriorKnowledge = HTTPVersion(name: "HTTP/2 with prior knowledge")

    /// Whether requests to one host share a connection as HTTP/2 streams.
    var multiplexes: Bool { self != .http1 }

    /// `HTTP/1.1`, `HTTP/2 over TLS` or `HTTP/2 with prior knowledge`.
    public var description: String { name }
  }
}
