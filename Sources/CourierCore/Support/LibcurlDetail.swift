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

  /// A `Content-Length` that is not a number or is negative ("Invalid Content-Length:
  /// value"). `CurlTransport` gets it with `WEIRD_SERVER_REPLY`; URLSession passes it on as
  /// `URLError` -1, "unknown".
  package static func isInvalidContentLength(_ detail: String) -> Bool {
    detail.contains("Invalid Content-Length")
  }

  /// URLSession on Linux refusing a response head its own parser cannot read, such as a
  /// status line without a reason phrase (`HTTP/1.1 200`, which RFC 9112 allows): its header
  /// callback fails, and libcurl reports "Failed writing header".
  package static func isRefusedResponseHead(_ detail: String) -> Bool {
    detail == "Failed writing header"
  }

  /// libcurl 7.88's only words for a response header line over 100 KB
  /// (`CURL_MAX_HTTP_HEADER`): `OUT_OF_MEMORY`, "Out of memory", with no detail of its own.
  /// A real allocation failure reads the same, and on Linux, which overcommits memory, is far
  /// rarer than a server sending such a line.
  package static func isOutOfMemory(_ detail: String) -> Bool {
    detail == "Out of memory"
  }
}
