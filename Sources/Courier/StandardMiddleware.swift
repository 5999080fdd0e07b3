import Foundation

/// The standard middleware of ``Client/standard(baseURL:transport:pipeline:encoder:decoder:reasons:locale:observers:tracer:configure:)``,
/// each configurable or removable, in the order they run.
///
/// Outermost first, and why:
///
/// 1. ``headers`` — default headers and providers, once per logical request.
/// 2. ``auth`` (off until you set one) — adds the credential; refreshes once on a 401 and
///    resends, so it wraps everything that may fail with 401.
/// 3. ``requestID`` — one trace id for the logical request, the same on every retry, in logs
///    and errors; sent as `traceparent` only when you turn it on (see ``requestID``).
/// 4. ``perRequest`` — your middleware that should run once per logical request.
/// 5. ``retry`` — loops everything below it.
/// 6. ``circuitBreaker`` (off until you set one) — counts every attempt's outcome per host
///    and fails requests fast while a host's circuit is open; inside retry, which never
///    retries such a failure, and outside reachability and timeout, so a timed-out attempt
///    counts and one failed by an absent network does not.
/// 7. ``reachability`` — on every attempt: reports a failure that an absent network explains
///    as `notReachable` (and, in the modes that hold requests back, a wait for the network
///    does not use up an attempt's timeout, because it is outside the timeout).
/// 8. ``timeout`` — per attempt, plus the overall deadline that retry respects.
/// 9. ``perAttempt`` — your middleware that should run for every attempt.
/// 10. ``logging`` — each attempt as it goes to the wire, with plain (decoded) bodies.
/// 11. `ResponseValidation` — the response pipeline's checks (status, envelope, your stages),
///     on the decoded body; every middleware above sees a rejected response as a thrown
///     error, which is how retry acts on a 503 and auth on a 401. Always present; placed
///     higher, just outside the first middleware of yours that decodes response bodies
///     (`decodesResponseBodies`), when there is one, and only where you put it when you list
///     one in ``perRequest`` or ``perAttempt``.
/// 12. ``gzip`` — next to the wire: compresses request bodies (when enabled) and decodes
///     responses before anything above sees them.
///
/// Then the transport sends the attempt; decoding the endpoint's value happens after the
/// chain, in ``Client``.
///
/// Set a member to `nil` to remove it, or replace it:
///
/// ```swift
/// import Courier
///
/// let client = Client.standard(baseURL: URL(string: "https://api.example.com/v1/")!) {
///   $0.retry = RetryMiddleware(policy: RetryPolicy(maximumAttempts: 5))
///   $0.timeout = TimeoutMiddleware(attempt: .seconds(10), overall: .seconds(30))
///   $0.logging?.level = .basic
///   $0.reachability = nil
/// }
/// print(client.chainDescription)
/// ```
public struct StandardMiddleware: Sendable {
  /// Default: ``HeadersMiddleware/standardDefaults`` (`User-Agent: Courier/…`,
  /// `Accept: application/json`).
  public var headers: HeadersMiddleware? = HeadersMiddleware()
  /// Default: none. Set an ``AuthMiddleware`` with your ``CredentialProvider``.
  public var auth: AuthMiddleware?
  /// Default: a trace id per logical request, recorded for logging and errors but not sent
  /// (no `traceparent`, no `X-Request-ID`), as AsyncHTTPClient, Alamofire and OkHttp send no
  /// trace header unless asked. Sending it adds a 68-byte header line, built afresh, to every
  /// request; turn it on where your servers read it: `$0.requestID?.sendsTraceparent = true`.
  public var requestID: RequestIDMiddleware? = RequestIDMiddleware(sendsTraceparent: false)
  /// Your middleware, run once per logical request (outside retry), in order. Default: none.
  public var perRequest: [any Middleware] = []
  /// Default: ``RetryPolicy/standard`` (3 attempts, 0.5 s × 2 full-jitter backoff capped at
  /// 30 s, `Retry-After` up to 60 s) with a retry budget of 10 retries plus 20 % of requests
  /// per 10 s.
  public var retry: RetryMiddleware? = RetryMiddleware()
  /// Default: none. A ``CircuitBreakerMiddleware`` turns a host's failures into failing fast
  /// for every request to it, for a while; whether that helps depends on the traffic and the
  /// backend (an app with one backend would rather retry), so it is yours to set.
  public var circuitBreaker: CircuitBreakerMiddleware?
  /// Default: ``ReachabilityMiddleware/OfflinePolicy/inform`` over the process's
  /// ``SharedPathMonitor`` — every request is sent, and one that fails as an absent network
  /// explains (cannot find host, cannot connect, connection lost, timed out before
  /// connecting) while the monitor says the path is unsatisfied (for a host name: more than
  /// "no default route") fails with `notReachable` ("You seem to be offline…"), the
  /// attempt's error underneath, and is not retried. It
  /// never refuses a request: the monitor's "is there a default route" is wrong on networks
  /// a server meets (a subnet without a default route, policy routing, a namespace, a proxy)
  /// and in offline sandboxes where tests run over `StubTransport`, whose answers it never
  /// touches. `nil` where the system monitor could not start. For an app on a device that
  /// should refuse at once while offline, set
  /// `$0.reachability?.whenOffline = .failFast`; for a batch job that should pause while the
  /// link is down, `.wait(upTo:)` (see ``ReachabilityMiddleware`` for what each refuses).
  public var reachability: ReachabilityMiddleware? = SharedPathMonitor.system.map {
    ReachabilityMiddleware(monitor: $0, whenOffline: .inform)
  }
  /// Default: 30 s per attempt, 60 s overall, ended by Courier's timer and handed to the
  /// transport as `Request.timeout` too.
  public var timeout: TimeoutMiddleware? = TimeoutMiddleware()
  /// Your middleware, run for every attempt (inside retry and timeout), in order. Default:
  /// none.
  public var perAttempt: [any Middleware] = []
  /// Default: level ``LoggingMiddleware/Level/none`` into a ``StandardErrorLogSink``, with
  /// ``Redaction/standard``: set `logging?.level = .basic` to see one line per attempt.
  public var logging: LoggingMiddleware? = LoggingMiddleware(level: .none)
  /// Default: decode gzip and deflate responses within 32 MiB and 100×; compress request
  /// bodies only for endpoints that opt in (`Endpoint.compressRequestBody()`).
  public var gzip: GzipMiddleware? = GzipMiddleware()

  /// The standard middleware with their defaults.
  public init() {}

  /// The middleware in the order a request meets them, outermost first, without the ones set
  /// to `nil`, with the response checks (`ResponseValidation`) in their place: just outside
  /// gzip, or just outside the first middleware of yours that decodes response bodies; none
  /// more when yours list one.
  public var middleware: [any Middleware] {
    var chain: [any Middleware] = []
    if var headers {
      // gzip's `Accept-Encoding` as a default: on the list HeadersMiddleware hands every
      // request without headers of its own, not on a copy gzip makes per request.
      if let gzip, gzip.responseDecompression.isEnabled, gzip.addsAcceptEncoding,
        !headers.defaults.contains(.acceptEncoding)
      {
        headers.defaults.set(.acceptEncoding, trustedValue: GzipMiddleware.acceptEncoding)
      }
      chain.append(headers)
    }
    if let auth { chain.append(auth) }
    if let requestID { chain.append(requestID) }
    chain += perRequest
    if let retry { chain.append(retry) }
    if let circuitBreaker { chain.append(circuitBreaker) }
    if let reachability { chain.append(reachability) }
    if let timeout { chain.append(timeout) }
    chain += perAttempt
    if let logging { chain.append(logging) }
    // The checks read decoded bytes: just outside gzip, or outside a middleware of yours that
    // decodes response bodies, when one comes first; where you listed them, if you did.
    if !chain.contains(where: { $0 is ResponseValidation }) {
      let checks = chain.firstIndex { $0.decodesResponseBodies } ?? chain.count
      chain.insert(ResponseValidation(), at: checks)
    }
    if let gzip { chain.append(gzip) }
    return chain
  }
}

extension Client {
  /// A client with Courier's standard middleware: headers, (auth,) request id, retry,
  /// reachability, timeout, logging, the response checks and gzip, in that order (see ``StandardMiddleware``
  /// for why), over `transport`.
  ///
  /// ```swift
  /// import Courier
  ///
  /// struct Weather: Decodable, Sendable { let temperature: Double }
  ///
  /// func forecast() async throws -> Weather {
  ///   let client = Client.standard(baseURL: URL(string: "https://api.example.com/")!)
  ///   return try await client.send(Endpoint<Weather>(.get, "weather").query("q", "Beijing"))
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - baseURL: The URL relative endpoint paths are joined to.
  ///   - transport: Default: ``standardTransport()``, a new ``CurlTransport`` on Linux and a
  ///     new ``URLSessionTransport`` on Apple platforms. Pass one yourself to choose.
  ///   - pipeline: Default ``ResponsePipeline/standard`` (accept 2xx).
  ///   - encoder: For JSON request bodies.
  ///   - decoder: For JSON responses.
  ///   - reasons: Error texts; default ``ReasonCatalog/standard``.
  ///   - locale: The language of reasons; default: the best match for the process.
  ///   - observers: Hear every request's events, such as a ``MetricsObserver``; default none.
  ///   - tracer: Records a span per request and per attempt and sends each attempt's
  ///     `traceparent` (``RequestTracer``); default none.
  ///   - configure: Changes the middleware before the client is built.
  public static func standard(
    baseURL: URL? = nil,
    transport: any Transport = Client.standardTransport(),
    pipeline: ResponsePipeline = .standard,
    encoder: JSONEncoder = JSONEncoder(),
    decoder: JSONDecoder = JSONDecoder(),
    reasons: ReasonCatalog = .standard,
    locale: String? = nil,
    observers: [any ClientObserver] = [],
    tracer: (any RequestTracer)? = nil,
    configure: (inout StandardMiddleware) -> Void = { _ in }
  ) -> Client {
    var standard = StandardMiddleware()
    configure(&standard)
    return Client(
      baseURL: baseURL, transport: transport, middleware: standard.middleware,
      pipeline: pipeline, encoder: encoder, decoder: decoder, reasons: reasons, locale: locale,
      observers: observers, tracer: tracer)
  }

  /// The transport ``standard(baseURL:transport:pipeline:encoder:decoder:reasons:locale:observers:tracer:configure:)``
  /// sends with when you pass none: a new ``CurlTransport`` (``CurlTransport/Configuration/standard``)
  /// where `URLSession` is FoundationNetworking's wrapper around libcurl (Linux), a new
  /// ``URLSessionTransport`` (no cookies, no cache) elsewhere.
  ///
  /// Why libcurl directly on Linux:
  /// - **No crash on a hostile reply.** FoundationNetworking stops the process
  ///   (`fatalError`) on a chunked response with trailer fields and on a response head cut off
  ///   before its blank line, before any callback Courier could catch; `CurlTransport`
  ///   reports both as ``CourierError``s. A default should survive any server.
  /// - **A fraction of the CPU per request**, and several times the throughput under
  ///   concurrency (<doc:ChoosingATransport>; the figures are in Docs/Benchmarks.md).
  /// - **The same behaviour otherwise**: no cookie jar and no cache, the same redirect rules,
  ///   proxies from the environment, the system's trust store, response bodies limited to
  ///   32 MiB; compressed responses are decoded by ``GzipMiddleware`` within its limits
  ///   instead of by Foundation without them. One difference: HTTP/1.1 with up to 16
  ///   connections per host, where URLSession negotiates HTTP/2 over TLS; set
  ///   ``CurlTransport/Configuration/httpVersion`` to ``CurlTransport/HTTPVersion/http2`` on a
  ///   transport you pass in to have it.
  ///
  /// Each call makes a new transport with event-loop threads of its own, stopped when the last
  /// client using it is gone (or at ``CurlTransport/shutdown()``): make one client and keep it.
  ///
  /// ```swift
  /// // The platform's choice:
  /// let client = Client.standard(baseURL: URL(string: "https://api.example.com/")!)
  /// // URLSession on Linux too, for its configuration objects or cookie storage:
  /// let onURLSession = Client.standard(
  ///   baseURL: URL(string: "https://api.example.com/")!, transport: URLSessionTransport())
  /// ```
  public static func standardTransport() -> any Transport {
    #if canImport(FoundationNetworking)
      CurlTransport()
    #else
      URLSessionTransport()
    #endif
  }
}
