extension CurlTransport {
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
}
