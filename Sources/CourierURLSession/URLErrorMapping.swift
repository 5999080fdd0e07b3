import CourierCore
internal import CourierLibcurlSupport
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// How `URLError` codes become ``CourierError`` kinds.
///
/// | `URLError.Code` | kind |
/// | --- | --- |
/// | `cancelled` (-999) | ``CourierError/Kind/cancelled`` |
/// | `timedOut` | ``CourierError/Kind/timedOut`` |
/// | `cannotConnectToHost` | ``CourierError/Kind/cannotConnect`` |
/// | `cannotFindHost`, `dnsLookupFailed` | ``CourierError/Kind/cannotFindHost`` |
/// | `networkConnectionLost` | ``CourierError/Kind/connectionLost`` |
/// | `notConnectedToInternet`, `internationalRoamingOff`, `dataNotAllowed`, `callIsActive` |
///   ``CourierError/Kind/notReachable`` |
/// | `secureConnectionFailed`, `serverCertificate…`, `clientCertificate…`,
///   `appTransportSecurityRequiresSecureConnection` | ``CourierError/Kind/secureConnectionFailed`` |
/// | `badServerResponse`, `cannotParseResponse`, `zeroByteResource`, `httpTooManyRedirects`,
///   `redirectToNonExistentLocation` | ``CourierError/Kind/badResponse`` |
/// | `cannotDecodeContentData`, `cannotDecodeRawData` | ``CourierError/Kind/corruptBody`` |
/// | `dataLengthExceedsMaximum` | ``CourierError/Kind/bodyTooLarge`` |
/// | `badURL`, `unsupportedURL`, `fileDoesNotExist`, `noPermissionsToReadFile`,
///   `requestBodyStreamExhausted`, `fileIsDirectory` | ``CourierError/Kind/invalidRequest`` |
/// | `unknown` (-1) with libcurl's "transfer closed with N bytes remaining" or "Recv failure"
///   (Linux: the connection closed mid-body) | ``CourierError/Kind/connectionLost`` |
/// | `unknown` (-1) with libcurl's "Error while processing content unencoding" or
///   "Unrecognized or bad HTTP Content or Transfer-Encoding" (Linux: a `Content-Encoding`
///   such as gzip over a body that is not encoded that way, or one libcurl does not know), or
///   "Failed writing received data to disk/application" (Linux: bytes after the end of a gzip
///   body, which libcurl's decoder refuses) | ``CourierError/Kind/corruptBody`` |
/// | `unknown` (-1) with libcurl's "Invalid Content-Length", "Out of memory" (a header line
///   over 100 KB), "Failed writing header" (a head FoundationNetworking cannot parse), "Too
///   large response headers" (over 300 KB in all), "Nul byte in header" or "Header without
///   colon" | ``CourierError/Kind/badResponse`` |
/// | `unknown` (-1) with libcurl's "SSL certificate problem: …" (an untrusted, expired or
///   self-signed certificate), "SSL: …" (a certificate for another host name), "OpenSSL
///   SSL_connect: …" or OpenSSL's "… SSL routines …" (a handshake that broke off) |
///   ``CourierError/Kind/secureConnectionFailed`` |
/// | any code with libcurl's "… in chunked-encoding" (Linux: a broken chunk-size line),
///   "Unsupported response code in HTTP response" or "Received HTTP/0.9" (Linux: a status
///   line that is not HTTP; URLSession reports `unsupportedURL`); and `unsupportedURL` for
///   an `http` or `https` request in ``courierError(for:request:)``, whatever the message
///   (libcurl keeps a transfer's first message, which can be about a kept-alive connection
///   it had to replace) | ``CourierError/Kind/badResponse`` |
/// | `badServerResponse` with libcurl's "Empty reply from server" (Linux: the server closed
///   the connection without answering, as `CurlTransport` reports it) |
///   ``CourierError/Kind/connectionLost`` |
/// | anything else | ``CourierError/Kind/transport`` |
public enum URLErrorMapping {
  /// The kind for a `URLError`, looking at libcurl's message where Linux reports a code that
  /// says too little (`unknown`) or the wrong thing (`unsupportedURL` for a bad status line).
  public static func kind(for error: URLError) -> CourierError.Kind {
    let message = (error as NSError).localizedDescription
    if LibcurlDetail.isBrokenChunking(message) || LibcurlDetail.isMalformedStatusLine(message) {
      return .badResponse
    }
    if error.code == .badServerResponse && message.contains("Empty reply from server") {
      return .connectionLost
    }
    if error.code == .unknown {
      if message.contains("transfer closed with") || message.contains("Recv failure") {
        return .connectionLost
      }
      if LibcurlDetail.isUndecodableBody(message) || LibcurlDetail.isRefusedDecodedWrite(message) {
        return .corruptBody
      }
      if LibcurlDetail.isTLSFailure(message) { return .secureConnectionFailed }
      if LibcurlDetail.isInvalidContentLength(message) || LibcurlDetail.isOutOfMemory(message)
        || LibcurlDetail.isRefusedResponseHead(message)
        || LibcurlDetail.isOversizedResponseHead(message)
        || LibcurlDetail.isMalformedHeaderLine(message)
      {
        return .badResponse
      }
    }
    return kind(for: error.code)
  }

  /// The kind for a `URLError` code.
  public static func kind(for code: URLError.Code) -> CourierError.Kind {
    switch code {
    case .cancelled: .cancelled
    case .timedOut: .timedOut
    case .cannotConnectToHost: .cannotConnect
    case .cannotFindHost, .dnsLookupFailed: .cannotFindHost
    case .networkConnectionLost: .connectionLost
    case .notConnectedToInternet, .internationalRoamingOff, .dataNotAllowed, .callIsActive:
      .notReachable
    case .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
      .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid,
      .clientCertificateRejected, .clientCertificateRequired,
      .appTransportSecurityRequiresSecureConnection:
      .secureConnectionFailed
    case .badServerResponse, .cannotParseResponse, .zeroByteResource, .httpTooManyRedirects,
      .redirectToNonExistentLocation:
      .badResponse
    case .cannotDecodeContentData, .cannotDecodeRawData: .corruptBody
    case .dataLengthExceedsMaximum: .bodyTooLarge
    case .badURL, .unsupportedURL, .fileDoesNotExist, .noPermissionsToReadFile,
      .requestBodyStreamExhausted, .fileIsDirectory:
      .invalidRequest
    default: .transport
    }
  }

  /// `error` with any URL's password in its texts replaced by `<redacted>`, in the errors
  /// under it too: on Linux its message is libcurl's, which repeats a proxy URL it cannot use
  /// whole ("Unsupported proxy scheme for '…'"), and `http_proxy`'s URL may carry the proxy's
  /// password. The same error when no text holds one.
  static func withoutCredentials(_ error: URLError) -> URLError {
    guard let userInfo = withoutCredentials(error.userInfo, depth: 0) else { return error }
    return URLError(error.code, userInfo: userInfo)
  }

  /// `userInfo` with its texts redacted (nested errors' too, a few levels deep), or `nil`
  /// when nothing needed it.
  private static func withoutCredentials(_ userInfo: [String: Any], depth: Int) -> [String: Any]? {
    guard depth < 4 else { return nil }
    var changed = false
    var result = userInfo
    for (key, value) in userInfo {
      if let text = value as? String {
        let redacted = LibcurlDetail.redactingCredentials(text)
        guard redacted != text else { continue }
        result[key] = redacted
        changed = true
      } else if let nested = value as? NSError,
        let nestedInfo = withoutCredentials(nested.userInfo, depth: depth + 1)
      {
        result[key] = NSError(domain: nested.domain, code: nested.code, userInfo: nestedInfo)
        changed = true
      }
    }
    return changed ? result : nil
  }

  /// Wraps any error from URLSession in a ``CourierError`` with the mapped kind.
  public static func courierError(for error: any Error, request: Request) -> CourierError {
    if let urlError = error as? URLError {
      let replyProblem =
        urlError.code == .unsupportedURL
        && LibcurlDetail.isReplyProblem(
          unsupportedProtocolDetail: (urlError as NSError).localizedDescription, url: request.url)
      return CourierError(
        kind: replyProblem ? .badResponse : kind(for: urlError),
        debugMessage: "URLError \(urlError.code.rawValue)",
        underlying: withoutCredentials(urlError), request: request, attempts: 1,
        stage: "transport")
    }
    if error is CancellationError {
      return CourierError(
        kind: .cancelled, underlying: error, request: request, attempts: 1, stage: "transport")
    }
    let nsError = error as NSError
    if nsError.domain == NSURLErrorDomain,
      let code = URLError.Code(rawValue: nsError.code) as URLError.Code?
    {
      return courierError(for: URLError(code), request: request)
    }
    var wrapped = CourierError(error, request: request, stage: "transport")
    wrapped.attempts = 1
    return wrapped
  }
}
