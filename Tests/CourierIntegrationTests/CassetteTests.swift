import Courier
import CourierTesting
import Foundation
import Testing

/// Issue #12, record and replay: record real exchanges with `MockServer`, then replay them
/// with the server gone.
@Suite("RecordingTransport and ReplayTransport", .timeLimit(.minutes(5)))
struct CassetteTests {
  static let secrets = ["SECRET-KEY-1", "Bearer TOKEN-2", "hunter2-pass", "refresh-3"]

  static func temporaryFile() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-cassette-\(UUID().uuidString).json")
  }

  struct Recorded {
    let file: URL
    let requests: [Request]
    let responses: [Response]
    let port: Int
  }

  /// Records a GET with a key and a token, a JSON POST with a password, a binary answer and a
  /// refused connection.
  static func record() async throws -> Recorded {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(.json(#"{"id":7,"refresh_token":"refresh-3"}"#))
    server.enqueue(MockResponse(status: 201, body: Data(#"{"ok":true}"#.utf8)))
    server.enqueue(MockResponse(status: 200, body: Data([0xff, 0x00, 0xfe, 0x80])))
    let file = temporaryFile()
    let transport = URLSessionTransport()
    defer { transport.shutdown() }
    let recording = RecordingTransport(wrapping: transport, cassette: file)
    var get = Request(url: server.url("user/7?api_key=SECRET-KEY-1&v=2"))
    try get.headers.set(.authorization, "Bearer TOKEN-2")
    var post = Request(method: .post, url: server.url("login"))
    post.body = .data(Data(#"{"name":"li","password":"hunter2-pass"}"#.utf8))
    try post.headers.set(.contentType, "application/json")
    let binary = Request(url: server.url("blob"))
    var responses: [Response] = []
    for request in [get, post, binary] { responses.append(try await recording.send(request)) }
    let refusing = try RefusingPort()
    let refused = Request(url: refusing.url("down"))
    let error = await courierError { _ = try await recording.send(refused) }
    #expect(error?.kind == .cannotConnect)
    withExtendedLifetime(refusing) {}
    return Recorded(
      file: file, requests: [get, post, binary, refused], responses: responses, port: server.port)
  }

  @Test("a recorded cassette holds every exchange and none of the secrets")
  func recordingIsRedacted() async throws {
    let recorded = try await Self.record()
    defer { try? FileManager.default.removeItem(at: recorded.file) }
    let text = try String(contentsOf: recorded.file, encoding: .utf8)
    for secret in Self.secrets { #expect(!text.contains(secret), "\(secret) in the cassette") }
    let cassette = try Cassette(contentsOf: recorded.file)
    #expect(cassette.interactions.count == 4)
    #expect(cassette.interactions[0].request.url.hasSuffix("/user/7?api_key=***&v=2"))
    #expect(cassette.interactions[1].request.body?.text == #"{"name":"li","password":"***"}"#)
    #expect(cassette.interactions[2].response?.body?.base64 == "/wD+gA==")
    #expect(cassette.interactions[3].error?.kind == "cannotConnect")
  }

  @Test("replay serves the recorded answers in order, with the server gone")
  func replayServesAnswers() async throws {
    let recorded = try await Self.record()
    defer { try? FileManager.default.removeItem(at: recorded.file) }
    let replay = try ReplayTransport(cassette: recorded.file)
    for (request, original) in zip(recorded.requests, recorded.responses) {
      let response = try await replay.send(request)
      #expect(response.status == original.status)
      // Redacted in the cassette: the refresh token comes back as the marker.
      #expect(
        response.body
          == (original.bodyText?.contains("refresh-3") == true
            ? Data(#"{"id":7,"refresh_token":"***"}"#.utf8) : original.body))
    }
    let failure = await courierError { _ = try await replay.send(recorded.requests[3]) }
    #expect(failure?.kind == .cannotConnect)
    #expect(replay.unusedCount == 0)
    // A fifth request for the same URL: every match was used.
    let again = await courierError { _ = try await replay.send(recorded.requests[0]) }
    #expect(again?.debugDescription.contains("were replayed already") == true)
  }

  @Test(
    "a recorded response header with non-ASCII bytes is replayed as the live transport received it",
    arguments: ["curl", "urlsession"])
  func nonASCIIHeaderReplayed(transportName: String) async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let disposition = #"attachment; filename="été.txt""#
    server.enqueue(
      MockResponse(
        status: 200,
        headers: [MockHeader(name: "Content-Disposition", value: disposition)],
        body: Data("x".utf8)))
    let file = Self.temporaryFile()
    defer { try? FileManager.default.removeItem(at: file) }
    let live: any Transport =
      transportName == "curl" ? CurlTransport() : URLSessionTransport()
    let recording = RecordingTransport(wrapping: live, cassette: file)
    let request = Request(url: server.url("report"))
    let received = try await recording.send(request)
    let liveValue = try #require(received.headers["Content-Disposition"])
    let replayed = try await ReplayTransport(cassette: file).send(request)
    #expect(replayed.headers["Content-Disposition"] == liveValue)
    #expect(replayed.headers.count == received.headers.count)
  }

  @Test("no match names the closest recorded request and what differs")
  func noMatchNamesClosest() async throws {
    let recorded = try await Self.record()
    defer { try? FileManager.default.removeItem(at: recorded.file) }
    let replay = try ReplayTransport(cassette: recorded.file)
    let url = "http://127.0.0.1:\(recorded.port)/user/8?api_key=SECRET-KEY-1&v=2"
    let error = await courierError { _ = try await replay.send(Request(url: URL(string: url)!)) }
    #expect(error?.kind == .transport)
    let text = error?.debugDescription ?? ""
    #expect(text.contains("closest recorded is GET http://127.0.0.1:\(recorded.port)/user/7"))
    #expect(text.contains("cassette entry 1"))
    #expect(!text.contains("SECRET-KEY-1"))
  }

  @Test("path-and-query matching ignores the host; body matching tells bodies apart")
  func matchingRules() async throws {
    let cassette = Cassette(interactions: [
      .init(
        request: .init(
          method: "POST", url: "http://127.0.0.1:1/a?x=1", body: Cassette.Body(Data("one".utf8))),
        response: .init(status: 201)),
      .init(
        request: .init(
          method: "POST", url: "http://127.0.0.1:1/a?x=1", body: Cassette.Body(Data("two".utf8))),
        response: .init(status: 202)),
    ])
    let loose = ReplayTransport(
      cassette: cassette, matching: ReplayTransport.Matching(wholeURL: false, body: true),
      repeatsLast: true)
    var request = Request(method: .post, url: URL(string: "http://localhost:9999/a?x=1")!)
    request.body = .data(Data("two".utf8))
    #expect(try await loose.send(request).status == 202)
    #expect(try await loose.send(request).status == 202, "repeatsLast serves it again")
    let strict = ReplayTransport(cassette: cassette)
    let error = await courierError { _ = try await strict.send(request) }
    #expect(error?.debugDescription.contains("the URL differs") == true)
  }

  @Test("a file that is not a cassette is invalidRequest naming the file")
  func badFile() throws {
    let file = Self.temporaryFile()
    try Data("{\"version\":2,\"interactions\":[]}".utf8).write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    #expect(throws: CourierError.self) { try ReplayTransport(cassette: file) }
    do {
      _ = try Cassette(contentsOf: file)
    } catch {
      #expect(error.kind == .invalidRequest)
      #expect(error.debugDescription.contains("version 2"))
    }
  }
}
