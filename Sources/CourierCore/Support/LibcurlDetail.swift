/// libcurl's own words for replies that are not valid HTTP, read by both transports built on
/// libcurl (`CurlTransport` directly, `URLSessionTransport` through Foundation on Linux):
/// libcurl reports these with codes that would otherwise mean a bad URL or a dropped
/// connection, so only its message tells them apart.
package enum LibcurlDetail {
  /// A status line that is not HTTP (`HTTP/1.1 2OO OK`, or no status line at all).
  package static func isMalformedStatusLine(_ detail: String) -> Bool {
    detail.contains("Unsupported response code in HTTP response")
      || detail.contains("Received HTTP/0.9")
  }

  /// A chunk-size line that is not hexadecimal.
  package static func isBrokenChunking(_ detail: String) -> Bool {
    detail.contains("in chunked-encoding")
  }
}
