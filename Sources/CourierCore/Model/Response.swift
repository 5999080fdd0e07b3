import Foundation

/// An HTTP response as it comes back through the middleware chain.
public struct Response: Sendable {
  /// The status code, for example `200`.
  public var status: Int
  /// The header fields as received.
  public var headers: HTTPHeaders
  /// The body bytes, after any decoding the transport or a middleware applied.
  public var body: Data
  /// The request as it was finally sent (after every middleware changed it).
  public var request: Request
  /// How many times the request went to a transport to produce this response (1 without
  /// retries). Set by retrying middleware.
  public var attempts: Int
  /// When sending started and how long it took, as measured by the ``Client``.
  public var timings: Timings

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
    self.timings = timings
  }

  /// Whether the status is in `200..<300`.
  public var isSuccess: Bool { (200..<300).contains(status) }

  /// The body decoded as UTF-8, or `nil` when it is not valid UTF-8.
  public var bodyText: String? { String(bytes: body, encoding: .utf8) }

  /// Timing facts about one logical request.
  public struct Timings: Sendable, Hashable {
    /// The total time from entering the client to the response leaving the chain.
    public var total: Duration?

    /// Creates timings.
    public init(total: Duration? = nil) {
      self.total = total
    }
  }
}
