import CourierCore
import Foundation

/// Signs every request with HMAC-SHA256, the scheme many app backends use (common in China):
/// the server recomputes the signature and rejects a request that was changed, replayed
/// long after, or sent without the app's secret.
///
/// The signed text is five lines joined with `\n`:
///
/// ```
/// METHOD
/// /path?query          (percent-encoded, exactly as sent)
/// timestamp            (Unix seconds)
/// nonce
/// hex(SHA-256(body))
/// ```
///
/// and the request gets `X-App-Key`, `X-Timestamp`, `X-Nonce` and
/// `X-Signature: hex(HMAC-SHA256(secret, text))`. File bodies are hashed in 64 KiB chunks,
/// so a large upload is never read into memory at once.
///
/// Put it where it sees each request as it goes out: in `perAttempt` of `Client.standard`
/// (every retry gets a fresh timestamp and nonce, which servers that reject replayed nonces
/// need), or anywhere in a hand-made chain. The clock and the nonce are injected, so tests
/// can assert an exact signature.
public struct SigningMiddleware: Middleware {
  /// The key id sent as `X-App-Key`.
  public var appKey: String
  /// The shared secret; never sent.
  public var secret: [UInt8]
  /// The current time in Unix seconds.
  public var timestamp: @Sendable () -> Int
  /// A fresh nonce per request.
  public var nonce: @Sendable () -> String

  /// Creates a signer.
  ///
  /// - Parameters:
  ///   - appKey: Sent as `X-App-Key`, so the server can find the secret.
  ///   - secret: The shared secret.
  ///   - timestamp: The time to sign; the system clock by default.
  ///   - nonce: A unique value per request; 128 random bits in hex by default.
  public init(
    appKey: String, secret: some Sequence<UInt8>,
    timestamp: @escaping @Sendable () -> Int = { Int(Date().timeIntervalSince1970) },
    nonce: @escaping @Sendable () -> String = { SigningMiddleware.randomNonce() }
  ) {
    self.appKey = appKey
    self.secret = Array(secret)
    self.timestamp = timestamp
    self.nonce = nonce
  }

  /// 16 random bytes from the system's generator, as hex.
  public static func randomNonce() -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }.hexString
  }

  /// The text that is signed, for servers and tests to rebuild.
  public static func canonicalText(
    method: String, pathAndQuery: String, timestamp: Int, nonce: String, bodyHash: String
  ) -> String {
    [method, pathAndQuery, String(timestamp), nonce, bodyHash].joined(separator: "\n")
  }

  /// The percent-encoded path and query of `url`, as they go on the wire.
  public static func pathAndQuery(of url: URL) -> String {
    let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
    let path = components?.percentEncodedPath ?? url.path
    let query = components?.percentEncodedQuery.map { "?" + $0 } ?? ""
    return (path.isEmpty ? "/" : path) + query
  }

  /// The hex SHA-256 of a request body; a file body is read in chunks.
  ///
  /// - Throws: When a file body cannot be read.
  public static func bodyHash(_ body: RequestBody) throws -> String {
    if let url = body.fileURL {
      let handle = try FileHandle(forReadingFrom: url)
      defer { try? handle.close() }
      var hasher = SHA256()
      while let chunk = try handle.read(upToCount: 64 * 1024), !chunk.isEmpty {
        hasher.update(chunk)
      }
      return hasher.finalize().hexString
    }
    return SHA256.hash(body.data ?? Data()).hexString
  }

  /// Adds the signature headers and sends the request on.
  public func intercept(_ request: Request, next: Next) async throws -> Response {
    var request = request
    let time = timestamp()
    let once = nonce()
    let text = Self.canonicalText(
      method: request.method.rawValue, pathAndQuery: Self.pathAndQuery(of: request.url),
      timestamp: time, nonce: once, bodyHash: try Self.bodyHash(request.body))
    let signature = HMACSHA256.authenticationCode(for: Array(text.utf8), key: secret).hexString
    try request.headers.set("X-App-Key", appKey)
    try request.headers.set("X-Timestamp", String(time))
    try request.headers.set("X-Nonce", once)
    try request.headers.set("X-Signature", signature)
    return try await next(request)
  }
}
