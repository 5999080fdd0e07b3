import CourierCore
import Foundation
import Synchronization

/// Serves a ``Cassette`` recorded by ``RecordingTransport``: each request gets the recorded
/// response (or error) of the first unused interaction that matches it, so a test runs
/// offline against real answers.
///
/// Before it looks for a match, it checks a request as the wire transports do (a file body
/// must be a readable regular file, a caller's `Content-Length` must be the body's length, a
/// `Transfer-Encoding` is refused): such a request fails with
/// ``CourierError/Kind/invalidRequest``, as it would in production, whatever the cassette
/// holds.
///
/// A response is served as recorded: its header fields with their bytes, and its body as the
/// cassette holds it, which is redacted (`"token":"***"`, `Set-Cookie: ***`) and decoded from
/// gzip or deflate (see ``RecordingTransport``), with a `Content-Length` of that body.
///
/// A request is compared after the same redaction the recording used, so a live
/// `?token=…` matches the recorded `?token=***`. What must match is a ``Matching`` value:
/// method and URL by default; optionally only the path and query (when the host differs
/// between recording and replay, as with a `MockServer` port), named headers, and the body.
/// When nothing matches, the request fails with kind ``CourierError/Kind/transport`` and a
/// `debugDescription` that names the closest recorded request and what differs.
///
/// ```swift
/// import Courier
/// import CourierTesting
///
/// func replay(cassette: URL) async throws {
///   let replay = try ReplayTransport(cassette: cassette, matching: .methodAndURL)
///   let client = Client(baseURL: URL(string: "https://api.example.com/")!, transport: replay)
///   let response = try await client.send(Request(url: URL(string: "https://api.example.com/user/7")!))
///   print(response.status)
/// }
/// ```
public final class ReplayTransport: Transport {
  /// What a request must share with a recorded one to be served its answer.
  public struct Matching: Sendable {
    /// Compare the whole URL (`true`) or only its path and query (`false`).
    public var wholeURL: Bool
    /// Header names whose values must be equal too.
    public var headers: [String]
    /// Whether the bodies must be equal too: the same bytes, or, when the live request's
    /// `Content-Type` names JSON, the same JSON document (`JSONEncoder` writes an object's
    /// members in no set order, so one value encodes to different bytes from run to run).
    public var body: Bool

    /// Creates a matching rule.
    public init(wholeURL: Bool = true, headers: [String] = [], body: Bool = false) {
      self.wholeURL = wholeURL
      self.headers = headers
      self.body = body
    }

    /// Method and the whole URL (the default).
    public static let methodAndURL = Matching()
    /// Method, path and query: the scheme, host and port may differ.
    public static let methodPathAndQuery = Matching(wholeURL: false)
    /// Method, URL and body.
    public static let methodURLAndBody = Matching(body: true)
  }

  private let cassette: Cassette
  private let matching: Matching
  private let redaction: Redaction
  private let repeatsLast: Bool
  private let used: Mutex<[Bool]>

  /// Serves `cassette`.
  ///
  /// - Parameters:
  ///   - matching: Default ``Matching/methodAndURL``.
  ///   - redaction: The rules the cassette was recorded with; default ``Redaction/standard``.
  ///   - repeatsLast: When every matching interaction was served already, serve the last
  ///     one again (`true`) or fail (`false`, the default: a test then sees an unexpected
  ///     extra request).
  public init(
    cassette: Cassette, matching: Matching = .methodAndURL, redaction: Redaction = .standard,
    repeatsLast: Bool = false
  ) {
    self.cassette = cassette
    self.matching = matching
    self.redaction = redaction
    self.repeatsLast = repeatsLast
    self.used = Mutex(Array(repeating: false, count: cassette.interactions.count))
  }

  /// Serves the cassette file at `cassette`; throws when it cannot be read.
  public convenience init(
    cassette file: URL, matching: Matching = .methodAndURL, redaction: Redaction = .standard,
    repeatsLast: Bool = false
  ) throws(CourierError) {
    self.init(
      cassette: try Cassette(contentsOf: file), matching: matching, redaction: redaction,
      repeatsLast: repeatsLast)
  }

  /// How many interactions have not been served yet.
  public var unusedCount: Int { used.withLock { $0.count { !$0 } } }

  /// The recorded answer to `request`.
  public func send(_ request: Request) async throws -> Response {
    try RequestCancellation.checkCancellation()
    // What the wire transports refuse before sending is refused here too, recorded or not:
    // a file body that is not a readable regular file, a caller's Content-Length that is not
    // the body's, any Transfer-Encoding.
    try RequestFraming.check(request)
    let live = Cassette.RecordedMessage(request, redaction: redaction)
    let candidates = cassette.interactions.indices.filter {
      mismatch(live, cassette.interactions[$0].request) == nil
    }
    let chosen = used.withLock { used -> Int? in
      if let index = candidates.first(where: { !used[$0] }) {
        used[index] = true
        return index
      }
      return repeatsLast ? candidates.last : nil
    }
    guard let chosen else { throw noMatch(for: live, request, matched: candidates.count) }
    let interaction = cassette.interactions[chosen]
    if let recorded = interaction.response {
      // Received fields, as a wire transport builds them: their bytes are the server's (a
      // non-ASCII `filename` stays), not held to the rules for fields a caller sends.
      var headers = HTTPHeaders(
        received: recorded.headers.lazy.filter { $0.count == 2 }.map { ($0[0], $0[1]) })
      let body = recorded.body?.data ?? Data()
      // The body served is the recorded one, redacted: its length frames it, as on the wire
      // (a file recorded before cassettes wrote the redacted length holds the live one).
      if !body.isEmpty, !headers.contains(.contentEncoding),
        let length = headers[.contentLength], length != String(body.count)
      {
        try? headers.set(.contentLength, String(body.count))
      }
      return Response(status: recorded.status, headers: headers, body: body, request: request)
    }
    let failure = interaction.error ?? Cassette.RecordedError(kind: "transport", message: "")
    throw CourierError(
      kind: CourierError.Kind(failure.kind),
      debugMessage: "replayed from cassette entry \(chosen + 1): \(failure.message)",
      request: request, attempts: 1, stage: "transport")
  }

  /// Cancellation is checked when a request arrives; answers are immediate.
  public var observesRequestCancellation: Bool { true }

  // MARK: Matching

  /// What differs between `live` and `recorded`, or `nil` when they match.
  private func mismatch(
    _ live: Cassette.RecordedMessage, _ recorded: Cassette.RecordedMessage
  )
    -> String?
  {
    if live.method != recorded.method { return "the method differs (\(recorded.method))" }
    if comparable(live.url) != comparable(recorded.url) { return "the URL differs" }
    for name in matching.headers {
      if value(of: name, in: live) != value(of: name, in: recorded) {
        return "header \(name) differs"
      }
    }
    if matching.body, !Self.sameBody(live, recorded) { return "the body differs" }
    return nil
  }

  /// Whether two bodies are the same bytes, or the same JSON document when `live` says it is
  /// JSON: members in any order, white space aside.
  private static func sameBody(
    _ live: Cassette.RecordedMessage, _ recorded: Cassette.RecordedMessage
  ) -> Bool {
    let (left, right) = (live.body?.data ?? Data(), recorded.body?.data ?? Data())
    if left == right { return true }
    let type = live.headers.first { $0.count == 2 && $0[0].lowercased() == "content-type" }?[1]
    guard type?.lowercased().contains("json") == true,
      let left = canonicalJSON(left), let right = canonicalJSON(right)
    else { return false }
    return left == right
  }

  /// `data` parsed as JSON and written again with sorted keys, or `nil` when it is not JSON.
  private static func canonicalJSON(_ data: Data) -> Data? {
    guard let value = try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)
    else { return nil }
    return try? JSONSerialization.data(
      withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])
  }

  private func comparable(_ url: String) -> String {
    guard !matching.wholeURL, let components = URLComponents(string: url) else { return url }
    return components.percentEncodedPath
      + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
  }

  private func value(of name: String, in message: Cassette.RecordedMessage) -> String? {
    message.headers.first { $0.count == 2 && $0[0].lowercased() == name.lowercased() }?[1]
  }

  private func noMatch(
    for live: Cassette.RecordedMessage, _ request: Request, matched: Int
  )
    -> CourierError
  {
    var message =
      "ReplayTransport: no unused recorded interaction matches \(live.method) \(live.url)"
    if matched > 0 {
      message += "; all \(matched) that match were replayed already (repeatsLast is off)"
    } else if let closest = closestInteraction(to: live) {
      let recorded = cassette.interactions[closest].request
      let reason = mismatch(live, recorded) ?? "it matches"
      message +=
        "; the closest recorded is \(recorded.method) \(recorded.url) (cassette entry "
        + "\(closest + 1)): \(reason)"
    } else {
      message += "; the cassette is empty"
    }
    return CourierError(
      kind: .transport, debugMessage: message, request: request, attempts: 1, stage: "replay")
  }

  /// The recorded request most like `live`: same method first, then the smallest edit
  /// distance between the compared URLs.
  private func closestInteraction(to live: Cassette.RecordedMessage) -> Int? {
    let target = Array(comparable(live.url).utf8)
    return cassette.interactions.indices.min { left, right in
      score(cassette.interactions[left].request, target, live.method)
        < score(cassette.interactions[right].request, target, live.method)
    }
  }

  private func score(
    _ recorded: Cassette.RecordedMessage, _ target: [UInt8], _ method: String
  )
    -> Int
  {
    let distance = Self.editDistance(Array(comparable(recorded.url).utf8), target)
    return distance + (recorded.method == method ? 0 : 10_000)
  }

  /// Levenshtein distance, on at most the first 512 bytes of each side.
  static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
    let a = a.prefix(512)
    let b = Array(b.prefix(512))
    var previous = Array(0...b.count)
    var current = Array(repeating: 0, count: b.count + 1)
    for (i, byte) in a.enumerated() {
      current[0] = i + 1
      for j in 0..<b.count {
        current[j + 1] = Swift.min(
          previous[j + 1] + 1, current[j] + 1, previous[j] + (byte == b[j] ? 0 : 1))
      }
      swap(&previous, &current)
    }
    return previous[b.count]
  }
}
