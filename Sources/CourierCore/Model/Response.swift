import Foundation

/// An HTTP response as it comes back through the middleware chain.
public struct Response: Sendable {
  /// The status code, for example `200`.
  public var status: Int { didSet { validated = nil } }
  /// The header fields as received.
  public var headers: HTTPHeaders { didSet { validated = nil } }
  /// The body bytes, after any decoding the transport or a middleware applied.
  public var body: Data { didSet { validated = nil } }
  /// The request as it was finally sent (after every middleware changed it).
  public var request: Request { didSet { validated = nil } }
  /// How many times the request went to a transport to produce this response (1 without
  /// retries). Set by retrying middleware.
  public var attempts: Int
  /// When sending started and how long it took, as measured by the ``Client``.
  public var timings: Timings {
    get { timingsBox?.value ?? Timings() }
    set { timingsBox = TimingsBox(newValue) }
  }
  /// ``timings``, boxed: a response is copied into the frame of every middleware and async
  /// function it passes through, and a frame holds many copies, so its 200 bytes of phases
  /// cost each request in flight kilobytes of memory. `nil` for no timings.
  private var timingsBox: TimingsBox?
  /// Where the transport wrote the body instead of ``body``, for a request with a
  /// ``DownloadAttribute`` answered `2xx`; `nil` otherwise.
  public var downloadedFile: DownloadedFile? { didSet { validated = nil } }
  /// The body as it arrives, for a request with a ``ResponseStreamAttribute`` answered `2xx`
  /// by a transport that streams (``body`` is empty then); `nil` otherwise.
  public var bodyStream: ResponseBodyStream?
  /// What ``ResponseValidation`` found when the response pipeline ran inside the chain, so the
  /// body is scanned once; `nil` when it did not run.
  ///
  /// It is always about this response as it is: setting the status, headers, body, request or
  /// downloaded file — whole or in place — drops it, so a middleware that changes what the
  /// stages read has them run again after the chain. ``attempts`` and ``timings`` leave it:
  /// retrying middleware and the client set them after the checks, and no check reads them to
  /// decide.
  var validated: ValidatedPayload?

  /// Creates a response.
  public init(
    status: Int,
    headers: HTTPHeaders = HTTPHeaders(),
    body: Data = Data(),
    request: Request,
    attempts: Int = 1,
    timings: Timings = Timings()
  ) {
    self.status = status
    self.headers = headers
    self.body = body
    self.request = request
    self.attempts = attempts
    self.timingsBox = timings == Timings() ? nil : TimingsBox(timings)
  }

  /// Whether the status is in `200..<300`.
  public var isSuccess: Bool { (200..<300).contains(status) }

  /// The body decoded as UTF-8, or `nil` when it is not valid UTF-8.
  public var bodyText: String? { String(bytes: body, encoding: .utf8) }

  /// Where the time of a request went, and over what connection.
  ///
  /// ``total`` covers the logical request, every attempt and retry wait included. The phases
  /// are the last attempt's, each the time from that attempt's start to the moment the phase
  /// ended, so they only grow: `nameLookup ≤ connect ≤ tlsHandshake ≤ requestSent ≤
  /// firstByte ≤ bodyComplete`. A phase the attempt did not reach, or that its transport
  /// cannot see, is `nil`; on a reused connection the lookup, connect and handshake phases
  /// are zero or `nil`, and ``connectionReused`` says so.
  public struct Timings: Sendable, Hashable {
    /// The total time from entering the client to the response leaving the chain.
    public var total: Duration?
    /// Until the host name was resolved.
    public var nameLookup: Duration?
    /// Until the TCP connection (or the Unix socket, or the proxy's tunnel) was set up.
    public var connect: Duration?
    /// Until the TLS handshake was done; `nil` without TLS.
    public var tlsHandshake: Duration?
    /// Until the transport was about to send the request: the connection is ready.
    public var requestSent: Duration?
    /// Until the first byte of the response arrived.
    public var firstByte: Duration?
    /// Until the response body was complete (for a streamed body: until its head was in).
    public var bodyComplete: Duration?
    /// Whether the attempt went over a connection an earlier request had opened.
    public var connectionReused: Bool?
    /// The address the attempt connected to, such as `127.0.0.1:8080` or `[::1]:443`.
    public var remoteAddress: String?
    /// The HTTP version the response came in, such as `HTTP/1.1` or `HTTP/2`.
    public var httpVersion: String?

    /// Creates timings.
    public init(
      total: Duration? = nil,
      nameLookup: Duration? = nil,
      connect: Duration? = nil,
      tlsHandshake: Duration? = nil,
      requestSent: Duration? = nil,
      firstByte: Duration? = nil,
      bodyComplete: Duration? = nil,
      connectionReused: Bool? = nil,
      remoteAddress: String? = nil,
      httpVersion: String? = nil
    ) {
      self.total = total
      self.nameLookup = nameLookup
      self.connect = connect
      self.tlsHandshake = tlsHandshake
      self.requestSent = requestSent
      self.firstByte = firstByte
      self.bodyComplete = bodyComplete
      self.connectionReused = connectionReused
      self.remoteAddress = remoteAddress
      self.httpVersion = httpVersion
    }
  }
}

/// ``Response/Timings`` behind a reference, shared by the copies of a response until one of
/// them sets its timings.
private final class TimingsBox: Sendable {
  let value: Response.Timings

  init(_ value: Response.Timings) { self.value = value }
}
