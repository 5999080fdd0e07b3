internal import CCourierCurl
import CourierCore
internal import CourierLibcurlSupport

/// How libcurl's `CURLcode`s become ``CourierError`` kinds.
///
/// | `CURLcode` | kind |
/// | --- | --- |
/// | `COULDNT_CONNECT` (7), `INTERFACE_FAILED` (45), `NO_CONNECTION_AVAILABLE` (89), `QUIC_CONNECT_ERROR` (96), `PROXY` (97) | ``CourierError/Kind/cannotConnect`` |
/// | `COULDNT_RESOLVE_PROXY` (5), `COULDNT_RESOLVE_HOST` (6) | ``CourierError/Kind/cannotFindHost`` |
/// | `OPERATION_TIMEDOUT` (28) — also the idle limit | ``CourierError/Kind/timedOut`` |
/// | `PARTIAL_FILE` (18), `GOT_NOTHING` (52), `SEND_ERROR` (55), `RECV_ERROR` (56), `HTTP2` (16), `HTTP2_STREAM` (92), `HTTP3` (95) | ``CourierError/Kind/connectionLost`` |
/// | `SSL_CONNECT_ERROR` (35), `SSL_ENGINE_NOTFOUND` (53), `SSL_ENGINE_SETFAILED` (54), `SSL_CERTPROBLEM` (58), `SSL_CIPHER` (59), `PEER_FAILED_VERIFICATION` (60), `USE_SSL_FAILED` (64), `SSL_ENGINE_INITFAILED` (66), `SSL_CACERT_BADFILE` (77), `SSL_SHUTDOWN_FAILED` (80), `SSL_CRL_BADFILE` (82), `SSL_ISSUER_ERROR` (83), `SSL_PINNEDPUBKEYNOTMATCH` (90), `SSL_INVALIDCERTSTATUS` (91), `SSL_CLIENTCERT` (98) | ``CourierError/Kind/secureConnectionFailed`` |
/// | `WEIRD_SERVER_REPLY` (8, also a `Content-Length` that is not a number), `HTTP_RETURNED_ERROR` (22), `OUT_OF_MEMORY` (27: how libcurl 7.88 rejects a response header line over 100 KB), `TOO_MANY_REDIRECTS` (47), `CHUNK_FAILED` (88) | ``CourierError/Kind/badResponse`` |
/// | `BAD_CONTENT_ENCODING` (61) | ``CourierError/Kind/corruptBody`` |
/// | `FILESIZE_EXCEEDED` (63); `WRITE_ERROR` (23) when the body limit stopped the transfer | ``CourierError/Kind/bodyTooLarge`` |
/// | `ABORTED_BY_CALLBACK` (42) | ``CourierError/Kind/cancelled`` |
/// | `UNSUPPORTED_PROTOCOL` (1), `URL_MALFORMAT` (3), `READ_ERROR` (26, the file body could not be read), `FILE_COULDNT_READ_FILE` (37), `BAD_FUNCTION_ARGUMENT` (43), `UNKNOWN_OPTION` (48), `SETOPT_OPTION_SYNTAX` (49), `SEND_FAIL_REWIND` (65), `LOGIN_DENIED` (67), `AUTH_ERROR` (94) | ``CourierError/Kind/invalidRequest`` |
/// | `UNSUPPORTED_PROTOCOL` (1) with the detail "Unsupported response code in HTTP response" or "Received HTTP/0.9" (a status line that is not HTTP) — and, for an error thrown for an `http` or `https` request, any detail but "Protocol … not supported or disabled in libcurl" (libcurl keeps a transfer's first message, which can be about a kept-alive connection it had to replace), `RECV_ERROR` (56) with a detail ending "in chunked-encoding" (a broken chunk-size line) or starting "Too large response headers" (a head, trailer fields included, over 300 KB) | ``CourierError/Kind/badResponse`` (see ``kind(forCode:detail:)``) |
/// | `RECV_ERROR` (56) with a TLS alert about the client certificate in its detail (`alert certificate required`, `alert unknown ca`, `alert bad certificate`, …: over TLS 1.3 a server's refusal arrives at the first read) | ``CourierError/Kind/secureConnectionFailed`` |
/// | `RECV_ERROR` (56) with the detail "CONNECT tunnel failed, response 407" (or 401): a proxy refused the credentials; any other status there | ``CourierError/Kind/proxyAuthenticationFailed``; ``CourierError/Kind/cannotConnect`` |
/// | `PROXY` (97) with a detail saying the SOCKS5 proxy rejected the user or accepted no authentication method | ``CourierError/Kind/proxyAuthenticationFailed`` |
/// | every other code: `FAILED_INIT` (2), `NOT_BUILT_IN` (4), `WRITE_ERROR` (23) otherwise, `AGAIN` (81), `RECURSIVE_API_CALL` (93), `UNRECOVERABLE_POLL` (99), the FTP, TFTP, LDAP, SSH and RTSP codes, and codes newer than libcurl 7.88 | ``CourierError/Kind/transport`` |
public enum CurlErrorMapping {
  /// The kind for a `CURLcode` given as its number.
  public static func kind(forCode code: Int) -> CourierError.Kind {
    switch code {
    case 7, 45, 89, 96, 97: .cannotConnect
    case 5, 6: .cannotFindHost
    case 28: .timedOut
    case 16, 18, 52, 55, 56, 92, 95: .connectionLost
    case 35, 53, 54, 58, 59, 60, 64, 66, 77, 80, 82, 83, 90, 91, 98: .secureConnectionFailed
    case 8, 22, 27, 47, 88: .badResponse
    case 61: .corruptBody
    case 63: .bodyTooLarge
    case 42: .cancelled
    case 1, 3, 26, 37, 43, 48, 49, 65, 67, 94: .invalidRequest
    default: .transport
    }
  }

  /// The kind for a `CURLcode` and libcurl's detail for it: ``kind(forCode:)``, except where
  /// the detail shows the server's reply was not valid HTTP, which libcurl reports with codes
  /// that would otherwise mean a bad URL (1) or a dropped connection (56), or shows a TLS
  /// alert about the client certificate (56).
  public static func kind(forCode code: Int, detail: String) -> CourierError.Kind {
    switch code {
    case 1 where LibcurlDetail.isMalformedStatusLine(detail): .badResponse
    case 56
    where LibcurlDetail.isBrokenChunking(detail) || LibcurlDetail.isOversizedResponseHead(detail):
      .badResponse
    case 56 where LibcurlDetail.clientCertificateRefusal(detail, presented: true) != nil:
      .secureConnectionFailed
    case 56 where LibcurlDetail.refusedTunnelStatus(detail) != nil:
      // A proxy that refuses a tunnel with 407 (or 401, as tinyproxy does) wants credentials;
      // any other refusal means the server cannot be reached through it.
      [401, 407].contains(LibcurlDetail.refusedTunnelStatus(detail))
        ? .proxyAuthenticationFailed : .cannotConnect
    case 97 where LibcurlDetail.isRefusedSOCKSCredentials(detail): .proxyAuthenticationFailed
    default: kind(forCode: code)
    }
  }

  /// libcurl's text for a `CURLcode` (`curl_easy_strerror`).
  public static func summary(forCode code: Int) -> String {
    guard let text = courier_curl_easy_strerror(CURLcode(clamping: max(code, 0))) else {
      return "unknown error"
    }
    return String(cString: text)
  }

  /// The error a ``CurlTransport`` throws for `code`, with libcurl's `detail` in the debug
  /// description (any URL's password in it redacted) and a ``CurlError`` underneath.
  static func courierError(code: Int, detail: String, request: Request) -> CourierError {
    // The kind is read from libcurl's own words; the error keeps them without a password.
    let underlying = CurlError(
      code: code, summary: summary(forCode: code),
      detail: LibcurlDetail.redactingCredentials(detail))
    let replyProblem =
      code == 1
      && LibcurlDetail.isReplyProblem(unsupportedProtocolDetail: detail, url: request.url)
    return CourierError(
      kind: replyProblem ? .badResponse : kind(forCode: code, detail: detail),
      debugMessage: "libcurl error \(code)",
      underlying: underlying,
      request: request, attempts: 1, stage: "transport")
  }
}
