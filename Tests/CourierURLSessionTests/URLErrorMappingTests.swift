import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The `URLError`s URLSession on Linux reports for broken replies (found by the fault
/// matrix), with libcurl's message as their description.
@Suite("URLErrorMapping", .timeLimit(.minutes(5)))
struct URLErrorMappingTests {
  private func error(_ code: URLError.Code, _ message: String) -> URLError {
    URLError(code, userInfo: [NSLocalizedDescriptionKey: message])
  }

  @Test("a status line that is not HTTP is badResponse, not invalidRequest")
  func malformedStatusLine() {
    let status = error(.unsupportedURL, "Unsupported response code in HTTP response")
    #expect(URLErrorMapping.kind(for: status) == .badResponse)
    let http09 = error(.unsupportedURL, "Received HTTP/0.9 when not allowed")
    #expect(URLErrorMapping.kind(for: http09) == .badResponse)
    #expect(URLErrorMapping.kind(for: error(.unsupportedURL, "unsupported URL")) == .invalidRequest)
  }

  @Test("a broken chunk-size line is badResponse, not transport")
  func brokenChunking() {
    let chunk = error(.unknown, "Illegal or missing hexadecimal sequence in chunked-encoding")
    #expect(URLErrorMapping.kind(for: chunk) == .badResponse)
    #expect(URLErrorMapping.kind(for: error(.unknown, "something else")) == .transport)
  }

  @Test("a Content-Length that is not a number, and a header line over 100 KB, are badResponse")
  func rejectedResponseHead() {
    #expect(
      URLErrorMapping.kind(for: error(.unknown, "Invalid Content-Length: value")) == .badResponse)
    // libcurl 7.88's words for a header line over CURL_MAX_HTTP_HEADER.
    #expect(URLErrorMapping.kind(for: error(.unknown, "Out of memory")) == .badResponse)
    #expect(URLErrorMapping.kind(for: error(.unknown, "Out of memory soon")) == .transport)
    // URLSession's own parser refusing `HTTP/1.1 200` (no reason phrase).
    #expect(URLErrorMapping.kind(for: error(.unknown, "Failed writing header")) == .badResponse)
    // Measured against a server sending them (libcurl 7.88 through FoundationNetworking).
    let oversized = error(.unknown, "Too large response headers: 307203 > 307200")
    #expect(URLErrorMapping.kind(for: oversized) == .badResponse)
    #expect(URLErrorMapping.kind(for: error(.unknown, "Nul byte in header")) == .badResponse)
    #expect(URLErrorMapping.kind(for: error(.unknown, "Header without colon")) == .badResponse)
  }

  @Test("a Content-Encoding libcurl does not know, or cannot decode, is corruptBody")
  func undecodableBody() {
    let unknown = error(.unknown, "Unrecognized or bad HTTP Content or Transfer-Encoding")
    #expect(URLErrorMapping.kind(for: unknown) == .corruptBody)
    let broken = error(.unknown, "Error while processing content unencoding: invalid stored block")
    #expect(URLErrorMapping.kind(for: broken) == .corruptBody)
    // Bytes after the end of a gzip body, as libcurl's decoder refuses them (see GzipWireTests).
    let trailing = error(.unknown, "Failed writing received data to disk/application")
    #expect(URLErrorMapping.kind(for: trailing) == .corruptBody)
  }

  @Test("a failed TLS handshake is secureConnectionFailed, not transport")
  func tlsFailures() {
    // As URLSession on Linux reported them against httpbin over TLS with a certificate from a
    // private CA, by another name, and against a server that does not speak TLS.
    for message in [
      "SSL certificate problem: unable to get local issuer certificate",
      "SSL certificate problem: certificate has expired",
      "SSL: no alternative certificate subject name matches target host name 'localhost'",
      "OpenSSL SSL_connect: SSL_ERROR_SYSCALL in connection to 127.0.0.1:18556 ",
      "error:0A00010B:SSL routines::wrong version number",
    ] {
      #expect(URLErrorMapping.kind(for: error(.unknown, message)) == .secureConnectionFailed)
    }
    #expect(URLErrorMapping.kind(for: error(.unknown, "SSL is mentioned here")) == .transport)
  }

  @Test("an empty reply is connectionLost, as CurlTransport reports it")
  func emptyReply() {
    let empty = error(.badServerResponse, "Empty reply from server")
    #expect(URLErrorMapping.kind(for: empty) == .connectionLost)
    #expect(URLErrorMapping.kind(for: error(.badServerResponse, "bad")) == .badResponse)
  }
}
