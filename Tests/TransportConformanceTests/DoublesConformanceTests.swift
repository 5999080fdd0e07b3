import Courier
import CourierTesting
import Foundation
import Testing

/// `StubTransport` and `ReplayTransport` held to production: each case runs one exchange
/// three ways (``ThreeWays``) — a `Client` over a wire transport against `MockServer`
/// (recorded by `RecordingTransport`), the same `Client` over `ReplayTransport` serving that
/// cassette, and over `StubTransport` scripted with the same answer — and compares what the
/// caller saw and what each side saw of the request. A difference is either a bug in a double
/// or a limitation its documentation states, which the case then asserts.
@Suite("Test doubles held to production", .timeLimit(.minutes(5)))
struct DoublesConformanceTests {
  static let profile = Answer.json(#"{"name":"Li","age":30}"#)

  /// Path parameter values that a naive router gets wrong: a slash, a space, a percent sign,
  /// non-ASCII, dots that are not a dot segment, delimiters.
  static let parameterValues = [
    "a/b", "a b", "100%", "été", "李雷", "a..b", "...", "+&=;,", "a?b#c", "~x", "%2F",
  ]

  // MARK: Routing of encoded segments

  @Test(
    "a path parameter reaches every side as one encoded segment, and {name}, *, ** match it",
    .timeLimit(.minutes(5)), arguments: TransportKind.wire, parameterValues)
  func pathParameter(kind: TransportKind, value: String) async throws {
    for pattern in ["user/{id}", "user/*", "user/**", "**"] {
      let run = try await ThreeWays.run(
        kind, Script(Self.profile, pattern: pattern),
        Endpoint<Profile>(.get, "user/{id}").parameter("id", value))
      #expect(run.differences(kind) == [], "\(pattern)")
      #expect(run.stub.value == "Profile(name: \"Li\", age: 30)", "\(pattern)")
    }
  }

  @Test(
    "a path parameter of . or .. is refused before any side sees a request",
    .timeLimit(.minutes(5)), arguments: TransportKind.wire)
  func dotParameter(kind: TransportKind) async throws {
    for value in [".", ".."] {
      let run = try await ThreeWays.run(
        kind, Script(Self.profile), Endpoint<Profile>(.get, "user/{id}").parameter("id", value))
      #expect(run.differences(kind) == [], "\(value)")
      #expect(run.production.error == "invalidRequest -")
      #expect(run.wire.isEmpty && run.stubbed.isEmpty)
    }
  }

  /// libcurl (under both transports) removes the dot segments of a template before sending
  /// it, so the server routes `files/../admin` as `admin`; the stub routed the path as the
  /// client built it and answered 404. `%2E%2E` is a name to every side.
  @Test(
    "a template's dot segments are removed before routing, as on the wire; %2E%2E stays a name",
    .timeLimit(.minutes(5)), arguments: TransportKind.wire)
  func dotSegments(kind: TransportKind) async throws {
    let script = Script([(nil, "admin", Self.profile), (nil, "files/admin", Self.profile)])
    for template in [
      "files/../admin", "files/./admin", "files/a/b/../../admin", "files/%2E%2E/admin",
    ] {
      let run = try await ThreeWays.run(kind, script, Endpoint<Profile>(.get, template))
      #expect(run.differences(kind) == [], "\(template)")
      #expect(run.production.status == (template.contains("%2E") ? 404 : 200), "\(template)")
      // Documented: the stub keeps the request as the client handed it over.
      #expect(run.stubbed.first?.target == "/" + template)
    }
  }

  @Test(
    "query items reach every side as the same encoded query", .timeLimit(.minutes(5)),
    arguments: TransportKind.wire)
  func query(kind: TransportKind) async throws {
    let run = try await ThreeWays.run(
      kind, Script(Self.profile, pattern: "search"),
      Endpoint<Profile>(.get, "search").query("q", "a b&c").query("tag", "x").query("tag", "y")
        .query("empty", "").query("é", "李/?").header("X-Trace", "t-1"))
    #expect(run.differences(kind) == [])
    #expect(
      run.wire.first?.target.hasSuffix("?q=a%20b%26c&tag=x&tag=y&empty=&%C3%A9=%E6%9D%8E%2F%3F")
        == true)
  }

  // MARK: Received header bytes

  /// Production keeps a received value's bytes (obs-text such as a UTF-8 `filename`), every
  /// repeated field, empty values and the case of names; so must the doubles. Over URLSession
  /// the fields are compared as `HTTPURLResponse` keeps them (no order, repeats joined). The
  /// one documented difference: a cassette records `Set-Cookie` as `***`, as it records every
  /// credential, so a replay serves `***`.
  @Test(
    "received header fields keep their bytes, repeats, empty values and odd case",
    .timeLimit(.minutes(5)), arguments: TransportKind.wire)
  func responseHeaders(kind: TransportKind) async throws {
    var answer = Self.profile
    answer.headers += [
      Field("Content-Disposition", #"attachment; filename="été.txt""#),
      Field("Set-Cookie", "a=1; Path=/"), Field("Set-Cookie", "b=2; Path=/"),
      Field("X-Empty", ""), Field("x-ODD-case", "v"), Field("X-Multi", "a"),
      Field("X-Multi", "b"), Field("X-Padded", "  padded  "), Field("X-Latin", "caf\u{E9}"),
    ]
    let run = try await ThreeWays.run(kind, Script(answer), Endpoint<Profile>(.get, "h"))
    #expect(run.differences(kind, ignoringHeaders: ["Set-Cookie"]) == [])
    let cookies = { (view: CallerView) in
      view.headers.filter { $0.name == "Set-Cookie" }.map(\.value)
    }
    #expect(cookies(run.production) == ["a=1; Path=/", "b=2; Path=/"])
    #expect(cookies(run.stub) == cookies(run.production))
    #expect(cookies(run.replay) == ["***", "***"])
    if kind == .curl {
      #expect(run.production.headers.contains(Field("x-ODD-case", "v")))
      #expect(run.production.headers.contains(Field("X-Padded", "padded")))
    }
  }

  // MARK: Bodies

  /// An answer body, and the method that asks for it.
  enum BodyCase: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case large
    case binary
    case nul
    case crlf
    case errorPage
    /// A 500 with a JSON body: fails the same way over every side, as the Testing article
    /// promises.
    case serverError
    /// Text that starts with a UTF-8 byte order mark: a cassette dropped it.
    case byteOrderMark
    /// JSON that starts with a byte order mark, redacted inside.
    case jsonByteOrderMark

    var testDescription: String { rawValue }

    var method: HTTPMethod { .get }

    var answer: Answer {
      switch self {
      case .large: Answer(body: Data(repeating: 0x61, count: 1 << 20))
      case .binary: Answer(body: Data((0..<1024).map { UInt8($0 % 256) }))
      case .nul: Answer(body: Data([0x61, 0x00, 0x62]))
      case .crlf:
        Answer(headers: [Field("Content-Type", "text/plain")], body: Data("a\r\nb\r".utf8))
      case .byteOrderMark:
        Answer(
          headers: [Field("Content-Type", "text/plain")],
          body: Data([0xEF, 0xBB, 0xBF]) + Data("hi".utf8))
      case .jsonByteOrderMark:
        Answer(
          headers: [Field("Content-Type", "application/json")],
          body: Data([0xEF, 0xBB, 0xBF]) + Data(#"{"id":7}"#.utf8))
      case .serverError: Answer.json(#"{"message":"database unavailable"}"#, status: 500)
      case .errorPage:
        Answer(
          status: 404, headers: [Field("Content-Type", "text/plain")],
          body: Data("no such user".utf8))
      }
    }
  }

  @Test(
    "an answer's body reaches the caller byte for byte, and its status and headers with it",
    .timeLimit(.minutes(5)), arguments: TransportKind.wire, BodyCase.allCases)
  func responseBody(kind: TransportKind, body: BodyCase) async throws {
    let run = try await ThreeWays.run(
      kind, Script(body.answer), describe: { "\($0.count) bytes" },
      Endpoint<Data>(body.method, "b"))
    #expect(run.differences(kind) == [])
  }

  /// What a server's framing makes of a scripted answer.
  enum FramingCase: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// A 200 with no body: `Content-Length: 0`.
    case emptyOK
    /// A 204: no body and no `Content-Length`, whatever the script holds.
    case noContent
    /// A `HEAD`: no body, the `Content-Length` of the body it stands for.
    case head
    /// A 304: no body.
    case notModified
    /// A `Content-Length` past the body's end: the connection ends first.
    case lengthPastBody
    /// A `Content-Length` short of the body's end: the body is cut there.
    case lengthShortOfBody
    /// A `Content-Length` that is not a number.
    case lengthNotANumber

    var testDescription: String { rawValue }

    var method: HTTPMethod { self == .head ? .head : .get }

    var answer: Answer {
      let close = Field("Connection", "close")
      let body = Data("abcd".utf8)
      return switch self {
      case .emptyOK: Answer()
      case .noContent: Answer(status: 204, body: body)
      case .head: Answer(headers: [Field("X-Head", "yes")], body: body)
      case .notModified: Answer(status: 304, body: body)
      case .lengthPastBody: Answer(headers: [Field("Content-Length", "10"), close], body: body)
      case .lengthShortOfBody: Answer(headers: [Field("Content-Length", "2"), close], body: body)
      case .lengthNotANumber:
        Answer(headers: [Field("Content-Length", "abc"), close], body: body)
      }
    }
  }

  /// A server frames every answer, so a transport never receives a body with a `HEAD` answer,
  /// a 204 or a 304, nor an answer without its length, and a `Content-Length` that is not the
  /// body's fails or cuts the body; a stub that answered with the script as it is handed tests
  /// what production never sees.
  @Test(
    "an answer is framed as on the wire: HEAD, 204, 304 bodiless; Content-Length rules the body",
    .timeLimit(.minutes(5)), arguments: TransportKind.wire, FramingCase.allCases)
  func framing(kind: TransportKind, framing: FramingCase) async throws {
    let run = try await ThreeWays.run(
      kind, Script(framing.answer), describe: { String(decoding: $0, as: UTF8.self) },
      Endpoint<Data>(framing.method, "f"))
    #expect(run.differences(kind) == [])
    switch framing {
    case .head: #expect(run.stub.headers.contains(Field("Content-Length", "4")))
    case .lengthPastBody: #expect(run.stub.error == "connectionLost -")
    case .lengthShortOfBody: #expect(run.stub.value == "ab")
    case .lengthNotANumber: #expect(run.stub.error == "badResponse -")
    case .emptyOK, .noContent, .notModified: #expect(run.stub.body.isEmpty)
    }
  }

  /// A cassette records a body redacted, so a replay serves `***` where the secret was: a
  /// documented difference. The `Content-Length` it served was the live body's, which no
  /// transport ever hands back over a body of another length.
  @Test(
    "a replay serves a redacted body under its own Content-Length; the stub serves it as is",
    .timeLimit(.minutes(5)), arguments: TransportKind.wire, [200, 401])
  func redactedBody(kind: TransportKind, status: Int) async throws {
    let answer = Answer.json(#"{"name":"Li","age":30,"token":"SECRET-VALUE"}"#, status: status)
    let run = try await ThreeWays.run(
      kind, Script(answer), describe: { String(decoding: $0, as: UTF8.self) },
      Endpoint<Data>(.get, "me"))
    let redacted = #"{"name":"Li","age":30,"token":"***"}"#
    #expect(run.production.body == answer.body)
    #expect(run.agrees(run.stub, kind))
    #expect(run.replay.body == Data(redacted.utf8))
    #expect(run.replay.status == status)
    #expect(
      run.replay.headers.first { $0.name == "Content-Length" }?.value == String(redacted.utf8.count)
    )
    let recorded = try #require(run.cassette?.interactions.first?.response)
    #expect(recorded.headers.contains(["Content-Length", String(redacted.utf8.count)]))
  }

  /// A cassette recorded before cassettes wrote a redacted body's length (or edited by hand)
  /// holds the live length over a shorter body: the replay frames the body it serves.
  @Test("a replayed Content-Length is the served body's length", .timeLimit(.minutes(5)))
  func replayedLength() async throws {
    let url = "https://api.test/me"
    let cassette = Cassette(interactions: [
      Cassette.Interaction(
        request: Cassette.RecordedMessage(method: "GET", url: url),
        response: Cassette.RecordedResponse(
          status: 200, headers: [["Content-Type", "application/json"], ["Content-Length", "45"]],
          body: Cassette.Body(Data(#"{"token":"***"}"#.utf8))))
    ])
    let response = try await ReplayTransport(cassette: cassette).send(
      Request(url: try #require(URL(string: url))))
    #expect(response.headers[.contentLength] == "15")
    #expect(response.headers[.contentType] == "application/json")
  }

  @Test(
    "a gzip answer through GzipMiddleware decodes alike, its headers made true",
    .timeLimit(.minutes(5)), arguments: TransportKind.wire)
  func gzip(kind: TransportKind) async throws {
    let answer = Answer(
      headers: [Field("Content-Type", "application/json"), Field("Content-Encoding", "gzip")],
      body: try GzipCompressor.compress(Data(#"{"name":"Li","age":30}"#.utf8)))
    let run = try await ThreeWays.run(
      kind, Script(answer), middleware: { [GzipMiddleware()] }, Endpoint<Profile>(.get, "z"))
    #expect(run.differences(kind) == [])
    #expect(run.stub.headers(without: []).contains { $0.name == "Content-Encoding" } == false)
  }

  // MARK: Redirects

  /// A scripted redirect, and the request that meets it.
  enum RedirectCase: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// A 302 to a relative `Location`: followed.
    case found
    /// A `POST` met by a 303: followed as a `GET` without the body.
    case seeOther
    /// A `PUT` met by a 307: followed with the method and the body.
    case temporary
    /// A 302 the endpoint does not follow (`.redirects(.doNotFollow)`): the 3xx is the answer.
    case notFollowed
    /// A 302 to `ftp:`: never followed, the 3xx is the answer.
    case otherScheme
    /// Two 302s that point at each other: `tooManyRedirects`.
    case loop
    /// Four hops under `follow(maximum: 3)`: `tooManyRedirects`.
    case tooMany

    var testDescription: String { rawValue }

    static func moved(_ status: Int = 302, to location: String) -> Answer {
      Answer(status: status, headers: [Field("Location", location)], body: Data("moved".utf8))
    }

    var script: Script {
      let final = DoublesConformanceTests.profile
      return switch self {
      case .found, .notFollowed:
        Script([(nil, "old", Self.moved(to: "/new")), (nil, "new", final)])
      case .seeOther:
        Script([(.post, "old", Self.moved(303, to: "new")), (.get, "new", final)])
      case .temporary:
        Script([(.put, "old", Self.moved(307, to: "/new")), (.put, "new", final)])
      case .otherScheme: Script(Self.moved(to: "ftp://files.test/x"))
      case .loop:
        Script([(nil, "old", Self.moved(to: "/new")), (nil, "new", Self.moved(to: "/old"))])
      case .tooMany:
        Script(
          [(nil, "old", Self.moved(to: "/1"))]
            + (1...4).map { (nil, "\($0)", Self.moved(to: "/\($0 + 1)")) }
            + [(nil, "5", final)])
      }
    }

    var endpoint: Endpoint<Profile> {
      let old = Endpoint<Profile>(.get, "old")
      return switch self {
      case .found, .otherScheme, .loop: old
      case .seeOther: Endpoint<Profile>(.post, "old").jsonBody(Profile(name: "a", age: 1))
      case .temporary:
        Endpoint<Profile>(.put, "old").body(Data("kept".utf8), contentType: "text/plain")
      case .notFollowed: old.redirects(.doNotFollow)
      case .tooMany: old.redirects(.follow(maximum: 3))
      }
    }
  }

  /// Both wire transports follow a redirect by Courier's `RedirectPolicy`; a stub that handed
  /// the 302 back let a test pass on code that production never runs (and fail on code that
  /// works).
  @Test(
    "a scripted redirect is followed, or not, as production follows it",
    .timeLimit(.minutes(5)), arguments: TransportKind.wire, RedirectCase.allCases)
  func redirect(kind: TransportKind, redirect: RedirectCase) async throws {
    let run = try await ThreeWays.run(kind, redirect.script, redirect.endpoint)
    #expect(run.differences(kind) == [])
    switch redirect {
    case .found, .seeOther, .temporary:
      #expect(run.stub.value == "Profile(name: \"Li\", age: 30)")
      #expect(run.stubbed.count == 2)
    case .notFollowed, .otherScheme: #expect(run.stub.error == "httpStatus 302")
    case .loop, .tooMany: #expect(run.stub.error == "tooManyRedirects -")
    }
  }

  /// An endpoint's body limit: the wire transports stop at it (`bodyTooLarge`), and the stub
  /// honours the same explicit limit. (The wire transports' own default limit, 32 MiB, is a
  /// setting of theirs; the stub has none, as its documentation says.)
  @Test(
    "a body past the endpoint's limit is bodyTooLarge on every side",
    .timeLimit(.minutes(5)), arguments: TransportKind.wire)
  func bodyLimit(kind: TransportKind) async throws {
    let run = try await ThreeWays.run(
      kind, Script(Answer(body: Data(repeating: 0x62, count: 4096))),
      describe: { "\($0.count) bytes" },
      Endpoint<Data>(.get, "big").maximumResponseBodySize(1000))
    #expect(run.differences(kind) == [])
    #expect(run.stub.error == "bodyTooLarge -")
  }

  // MARK: Time

  /// Both wire transports end an attempt at its `Request.timeout` by themselves
  /// (`Endpoint.timeout`), with no `TimeoutMiddleware` in the chain; the stub waited out its
  /// scripted delay and answered, so a test of a timeout passed only with the middleware.
  @Test(
    "a request's own timeout ends a slow answer with timedOut, middleware or not",
    .timeLimit(.minutes(5)), arguments: TransportKind.wire)
  func requestTimeout(kind: TransportKind) async throws {
    var slow = Self.profile
    // Far past the timeout: on a loaded machine URLSession's shared queue can be seconds
    // late to act on the cancellation, and an answer that lands first is not a timeout.
    slow.delay = .seconds(10)
    let run = try await ThreeWays.run(
      kind, Script(slow), Endpoint<Profile>(.get, "slow").timeout(.milliseconds(200)))
    #expect(run.production.error == "timedOut -")
    #expect(run.stub.error == "timedOut -")
    #expect(run.differences(kind) == [])
  }

  // MARK: Request bodies and framing

  /// A request body as a caller gives it.
  enum RequestBodyCase: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case json
    case form
    case multipart
    case bytes
    /// A file streamed from disk (`fileBody`).
    case file
    /// A multipart form with a file part: a temporary file the client deletes after the call.
    case multipartFile
    case rightContentLength
    case emptyPOST
    /// A caller's `Content-Length` that is not the body's: refused before sending.
    case wrongContentLength
    /// A caller's `Transfer-Encoding`: refused before sending.
    case transferEncoding

    var testDescription: String { rawValue }

    /// The endpoint, its file part or file body read from `file` (the cases without one
    /// ignore it).
    func endpoint(file: URL = URL(fileURLWithPath: "/dev/null")) -> Endpoint<Data> {
      let base = Endpoint<Data>(.post, "upload")
      return switch self {
      case .json: base.jsonBody(Profile(name: "Lí", age: 3))
      case .form: base.formBody([("user", "li lei"), ("pass", "p&ss=1+"), ("é", "李")])
      case .multipart:
        base.multipartBody(
          MultipartForm(boundary: "courier-doubles").field("a", "1")
            .file("f", data: Data([0, 1, 2, 0xFF]), filename: "été.bin"))
      case .bytes: base.body(Data([0xFF, 0x00, 0xFE]), contentType: "application/octet-stream")
      case .file: base.fileBody(file, contentType: "application/octet-stream")
      case .multipartFile:
        base.multipartBody(
          MultipartForm(boundary: "courier-doubles").field("a", "1").file("f", url: file))
      case .rightContentLength:
        base.body(Data("ab".utf8), contentType: "text/plain").header("Content-Length", "2")
      case .emptyPOST: base
      case .wrongContentLength:
        base.body(Data("ab".utf8), contentType: "text/plain").header("Content-Length", "5")
      case .transferEncoding:
        base.body(Data("ab".utf8), contentType: "text/plain")
          .header("Transfer-Encoding", "chunked")
      }
    }
  }

  @Test(
    "a request body reaches every side byte for byte, with the Content-Length of its bytes",
    .timeLimit(.minutes(5)), arguments: TransportKind.wire, RequestBodyCase.allCases)
  func requestBody(kind: TransportKind, body: RequestBodyCase) async throws {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-doubles-body-\(UUID().uuidString).bin")
    try Data((0..<5000).map { UInt8($0 % 251) }).write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    let run = try await ThreeWays.run(
      kind, Script(Answer(body: Data("ok".utf8))), replayMatching: .methodURLAndBody,
      describe: { String(decoding: $0, as: UTF8.self) }, body.endpoint(file: file))
    #expect(run.differences(kind) == [])
    switch body {
    case .wrongContentLength, .transferEncoding:
      #expect(run.production.error == "invalidRequest -")
      #expect(run.wire.isEmpty && run.stubbed.isEmpty)
    default: #expect(run.production.value == "ok")
    }
  }

  /// A replay matched such a request by method and URL and served the recorded answer, where
  /// both wire transports and the stub refuse it before sending.
  @Test(
    "a replay refuses a request production refuses, even when the cassette holds its URL",
    .timeLimit(.minutes(5)))
  func replayRefusesBadFraming() async throws {
    let run = try await ThreeWays.run(
      .curl, Script(Answer(body: Data("ok".utf8))),
      describe: { String(decoding: $0, as: UTF8.self) },
      RequestBodyCase.rightContentLength.endpoint())
    #expect(run.production.value == "ok")
    let cassette = try #require(run.cassette)
    let base = try #require(URL(string: "http://127.0.0.1/"))
    for endpoint in [
      RequestBodyCase.wrongContentLength.endpoint(),
      RequestBodyCase.transferEncoding.endpoint(),
    ] {
      let replay = Client(
        baseURL: base,
        transport: ReplayTransport(cassette: cassette, matching: .methodPathAndQuery))
      let error = await courierError { try await replay.send(endpoint) }
      #expect(error?.kind == .invalidRequest, "\(String(reflecting: error))")
    }
  }

  /// A cassette recorded a file body as no body at all, so a replay matching bodies served
  /// any file the recorded answer.
  @Test("a replay matching bodies tells two file bodies apart", .timeLimit(.minutes(5)))
  func fileBodyMatching() async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-doubles-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let (first, second) = (folder.appendingPathComponent("1"), folder.appendingPathComponent("2"))
    try Data("first file".utf8).write(to: first)
    try Data("second file".utf8).write(to: second)
    let cassette = folder.appendingPathComponent("cassette.json")
    let base = try #require(URL(string: "https://api.test/"))
    let upload = { (file: URL) in
      Endpoint<String>(.put, "upload").fileBody(file, contentType: "text/plain")
    }
    _ = try await Client(
      baseURL: base,
      transport: RecordingTransport(
        wrapping: StubTransport(fallback: .text("stored")), cassette: cassette)
    ).send(upload(first))
    let replay = Client(
      baseURL: base, transport: try ReplayTransport(cassette: cassette, matching: .methodURLAndBody)
    )
    let other = await courierError { try await replay.send(upload(second)) }
    #expect(other?.kind == .transport)
    #expect(other?.debugDescription.contains("the body differs") == true)
    #expect(try await replay.send(upload(first)) == "stored")
  }

  /// `JSONEncoder` writes an object's members in no set order, so the JSON body of one
  /// endpoint differed in bytes between the recording and the replay, and a replay matching
  /// bodies failed at random for a request production would answer alike.
  @Test(
    "a replay matching bodies takes a JSON body with its members in another order",
    .timeLimit(.minutes(5)))
  func jsonBodyMatching() async throws {
    let base = try #require(URL(string: "https://api.test/"))
    let url = base.appendingPathComponent("users")
    let recorded = Cassette.RecordedMessage(
      method: "POST", url: url.absoluteString,
      headers: [["Content-Type", "application/json"]],
      body: Cassette.Body(Data(#"{"name":"Li","age":3,"tags":["a","b"]}"#.utf8)))
    let cassette = Cassette(interactions: [
      Cassette.Interaction(
        request: recorded, response: Cassette.RecordedResponse(status: 201))
    ])
    let post = { (json: String) in
      Endpoint<Void>(.post, "users").body(Data(json.utf8), contentType: "application/json")
    }
    let replay = Client(
      baseURL: base,
      transport: ReplayTransport(cassette: cassette, matching: .methodURLAndBody, repeatsLast: true)
    )
    try await replay.send(post(#"{"tags":["a","b"], "age":3,"name":"Li"}"#))
    // Another document is another body; so is an array with its items in another order.
    let other = await courierError {
      try await replay.send(post(#"{"age":3,"name":"Lu","tags":["a","b"]}"#))
    }
    #expect(other?.debugDescription.contains("the body differs") == true)
    let reversed = await courierError {
      try await replay.send(post(#"{"age":3,"name":"Li","tags":["b","a"]}"#))
    }
    #expect(reversed?.debugDescription.contains("the body differs") == true)
  }
}
