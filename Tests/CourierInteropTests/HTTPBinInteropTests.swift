import Courier
import Foundation
import Testing

/// Issue #12: Courier against a real server nobody here wrote — httpbin (Flask, behind
/// gunicorn) on loopback. `.ci/run` starts one and passes its URL in `COURIER_HTTPBIN_URL`;
/// without it every test here is skipped with that message.
///
/// Local run:
/// `python3 -m gunicorn -b 127.0.0.1:18080 -k gthread --threads 8 httpbin:app &` then
/// `COURIER_HTTPBIN_URL=http://127.0.0.1:18080/ swift test --filter HTTPBinInteropTests`.
@Suite(
  "Interop with httpbin", .serialized, .timeLimit(.minutes(5)),
  .enabled(
    if: HTTPBin.baseURL != nil,
    "skipped: set COURIER_HTTPBIN_URL to an httpbin server (.ci/run starts one)"))
struct HTTPBinInteropTests {
  /// The fields of httpbin's echo that the tests read.
  struct Echo: Decodable, Sendable {
    var args: [String: String]? = nil
    var data: String? = nil
    var form: [String: String]? = nil
    var files: [String: String]? = nil
    var headers: [String: String]? = nil
    var method: String? = nil
    var url: String? = nil
    var gzipped: Bool? = nil
    var deflated: Bool? = nil
    var authenticated: Bool? = nil
  }

  /// The transports every test runs over.
  enum Wire: String, CaseIterable, Sendable, CustomStringConvertible {
    case urlSession, curl
    var description: String { rawValue }
  }

  /// The standard preset over `wire`, with short backoffs.
  func makeClient(_ wire: Wire) throws -> Client {
    let base = try #require(HTTPBin.baseURL)
    let transport: any Transport =
      switch wire {
      case .urlSession: URLSessionTransport()
      case .curl: CurlTransport()
      }
    return Client.standard(baseURL: base, transport: transport) {
      $0.retry = RetryMiddleware(policy: RetryPolicy(baseDelay: .milliseconds(50)), budget: nil)
      $0.timeout = TimeoutMiddleware(attempt: .seconds(10), overall: .seconds(30))
    }
  }

  @Test(
    "methods are echoed", arguments: Wire.allCases, [HTTPMethod.get, .post, .put, .patch, .delete])
  func methods(wire: Wire, method: HTTPMethod) async throws {
    let client = try makeClient(wire)
    let echo = try await client.send(Endpoint<Echo>(method, "anything"))
    #expect(echo.method == method.rawValue)
  }

  @Test(
    "a path parameter and query items arrive as one segment and as exact values",
    arguments: Wire.allCases)
  func pathAndQuery(wire: Wire) async throws {
    let client = try makeClient(wire)
    let echo = try await client.send(
      Endpoint<Echo>(.get, "anything/{name}").parameter("name", "a b/ç?#")
        .query("q", "x y").query("z", "&=+%"))
    #expect(echo.args == ["q": "x y", "z": "&=+%"])
    // WSGI hands httpbin a decoded path (so `%2F` comes back as `/`), and httpbin re-encodes
    // it; what shows that the client encoded it: `?` and `#` stayed in the path.
    #expect(echo.url?.contains("/anything/a%20b/ç%3F%23?") == true, "\(echo.url ?? "")")
  }

  @Test("headers are echoed, Courier's User-Agent among them", arguments: Wire.allCases)
  func headers(wire: Wire) async throws {
    let client = try makeClient(wire)
    let echo = try await client.send(
      Endpoint<Echo>(.get, "headers").header("X-Courier-Interop", "spaces, commas; and = signs"))
    #expect(echo.headers?["X-Courier-Interop"] == "spaces, commas; and = signs")
    #expect(echo.headers?["User-Agent"] == HeadersMiddleware.userAgent)
  }

  @Test(
    "/gzip and /deflate arrive decoded once, with headers that tell the truth",
    arguments: Wire.allCases)
  func compressedResponses(wire: Wire) async throws {
    let client = try makeClient(wire)
    let gzip = try await client.response(for: Endpoint<Echo>(.get, "gzip"))
    #expect(gzip.value.gzipped == true)
    #expect(gzip.response.headers[.contentEncoding] == nil)
    #expect(gzip.response.headers[.contentLength] == String(gzip.response.body.count))
    let deflate = try await client.response(for: Endpoint<Echo>(.get, "deflate"))
    #expect(deflate.value.deflated == true)
  }

  @Test(
    "/status/418 is httpStatus at once; /status/503 is retried three times",
    arguments: Wire.allCases)
  func statuses(wire: Wire) async throws {
    let client = try makeClient(wire)
    let teapot = await courierError {
      _ = try await client.send(Endpoint<Data>(.get, "status/418"))
    }
    #expect(teapot?.kind == .httpStatus)
    #expect(teapot?.status == 418)
    #expect(teapot?.attempts == 1)
    let unavailable = await courierError {
      _ = try await client.send(Endpoint<Data>(.get, "status/503"))
    }
    #expect(unavailable?.status == 503)
    #expect(unavailable?.attempts == 3)
  }

  @Test("/delay/5 against a 1 s timeout ends timedOut in about a second", arguments: Wire.allCases)
  func delayTimesOut(wire: Wire) async throws {
    let client = try makeClient(wire)
    let started = ContinuousClock.now
    let error = await courierError {
      _ = try await client.send(
        Endpoint<Data>(.get, "delay/5").timeout(.seconds(1)).retry(.disabled))
    }
    #expect(error?.kind == .timedOut)
    #expect(ContinuousClock.now - started < .seconds(4))
  }

  @Test("/redirect/3 ends at /get", arguments: Wire.allCases)
  func redirects(wire: Wire) async throws {
    let client = try makeClient(wire)
    let response = try await client.response(for: Endpoint<Echo>(.get, "redirect/3"))
    #expect(response.response.status == 200)
    #expect(response.value.url?.hasSuffix("/get") == true)
  }

  @Test("/basic-auth accepts the right credentials", arguments: Wire.allCases)
  func basicAuth(wire: Wire) async throws {
    let client = try makeClient(wire)
    let credentials = Data("courier:s3cret".utf8).base64EncodedString()
    let echo = try await client.send(
      Endpoint<Echo>(.get, "basic-auth/courier/s3cret").header(
        .authorization, "Basic \(credentials)"))
    #expect(echo.authenticated == true)
  }

  /// httpbin answers `401` with `WWW-Authenticate: Basic`, which URLSession on Linux raised
  /// as a challenge and then never completed (found by a new user's check of this library).
  @Test(
    "/basic-auth without credentials is httpStatus 401, not a hang or a timeout",
    arguments: Wire.allCases)
  func basicAuthRefused(wire: Wire) async throws {
    let client = try makeClient(wire)
    let error = await courierError {
      _ = try await client.send(Endpoint<Echo>(.get, "basic-auth/courier/s3cret"))
    }
    #expect(error?.kind == .httpStatus)
    #expect(error?.status == 401)
    #expect(error?.response?.headers["WWW-Authenticate"]?.hasPrefix("Basic") == true)
  }

  @Test("/bytes/{n} and /drip deliver exactly n bytes", arguments: Wire.allCases)
  func bytes(wire: Wire) async throws {
    let client = try makeClient(wire)
    let bytes = try await client.send(Endpoint<Data>(.get, "bytes/4096"))
    #expect(bytes.count == 4096)
    let drip = try await client.send(
      Endpoint<Data>(.get, "drip").query("numbytes", 64).query("duration", 1).query("delay", 0))
    #expect(drip.count == 64)
  }

  @Test("/post echoes JSON, form, multipart and gzip bodies", arguments: Wire.allCases)
  func postBodies(wire: Wire) async throws {
    let client = try makeClient(wire)
    struct Payload: Codable, Sendable, Equatable { let name: String; let count: Int }
    let json = try await client.send(
      Endpoint<Echo>(.post, "post").jsonBody(Payload(name: "李雷", count: 3)))
    let decoded = try JSONDecoder().decode(Payload.self, from: Data((json.data ?? "").utf8))
    #expect(decoded == Payload(name: "李雷", count: 3))

    let form = try await client.send(
      Endpoint<Echo>(.post, "post").formBody([("a", "1 2"), ("b", "&=")]))
    #expect(form.form == ["a": "1 2", "b": "&="])

    let multipart = try await client.send(
      Endpoint<Echo>(.post, "post").multipartBody(
        MultipartForm().field("note", "hello").file(
          "upload", data: Data("file body".utf8), filename: "a.txt", contentType: "text/plain")))
    #expect(multipart.form == ["note": "hello"])
    #expect(multipart.files == ["upload": "file body"])

    let original = Data(String(repeating: "compress me ", count: 200).utf8)
    let gzip = try await client.send(
      Endpoint<Echo>(.post, "post").body(original, contentType: "text/plain")
        .compressRequestBody())
    #expect(gzip.headers?["Content-Encoding"] == "gzip")
    // httpbin does not decode request bodies: it echoes the bytes it got, in base64.
    let prefix = "data:application/octet-stream;base64,"
    let sent = try #require(
      gzip.data.flatMap {
        $0.hasPrefix(prefix) ? Data(base64Encoded: String($0.dropFirst(prefix.count))) : nil
      })
    #expect(try GzipDecompressor.decompress(sent, format: .gzip) == original)
  }

  // MARK: Hostile answers a real server can give (found this round with httpbin)

  @Test(
    "/redirect-to a file: or ftp: URL is not followed: the 302 comes back",
    arguments: Wire.allCases, ["file:///etc/passwd", "ftp://127.0.0.1/x"])
  func redirectToOtherScheme(wire: Wire, target: String) async throws {
    let client = try makeClient(wire)
    let endpoint = Endpoint<Data>(.get, "redirect-to").query("url", target)
      .accepting(AcceptedStatuses([200...399]))
    let response = try await client.response(for: endpoint).response
    #expect(response.status == 302)
    #expect(response.headers[.location] == target)
  }

  @Test(
    "a Content-Length beyond 2^63 - 1 is badResponse, not a body read until the close",
    arguments: Wire.allCases)
  func lengthBeyondInt64(wire: Wire) async throws {
    let client = try makeClient(wire)
    let error = await courierError {
      _ = try await client.send(
        Endpoint<Data>(.get, "response-headers").query("Content-Length", "99999999999999999999"))
    }
    #expect(error?.kind == .badResponse, "\(String(reflecting: error))")
  }

  @Test("/brotli: URLSession decodes it; over curl the failure says the body is still br")
  func brotli() async throws {
    let decoded = try await makeClient(.urlSession).send(Endpoint<Echo>(.get, "brotli"))
    #expect(decoded.headers?["Host"] != nil)
    let error = await courierError {
      _ = try await makeClient(.curl).send(Endpoint<Echo>(.get, "brotli"))
    }
    #expect(error?.kind == .decoding)
    #expect(
      error?.debugMessage.contains("Content-Encoding: br") == true, "\(String(reflecting: error))")
  }

  /// A line of httpbin's `/stream/{n}`.
  struct StreamLine: Decodable, Sendable {
    let id: Int
    let url: String
  }

  @Test("/stream/20 read as JSON Lines, one value per line", arguments: Wire.allCases)
  func jsonLines(wire: Wire) async throws {
    let client = try makeClient(wire)
    let streamed = try await client.stream(Endpoint<Void>(.get, "stream/20"))
    var ids: [Int] = []
    for try await line in streamed.body.jsonLines(of: StreamLine.self) { ids.append(line.id) }
    #expect(ids == Array(0..<20))
  }

  @Test("/drip: slow bytes arrive whole", arguments: Wire.allCases)
  func drip(wire: Wire) async throws {
    let client = try makeClient(wire)
    let streamed = try await client.stream(
      Endpoint<Void>(.get, "drip").query("duration", "1").query("numbytes", "8")
        .query("delay", "0").query("code", "200"))
    let body = try await streamed.body.collect(upTo: 1024)
    #expect(body == Data(repeating: UInt8(ascii: "*"), count: 8))
  }
}

/// Where the httpbin server is, from `COURIER_HTTPBIN_URL`.
enum HTTPBin {
  static let baseURL: URL? = ProcessInfo.processInfo.environment["COURIER_HTTPBIN_URL"]
    .flatMap { URL(string: $0.hasSuffix("/") ? $0 : $0 + "/") }
}

/// The `CourierError` `body` throws, if any.
func courierError(_ body: () async throws -> Void) async -> CourierError? {
  do {
    try await body()
    return nil
  } catch {
    return error as? CourierError
  }
}
