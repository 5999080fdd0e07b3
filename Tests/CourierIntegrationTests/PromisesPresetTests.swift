import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Promises of the Middleware and Transports articles (Sources/Courier/Courier.docc) about
/// the preset's chain and URLSession's defaults that no other test held (see
/// `Docs/Promises.md`).
@Suite("Promises: the standard preset and URLSession's defaults", .timeLimit(.minutes(5)))
struct PromisesPresetTests {
  /// `lines` numbered `1.`, `2.`…, without the reachability line where the process has no
  /// system path monitor (the preset then leaves it out), then `transport`.
  static func numbered(_ lines: [String], transport: String) -> String {
    let kept =
      SharedPathMonitor.system == nil
      ? lines.filter { !$0.hasPrefix("ReachabilityMiddleware") } : lines
    return (kept.enumerated().map { "\($0 + 1). \($1)" } + ["→ " + transport])
      .joined(separator: "\n")
  }

  /// The Middleware article's example: the preset with a 10 s / 30 s timeout and basic logging.
  static func readmeClient(transport: (any Transport)? = nil) -> Client {
    let configure: (inout StandardMiddleware) -> Void = {
      $0.timeout = TimeoutMiddleware(attempt: .seconds(10), overall: .seconds(30))
      $0.logging?.level = .basic
    }
    let base = URL(string: "https://api.example.com/v1/")
    guard let transport else { return Client.standard(baseURL: base, configure: configure) }
    return Client.standard(baseURL: base, transport: transport, configure: configure)
  }

  static let retryLine =
    "RetryMiddleware(3 attempts; backoff 500 ms × 2, full jitter, cap 30 s; Retry-After up to "
    + "60 s; statuses 408, 429, 500, 502, 503, 504; budget 10 + 20 % of requests per 10 s)"
  static let loggingLine =
    "LoggingMiddleware(basic; sink StandardErrorLogSink; redaction: 6 headers, 11 query "
    + "parameters, 7 body keys; text bodies up to 4 KiB)"
  static let validationLine =
    "ResponseValidation(status and envelope checks of the response pipeline)"
  static let gzipLine =
    "GzipMiddleware(compress requests: off (≥ 1 KiB when on); decode: gzip, deflate; limit "
    + "32 MiB, ratio 100×"
  /// That client's middleware lines, the same over every transport.
  static let readmeMiddlewareLines = [
    "HeadersMiddleware(defaults: User-Agent, Accept, Accept-Encoding; providers: none)",
    "RequestIDMiddleware(traceparent: off, X-Request-ID: off)",
    retryLine,
    "ReachabilityMiddleware(inform; probe: off)",
    "TimeoutMiddleware(attempt 10 s; overall 30 s)",
    loggingLine,
    validationLine,
    gzipLine + ")",
  ]

  #if canImport(FoundationNetworking)
    @Test("the Middleware article's chain description of the preset on Linux, line for line")
    func readmeChainOnLinux() {
      let client = Self.readmeClient()
      #expect(
        client.chainDescription
          == Self.numbered(
            Self.readmeMiddlewareLines,
            transport:
              "CurlTransport(HTTP/1.1; 16 connections per host; body limit 32 MiB; decoding: none)"
          ))
    }
  #endif

  @Test("over URLSessionTransport: its settings in the transport's line")
  func readmeChainOverURLSession() {
    let transport = URLSessionTransport()
    defer { transport.shutdown() }
    let client = Self.readmeClient(transport: transport)
    #expect(
      client.chainDescription
        == Self.numbered(
          Self.readmeMiddlewareLines,
          transport:
            "URLSessionTransport(cookies: off; cache: off; idle timeout 60 s; 6 connections per host)"
        ))
  }

  @Test("URLSessionTransport's defaults: no cache, no cookie jar, 32 MiB bodies, 10 redirects")
  func urlSessionDefaults() {
    let configuration = URLSessionTransport.defaultConfiguration
    #expect(configuration.urlCache == nil)
    #expect(configuration.httpCookieStorage == nil)
    #expect(configuration.httpShouldSetCookies == false)
    #expect(configuration.httpCookieAcceptPolicy == .never)
    let transport = URLSessionTransport()
    defer { transport.shutdown() }
    #expect(transport.maximumResponseBodySize == 32 * 1024 * 1024)
    let original = Request(url: URL(string: "https://a.test/0")!)
    let visited = (0...10).map {
      (method: HTTPMethod.get, url: URL(string: "https://a.test/\($0)")!)
    }
    #expect(
      throws: CourierError.self,
      "the 11th hop fails under the transport's default policy"
    ) {
      try transport.redirectPolicy.decide(
        original: original, previous: original, status: 302,
        location: URL(string: "https://a.test/11")!, visited: visited)
    }
  }
}
