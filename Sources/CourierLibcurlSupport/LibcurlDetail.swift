import Foundation

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

  /// Whether libcurl's `UNSUPPORTED_PROTOCOL` (`URLError` -1002, "unsupported URL", through
  /// URLSession on Linux) for a request to `url` was about the server's reply rather than the
  /// URL: the detail says so, or the URL is `http` or `https`, which libcurl speaks, and the
  /// detail does not name a protocol libcurl refused. The detail alone is not enough: libcurl
  /// keeps the first message of a transfer, so a status line that is not HTTP on a fresh
  /// connection, after a kept-alive one the server had closed, comes with "Recv failure:
  /// Connection reset by peer" and would read as a bad URL.
  package static func isReplyProblem(unsupportedProtocolDetail detail: String, url: URL) -> Bool {
    isMalformedStatusLine(detail)
      || (isHTTP(url) && !detail.contains("not supported or disabled"))
  }

  /// The status a proxy answered a `CONNECT` with, when it refused the tunnel ("CONNECT
  /// tunnel failed, response 407"), which libcurl reports as `RECV_ERROR`.
  package static func refusedTunnelStatus(_ detail: String) -> Int? {
    let prefix = "CONNECT tunnel failed, response "
    guard let range = detail.range(of: prefix) else { return nil }
    return Int(detail[range.upperBound...].prefix { $0.isNumber })
  }

  /// A SOCKS5 proxy that refused the user name and password ("User was rejected by the
  /// SOCKS5 server") or asked for some that were not given ("No authentication method was
  /// acceptable"), which libcurl reports as `PROXY`.
  package static func isRefusedSOCKSCredentials(_ detail: String) -> Bool {
    detail.contains("rejected by the SOCKS5 server")
      || detail.contains("No authentication method was acceptable")
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

  /// A response head over libcurl's total limit for its header lines (300 KB in 7.88: "Too
  /// large response headers: 307203 > 307200"), reported as `RECV_ERROR` as if the
  /// connection had dropped. Trailer fields count too.
  package static func isOversizedResponseHead(_ detail: String) -> Bool {
    detail.hasPrefix("Too large response headers")
  }

  /// A header line libcurl refuses (`WEIRD_SERVER_REPLY` in `CurlTransport`; `URLError` -1,
  /// "unknown", through URLSession): a NUL byte in it, or no colon.
  package static func isMalformedHeaderLine(_ detail: String) -> Bool {
    detail == "Nul byte in header" || detail.hasPrefix("Header without colon")
  }

  /// A `Content-Encoding` or `Transfer-Encoding` that libcurl does not know or whose body does
  /// not decode, as URLSession on Linux (which lets libcurl decode) reports it: `URLError` -1
  /// with "Error while processing content unencoding" or "Unrecognized or bad HTTP Content or
  /// Transfer-Encoding".
  package static func isUndecodableBody(_ detail: String) -> Bool {
    detail.contains("content unencoding")
      || detail.contains("bad HTTP Content or Transfer-Encoding")
  }

  /// libcurl's gzip decoder refusing bytes after the end of a member (trailing garbage), as
  /// URLSession on Linux reports it: `URLError` -1 with `CURLE_WRITE_ERROR`'s words, "Failed
  /// writing received data to disk/application". FoundationNetworking's own write callback
  /// takes every byte, so through URLSession only libcurl's decoder fails a write.
  package static func isRefusedDecodedWrite(_ detail: String) -> Bool {
    detail == "Failed writing received data to disk/application"
  }

  /// URLSession on Linux refusing a response head its own parser cannot read, such as a
  /// status line without a reason phrase (`HTTP/1.1 200`, which RFC 9112 allows): its header
  /// callback fails, and libcurl reports "Failed writing header".
  package static func isRefusedResponseHead(_ detail: String) -> Bool {
    detail == "Failed writing header"
  }

  /// A TLS handshake that failed, as libcurl 7.88 with OpenSSL words it: the server's
  /// certificate not trusted, expired or for another name ("SSL certificate problem: …",
  /// "SSL: no alternative certificate subject name matches target host name …"), a pinned key
  /// that does not match ("SSL: public key does not match pinned public key"), or a handshake
  /// that broke off ("OpenSSL SSL_connect: …", "error:0A00010B:SSL routines::wrong version
  /// number"). URLSession on Linux reports all of them as `URLError` -1, "unknown".
  package static func isTLSFailure(_ detail: String) -> Bool {
    detail.hasPrefix("SSL certificate problem") || detail.hasPrefix("SSL: ")
      || detail.hasPrefix("OpenSSL SSL_connect") || detail.contains("SSL routines")
      || detail == "SSL connect error"
      || detail == "SSL peer certificate or SSH remote key was not OK"
      || detail.hasPrefix("error setting certificate")
  }

  /// The TLS alerts a server sends when it wants a client certificate it did not get, or
  /// refuses the one it got, as OpenSSL words them (`tlsv13 alert certificate required`,
  /// `tlsv1 alert unknown ca`, `sslv3 alert bad certificate`, …), with whether the alert says
  /// a certificate was missing.
  private static let clientCertificateAlerts: [(words: String, missing: Bool)] = [
    ("alert certificate required", true),
    ("alert unknown ca", false), ("alert bad certificate", false),
    ("alert certificate unknown", false), ("alert unsupported certificate", false),
    ("alert certificate revoked", false), ("alert certificate expired", false),
    ("alert access denied", false),
  ]

  /// What the server said about the client certificate when libcurl's `detail` carries a TLS
  /// alert about one (with OpenSSL a server's alert arrives as `SSL_CONNECT_ERROR` (35)
  /// during the handshake, or as `RECV_ERROR` (56) at the first read over TLS 1.3, whose
  /// client finishes its handshake before the server has checked its certificate), in words
  /// for a developer; `nil` for any other detail. `presented` is whether the client sent a
  /// certificate: a `handshake failure` alert then means nothing more, and without one it
  /// is the usual TLS 1.2 answer of a server that requires one.
  package static func clientCertificateRefusal(_ detail: String, presented: Bool) -> String? {
    if let alert = clientCertificateAlerts.first(where: { detail.contains($0.words) }) {
      let name = alert.words.dropFirst("alert ".count)
      if alert.missing || !presented {
        return presented
          ? "the server asked for a client certificate and did not get it (TLS alert: \(name))"
          : "the server requires a client certificate, and none is configured "
            + "(TLS alert: \(name); CurlTransport.TLS.clientCertificate)"
      }
      return "the server refused the client certificate (TLS alert: \(name))"
    }
    if !presented, detail.contains("alert handshake failure") {
      return "the server ended the TLS handshake (alert: handshake failure); it may require a "
        + "client certificate, and none is configured (CurlTransport.TLS.clientCertificate)"
    }
    return nil
  }

  /// libcurl 7.88's only words for a response header line over 100 KB
  /// (`CURL_MAX_HTTP_HEADER`): `OUT_OF_MEMORY`, "Out of memory", with no detail of its own.
  /// A real allocation failure reads the same, and on Linux, which overcommits memory, is far
  /// rarer than a server sending such a line.
  package static func isOutOfMemory(_ detail: String) -> Bool {
    detail == "Out of memory"
  }

  /// `detail` with the password of every URL in it replaced by `<redacted>`
  /// (`http://user:<redacted>@proxy:3128`). libcurl repeats a proxy URL it cannot use whole
  /// ("Unsupported proxy scheme for '…'", "Unsupported proxy syntax in '…'"), and the proxy
  /// URL of `http_proxy` or `HTTPS_PROXY` may carry credentials; the detail goes into errors,
  /// which are logged. A URL ends at a quote or white space; its user information is what
  /// comes before its last `@`.
  ///
  /// The proxy string libcurl quotes in a message starting "Unsupported proxy" is read whole,
  /// up to the message's last quote: curl takes one without a scheme
  /// (`user:password@proxy:3128`), and the one it refuses may hold a quote or white space.
  package static func redactingCredentials(_ detail: String) -> String {
    guard detail.contains("@") else { return detail }
    if let message = detail.range(of: "Unsupported proxy"),
      let open = detail[message.upperBound...].firstIndex(of: "'"),
      let close = detail.lastIndex(of: "'"), open < close
    {
      let quoted = detail[detail.index(after: open)..<close]
      return redactingURLs(String(detail[...open])) + redactingProxyString(quoted)
        + redactingURLs(String(detail[close...]))
    }
    return redactingURLs(detail)
  }

  /// A proxy string, with or without a scheme, whose password (what follows the first `:` of
  /// the text before its last `@`) is replaced by `<redacted>`.
  private static func redactingProxyString(_ proxy: Substring) -> String {
    guard let at = proxy.lastIndex(of: "@") else { return String(proxy) }
    var start = proxy.startIndex
    // A scheme only when what precedes `://` is one: a password may hold `://` too.
    if let scheme = proxy[..<at].range(of: "://"), !proxy[..<scheme.lowerBound].isEmpty,
      proxy[..<scheme.lowerBound].allSatisfy({
        $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0))
      })
    {
      start = scheme.upperBound
    }
    let userInfo = proxy[start..<at]
    guard let colon = userInfo.firstIndex(of: ":") else { return String(proxy) }
    return String(proxy[..<colon]) + ":<redacted>" + String(proxy[at...])
  }

  /// `detail` with the password of every `scheme://` URL in it redacted.
  private static func redactingURLs(_ detail: String) -> String {
    guard detail.contains("@"), detail.contains("://") else { return detail }
    var result = ""
    var rest = Substring(detail)
    while let scheme = rest.range(of: "://") {
      result += rest[..<scheme.upperBound]
      rest = rest[scheme.upperBound...]
      let end =
        rest.firstIndex { $0 == "'" || $0 == "\"" || $0.isWhitespace } ?? rest.endIndex
      guard let at = rest[..<end].lastIndex(of: "@") else { continue }
      let userInfo = rest[..<at]
      if let colon = userInfo.firstIndex(of: ":") {
        result += userInfo[..<colon] + ":<redacted>"
      } else {
        result += userInfo
      }
      rest = rest[at...]
    }
    return result + rest
  }

  /// Whether the URL's scheme is `http` or `https`, in any case: the protocols libcurl speaks
  /// for Courier.
  private static func isHTTP(_ url: URL) -> Bool {
    guard let scheme = url.scheme?.lowercased() else { return false }
    return scheme == "http" || scheme == "https"
  }
}
