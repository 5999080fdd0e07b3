extension CurlTransport {
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
}
