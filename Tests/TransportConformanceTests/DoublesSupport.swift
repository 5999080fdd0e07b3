import Courier
import CourierTesting
import Foundation
import Testing

/// One header field as a side of an exchange saw it: name as written, value as kept.
struct Field: Sendable, Equatable, CustomStringConvertible {
  let name: String
  let value: String

  init(_ name: String, _ value: String) {
    self.name = name
    self.value = value
  }

  var description: String { "\(name): \(value)" }
}

/// One answer, scripted the same way for `MockServer` (what a server sends) and for
/// `StubTransport` (what the stub hands back): status, header fields in order, body.
struct Answer: Sendable {
  var status: Int = 200
  var headers: [Field] = []
  var body = Data()
  /// How long the answer takes to start.
  var delay: Duration = .zero

  static func json(_ text: String, status: Int = 200) -> Answer {
    Answer(
      status: status, headers: [Field("Content-Type", "application/json")], body: Data(text.utf8))
  }

  /// The answer as `MockServer` sends it.
  var mock: MockResponse {
    MockResponse(
      status: status, headers: headers.map { MockHeader(name: $0.name, value: $0.value) },
      body: body, delay: delay)
  }

  /// The answer as a test scripts it in `StubTransport`; header fields as received ones, the
  /// way a transport builds them, so a value may hold any byte a server sends.
  var stub: StubResponse {
    StubResponse(
      status: status, headers: HTTPHeaders(received: headers.map { ($0.name, $0.value) }),
      body: body
    ).delayed(by: delay)
  }
}

/// The answers of one exchange: each route's pattern as `StubTransport` takes it, and the
/// same answer from `MockServer` for the paths the pattern is written as (a literal pattern),
/// or for every path (the only route).
struct Script: Sendable {
  var routes: [(method: HTTPMethod?, pattern: String, answer: Answer)]

  init(_ routes: [(method: HTTPMethod?, pattern: String, answer: Answer)]) {
    self.routes = routes
  }

  /// One route answering every request.
  init(_ answer: Answer, pattern: String = "**") {
    routes = [(nil, pattern, answer)]
  }

  /// The server's answer for a request to the raw (still encoded) `path`.
  func serverAnswer(method: String, path: String) -> MockResponse {
    if routes.count == 1 { return routes[0].answer.mock }
    let literal = routes.first { route in
      "/" + route.pattern == path && (route.method.map { $0.rawValue == method } ?? true)
    }
    return literal?.answer.mock ?? MockResponse(status: 404)
  }
}

/// What the caller saw: the decoded value or the error's kind and status, and the response
/// (the error's response, if any): status, header fields, body.
struct CallerView: Sendable, Equatable, CustomStringConvertible {
  var value: String?
  var error: String?
  var status: Int?
  var headers: [Field] = []
  var body = Data()

  var description: String {
    let text = String(data: body.prefix(120), encoding: .utf8) ?? "\(body.count) bytes"
    return (value.map { "value \($0)" } ?? "error \(error ?? "?")")
      + "; status \(status.map(String.init) ?? "-"); headers \(headers); body \(body.count) "
      + "bytes \(text.debugDescription)"
  }

  init<Value>(_ result: Result<Decoded<Value>, CourierError>, describe: (Value) -> String) {
    switch result {
    case .success(let decoded):
      value = describe(decoded.value)
      capture(decoded.response)
    case .failure(let error):
      self.error = "\(error.kind.name) \(error.status.map(String.init) ?? "-")"
      if let response = error.response { capture(response) }
    }
  }

  private mutating func capture(_ response: Response) {
    status = response.status
    headers = response.headers.map { Field($0.name.rawName, $0.value) }
    body = response.body
  }

  /// `fields` as `HTTPURLResponse` on Linux keeps them: one field per name, repeated values
  /// joined with `", "` (each `Set-Cookie` apart, as `URLSessionTransport` splits them back),
  /// sorted by name, since the order is lost.
  static func asURLSessionKeeps(_ fields: [Field]) -> [Field] {
    var joined: [Field] = []
    for field in fields {
      let name = field.name.lowercased()
      if name != "set-cookie", let index = joined.firstIndex(where: { $0.name == name }) {
        joined[index] = Field(name, joined[index].value + ", " + field.value)
      } else {
        joined.append(Field(name, field.value))
      }
    }
    return joined.enumerated().sorted {
      ($0.element.name, $0.offset) < ($1.element.name, $1.offset)
    }.map(\.element)
  }

  /// The headers without those named in `names` (compared ignoring case).
  func headers(without names: [String]) -> [Field] {
    headers.filter { field in !names.contains { $0.lowercased() == field.name.lowercased() } }
  }
}

/// A request as one side saw it: method, target (path and query, still encoded), header
/// fields and body bytes.
struct Seen: Sendable, Equatable, CustomStringConvertible {
  var method: String
  var target: String
  var headers: [Field]
  var body: Data

  var description: String { "\(method) \(target) \(headers) \(body.count) bytes" }

  init(_ recorded: RecordedRequest) {
    method = recorded.method
    target = recorded.target
    headers = recorded.headers.map { Field($0.name, $0.value) }
    body = recorded.body
  }

  init(_ request: Request) {
    method = request.method.rawValue
    target = Self.target(of: request.url)
    headers = request.headers.map { Field($0.name.rawName, $0.value) }
    if let file = request.body.fileURL {
      body = (try? Data(contentsOf: file)) ?? Data()
    } else {
      body = request.body.data ?? Data()
    }
  }

  init(_ recorded: Cassette.RecordedMessage) {
    method = recorded.method
    target = URL(string: recorded.url).map(Self.target(of:)) ?? recorded.url
    headers = recorded.headers.filter { $0.count == 2 }.map { Field($0[0], $0[1]) }
    body = recorded.body?.data ?? Data()
  }

  /// Whether two bodies are the same bytes, or the same JSON document: each run encodes a
  /// JSON body anew, and `JSONEncoder` does not keep the order of an object's members.
  static func sameBody(_ left: Data, _ right: Data) -> Bool {
    left == right || (canonicalJSON(left).map { $0 == canonicalJSON(right) } ?? false)
  }

  static func canonicalJSON(_ data: Data) -> Data? {
    guard let value = try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)
    else { return nil }
    return try? JSONSerialization.data(
      withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])
  }

  /// `target` as a transport sends it: the path's dot segments removed (RFC 3986 §5.2.4).
  /// The doubles keep a request as the client handed it over.
  static func removingDotSegments(_ target: String) -> String {
    let query = target.firstIndex(of: "?")
    let path = target[..<(query ?? target.endIndex)]
    var kept: [Substring] = []
    for segment in path.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
      switch segment {
      case ".": continue
      case "..": _ = kept.popLast()
      default: kept.append(segment)
      }
    }
    return "/" + kept.joined(separator: "/") + target[(query ?? target.endIndex)...]
  }

  static func target(of url: URL) -> String {
    url.path(percentEncoded: true) + (url.query(percentEncoded: true).map { "?" + $0 } ?? "")
  }

  /// How this view (a double's) differs from `wire`, what the server received: method,
  /// target, body, every header field the double saw (on the wire with the same value; a
  /// redacted `***` stands for any value), and the wire's `Content-Length`, which must be the
  /// body's length when the body is not empty.
  func differences(from wire: Seen) -> [String] {
    var found: [String] = []
    if method != wire.method { found.append("method \(method), the wire \(wire.method)") }
    if Self.removingDotSegments(target) != wire.target {
      found.append("target \(target), the wire \(wire.target)")
    }
    if !Self.sameBody(body, wire.body) {
      found.append("body of \(body.count) bytes, the wire \(wire.body.count) bytes")
    }
    for field in headers {
      let values = wire.headers.filter { $0.name.lowercased() == field.name.lowercased() }
      if !values.contains(where: { $0.value == field.value || field.value == "***" }) {
        found.append("header \(field), the wire \(values)")
      }
    }
    let length = wire.headers.first { $0.name.lowercased() == "content-length" }?.value
    if !wire.body.isEmpty, length != String(wire.body.count) {
      found.append("the wire's Content-Length \(length ?? "nil") for \(wire.body.count) bytes")
    }
    return found
  }
}

/// One exchange run three ways: production (a `Client` over a wire transport, recorded by
/// `RecordingTransport`, against `MockServer`), replay (a `Client` over `ReplayTransport`
/// serving that cassette from its file) and stub (a `Client` over `StubTransport` scripted
/// with the same answers); what the caller saw each way, and what each receiving side saw of
/// the requests.
struct ThreeWays: Sendable {
  var production: CallerView
  var replay: CallerView
  var stub: CallerView
  /// What the server received, in order (redirect hops included).
  var wire: [Seen]
  /// The requests the cassette holds, as recorded.
  var recorded: [Seen]
  /// The cassette production was recorded into, as its file holds it.
  var cassette: Cassette?
  /// What the stub was asked, in order.
  var stubbed: [Seen]

  /// Runs `endpoint` three ways over a wire transport of `kind`, every client with
  /// `middleware`.
  static func run<Value: Sendable>(
    _ kind: TransportKind, _ script: Script,
    middleware: @Sendable () -> [any Middleware] = { [] },
    replayMatching: ReplayTransport.Matching = .methodAndURL,
    describe: @Sendable (Value) -> String = { "\($0)" },
    _ endpoint: Endpoint<Value>
  ) async throws -> ThreeWays {
    let server = try MockServer()
    defer { server.shutdown() }
    server.setDispatcher { script.serverAnswer(method: $0.method, path: $0.path) }
    let underTest = kind.make()
    defer { underTest.shutdown() }
    let file = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-doubles-\(UUID().uuidString).json")
    defer { try? FileManager.default.removeItem(at: file) }

    let recording = RecordingTransport(wrapping: underTest.transport, cassette: file)
    let production = await outcome(
      Client(
        baseURL: server.baseURL, transport: recording, middleware: middleware(), locale: "en"),
      endpoint, describe)
    var wire: [Seen] = []
    while wire.count < server.requestCount { wire.append(Seen(try await server.takeRequest())) }

    let cassette = try? Cassette(contentsOf: file)
    let recorded = cassette?.interactions.map { Seen($0.request) } ?? []
    let replay: CallerView
    if FileManager.default.fileExists(atPath: file.path) {
      let transport = try ReplayTransport(cassette: file, matching: replayMatching)
      replay = await outcome(
        Client(
          baseURL: server.baseURL, transport: transport, middleware: middleware(), locale: "en"),
        endpoint, describe)
    } else {
      // Nothing reached the transport (the client refused the request), so nothing was
      // recorded: an empty cassette answers nothing, as production sent nothing.
      replay = await outcome(
        Client(
          baseURL: server.baseURL, transport: ReplayTransport(cassette: Cassette()),
          middleware: middleware(), locale: "en"),
        endpoint, describe)
    }

    let stub = StubTransport()
    for route in script.routes { stub.on(route.method, route.pattern, route.answer.stub) }
    let stubbed = await outcome(
      Client(baseURL: server.baseURL, transport: stub, middleware: middleware(), locale: "en"),
      endpoint, describe)
    return ThreeWays(
      production: production, replay: replay, stub: stubbed, wire: wire, recorded: recorded,
      cassette: cassette, stubbed: stub.requests.map(Seen.init))
  }

  private static func outcome<Value: Sendable>(
    _ client: Client, _ endpoint: Endpoint<Value>, _ describe: (Value) -> String
  ) async -> CallerView {
    do {
      return CallerView(
        Result<Decoded<Value>, CourierError>.success(try await client.response(for: endpoint)),
        describe: describe)
    } catch {
      return CallerView(Result<Decoded<Value>, CourierError>.failure(error), describe: describe)
    }
  }

  /// Every way the doubles differ from production: what the caller saw, what the stub and
  /// the cassette saw of each request the server received. Header fields named in
  /// `ignoringHeaders` are left out of the comparison of the responses.
  ///
  /// Over `URLSessionTransport` the response's fields are compared as that transport keeps
  /// them (``CallerView/asURLSessionKeeps(_:)``): in no particular order, a repeated name
  /// but `Set-Cookie` as one field.
  /// Whether `double` saw what production saw over `kind`, the fields named in `ignored`
  /// left out (see ``differences(_:ignoringHeaders:)``).
  func agrees(
    _ double: CallerView, _ kind: TransportKind, ignoringHeaders ignored: [String] = []
  ) -> Bool {
    let keep: ([Field]) -> [Field] = { fields in
      kind == .urlSession ? CallerView.asURLSessionKeeps(fields) : fields
    }
    var left = double
    var right = production
    left.headers = keep(double.headers(without: ignored))
    right.headers = keep(production.headers(without: ignored))
    return left == right
  }

  func differences(_ kind: TransportKind, ignoringHeaders ignored: [String] = []) -> [String] {
    var found: [String] = []
    for (name, double) in [("replay", replay), ("stub", stub)]
    where !agrees(double, kind, ignoringHeaders: ignored) {
      found.append("\(name): \(double)\n  production: \(production)")
    }
    if stubbed.count != wire.count {
      found.append("the stub saw \(stubbed.count) requests, the server \(wire.count)")
    }
    for (seen, received) in zip(stubbed, wire) {
      found += seen.differences(from: received).map { "stub saw \($0)" }
    }
    if let first = wire.first {
      if recorded.count != 1 {
        found.append("the cassette holds \(recorded.count) requests")
      } else if let cassette = recorded.first {
        found += cassette.differences(from: first).map { "cassette holds \($0)" }
      }
    }
    return found
  }
}
