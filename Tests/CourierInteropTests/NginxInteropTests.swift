import Courier
import Foundation
import Testing

/// Courier against nginx 1.22 (Debian's), a server nobody here wrote, configured by `.ci/run`:
/// HTTP/1.1 on one port, TLS with HTTP/2 (ALPN) on another with the private CA's certificate
/// of ``TLSInteropTests``. Each `/protocol`-style answer echoes nginx's own view of the request:
/// the protocol, the connection's serial number and how many requests that connection has
/// carried.
///
/// `.ci/run` passes `COURIER_NGINX_URL`, `COURIER_NGINX_TLS_URL` and `COURIER_TLS_CA_BUNDLE`;
/// without them every test here is skipped with that message. The locations (see `.ci/run`):
/// `/protocol`; `/limited` (`keepalive_requests 3`); `/upload` (`client_max_body_size 1k`,
/// so a larger body gets `413` before nginx reads it); `/early` (`return 200` to any body up
/// to 16 MiB, which nginx answers without reading it); `/drop` (`return 444`: the connection
/// closes without a response); `/data.json` (gzip on); `/files/pattern.bin` (8 MiB, byte `i`
/// is `i % 251`, sent at 1 MB/s to a request with `X-Slow`).
@Suite(
  "Interop with nginx", .serialized, .timeLimit(.minutes(5)),
  .enabled(
    if: Nginx.plainURL != nil && Nginx.tlsURL != nil && TLSServer.caBundle != nil,
    """
    skipped: set COURIER_NGINX_URL, COURIER_NGINX_TLS_URL and COURIER_TLS_CA_BUNDLE (.ci/run \
    configures and starts nginx)
    """))
struct NginxInteropTests {
  /// nginx's view of one request.
  struct Seen: Decodable, Sendable {
    let protocolName: String
    let connection: String
    let requests: String

    enum CodingKeys: String, CodingKey {
      case protocolName = "protocol"
      case connection, requests
    }
  }

  /// Where a client sends, and over what.
  enum Route: String, CaseIterable, Sendable, CustomStringConvertible {
    /// URLSessionTransport on the plain port (it cannot trust the private CA on Linux).
    case urlSession
    /// CurlTransport, HTTP/1.1, on the plain port.
    case curl
    /// CurlTransport with the HTTP/2 opt-in, on the TLS port.
    case curlHTTP2
    var description: String { rawValue }
  }

  /// A transport for `route` and the base URL it sends to.
  private func make(_ route: Route) throws -> (any Transport, URL, @Sendable () -> Void) {
    switch route {
    case .urlSession:
      let transport = URLSessionTransport()
      return (transport, try #require(Nginx.plainURL), { transport.shutdown() })
    case .curl:
      let transport = CurlTransport()
      return (transport, try #require(Nginx.plainURL), { transport.shutdown() })
    case .curlHTTP2:
      let transport = Self.curlHTTP2()
      return (transport, try #require(Nginx.tlsURL), { transport.shutdown() })
    }
  }

  /// The same 8 MiB as a `POST` from memory and a `PUT` from a file, each on the endpoint
  /// `endpoint` makes for its method, and what removes the file.
  private static func eightMiBUploads<Value>(
    _ endpoint: (HTTPMethod) -> Endpoint<Value>
  ) throws -> (endpoints: [Endpoint<Value>], removeFile: () -> Void) {
    let body = Data(repeating: 0x62, count: 8 << 20)
    let file = FileManager.default.temporaryDirectory
      .appendingPathComponent("courier-nginx-upload-\(UUID().uuidString).bin")
    try body.write(to: file)
    let endpoints = [
      endpoint(.post).body(body, contentType: "application/octet-stream"),
      endpoint(.put).fileBody(file, contentType: "application/octet-stream"),
    ]
    return (endpoints, { try? FileManager.default.removeItem(at: file) })
  }

  private static func curlHTTP2() -> CurlTransport {
    var configuration = CurlTransport.Configuration.standard
    configuration.tls = CurlTransport.TLS(caBundlePath: TLSServer.caBundle)
    configuration.httpVersion = .http2
    return CurlTransport(configuration: configuration)
  }

  @Test("the HTTP/2 opt-in speaks HTTP/2 over TLS, HTTP/1.1 without TLS; the default HTTP/1.1")
  func protocols() async throws {
    let (plainURL, tlsURL) = (try #require(Nginx.plainURL), try #require(Nginx.tlsURL))
    let http2 = Self.curlHTTP2()
    defer { http2.shutdown() }
    let overTLS = try await Client(baseURL: tlsURL, transport: http2)
      .send(Endpoint<Seen>(.get, "protocol"))
    #expect(overTLS.protocolName == "HTTP/2.0")
    let plain = try await Client(baseURL: plainURL, transport: http2)
      .send(Endpoint<Seen>(.get, "protocol"))
    #expect(plain.protocolName == "HTTP/1.1")

    var configuration = CurlTransport.Configuration.standard
    configuration.tls = CurlTransport.TLS(caBundlePath: TLSServer.caBundle)
    let http1 = CurlTransport(configuration: configuration)
    defer { http1.shutdown() }
    let defaultVersion = try await Client(baseURL: tlsURL, transport: http1)
      .send(Endpoint<Seen>(.get, "protocol"))
    #expect(defaultVersion.protocolName == "HTTP/1.1")
  }

  @Test("64 requests at once over HTTP/2 share one connection as streams")
  func multiplexing() async throws {
    let transport = Self.curlHTTP2()
    defer { transport.shutdown() }
    let tlsURL = try #require(Nginx.tlsURL)
    let client = Client(baseURL: tlsURL, transport: transport)
    let seen = try await withThrowingTaskGroup(of: Seen.self) { group in
      for _ in 0..<64 { group.addTask { try await client.send(Endpoint<Seen>(.get, "protocol")) } }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    #expect(seen.count == 64)
    #expect(seen.allSatisfy { $0.protocolName == "HTTP/2.0" })
    #expect(Set(seen.map(\.connection)).count == 1, "\(Set(seen.map(\.connection)))")
    #expect(transport.openedConnections == 1)
  }

  @Test("over HTTP/2 a cancelled request, or one past its body limit, resets only its stream")
  func streamEndsKeepTheConnection() async throws {
    let transport = Self.curlHTTP2()
    defer { transport.shutdown() }
    let tlsURL = try #require(Nginx.tlsURL)
    let client = Client(baseURL: tlsURL, transport: transport)
    let first = try await client.send(Endpoint<Seen>(.get, "protocol"))
    #expect(first.protocolName == "HTTP/2.0")

    // A slow body (1 MB/s), cancelled once 64 KiB have arrived, with a quick request in flight
    // on the same connection at that moment.
    let progress = TransferProgress()
    let slow = Task {
      try await client.send(
        Endpoint<Data>(.get, "files/pattern.bin").header("X-Slow", "1")
          .downloadProgress(progress))
    }
    for await event in progress.events where event.completed >= 64 << 10 { break }
    let beside = Task { try await client.send(Endpoint<Seen>(.get, "protocol")) }
    slow.cancel()
    #expect(await courierError { _ = try await slow.value }?.kind == .cancelled)
    #expect(try await beside.value.connection == first.connection)

    // 8 MiB against a 1 MiB limit.
    let tooLarge = await courierError {
      _ = try await client.send(
        Endpoint<Data>(.get, "files/pattern.bin").maximumResponseBodySize(1 << 20))
    }
    #expect(tooLarge?.kind == .bodyTooLarge, "\(String(reflecting: tooLarge))")

    let after = try await client.send(Endpoint<Seen>(.get, "protocol"))
    #expect(after.connection == first.connection)
    #expect(transport.openedConnections == 1)
  }

  // Not over HTTP/2: nginx applies a location's `keepalive_requests` to HTTP/1.1 connections
  // only (an HTTP/2 connection takes the server's, 1,000 by default).
  @Test(
    "nginx closing a connection after 3 requests: 10 in a row all succeed, without retry",
    arguments: [Route.urlSession, .curl])
  func keepAliveLimit(route: Route) async throws {
    let (transport, base, shutdown) = try make(route)
    defer { shutdown() }
    let client = Client(baseURL: base, transport: transport)
    var connections: [String: Int] = [:]
    for _ in 0..<10 {
      let seen = try await client.send(Endpoint<Seen>(.get, "limited"))
      connections[seen.connection, default: 0] += 1
    }
    #expect(connections.values.allSatisfy { $0 <= 3 }, "\(connections)")
    #expect(connections.count >= 4, "\(connections)")
  }

  @Test(
    "an 8 MiB upload nginx refuses before reading it is the 413, at once, from memory and file",
    arguments: Route.allCases)
  func earlyRefusal(route: Route) async throws {
    let (transport, base, shutdown) = try make(route)
    defer { shutdown() }
    let client = Client.standard(baseURL: base, transport: transport, locale: "en")
    let (endpoints, removeFile) = try Self.eightMiBUploads { Endpoint<Data>($0, "upload") }
    defer { removeFile() }
    for endpoint in endpoints {
      let clock = ContinuousClock()
      let start = clock.now
      let error = await courierError { _ = try await client.send(endpoint) }
      #expect(error?.kind == .httpStatus, "\(String(reflecting: error))")
      #expect(error?.response?.status == 413)
      #expect(error?.attempts == 1)
      #expect(clock.now - start < .seconds(5))
    }
  }

  // Over HTTP/2 nginx sends its whole answer to a `return` location without reading the
  // body or opening the stream's flow-control window: libcurl 7.88 sent the first 64 KiB and
  // then waited for the rest of the upload until the attempt timed out (the `curl` command
  // hangs the same way). CurlTransport ends the transfer once the answer is whole.
  @Test(
    "an 8 MiB upload nginx answers without reading it gets the answer at once, from memory and file",
    arguments: Route.allCases)
  func earlyAnswer(route: Route) async throws {
    let (transport, base, shutdown) = try make(route)
    defer { shutdown() }
    let client = Client.standard(baseURL: base, transport: transport, locale: "en")
    let first = try await client.send(Endpoint<Seen>(.get, "protocol"))
    let (endpoints, removeFile) = try Self.eightMiBUploads { Endpoint<Seen>($0, "early") }
    defer { removeFile() }
    for endpoint in endpoints {
      let clock = ContinuousClock()
      let start = clock.now
      let seen = try await client.send(endpoint.timeout(.seconds(5)))
      #expect(clock.now - start < .seconds(5))
      #expect(seen.protocolName == (route == .curlHTTP2 ? "HTTP/2.0" : "HTTP/1.1"))
      if route == .curlHTTP2 { #expect(seen.connection == first.connection) }
    }
    // The connection still carries requests (over HTTP/2 only its stream was reset).
    let after = try await client.send(Endpoint<Seen>(.get, "protocol"))
    if route == .curlHTTP2 { #expect(after.connection == first.connection) }
  }

  @Test("a connection nginx closes without an answer is connectionLost", arguments: Route.allCases)
  func dropped(route: Route) async throws {
    let (transport, base, shutdown) = try make(route)
    defer { shutdown() }
    let client = Client(baseURL: base, transport: transport, locale: "en")
    let error = await courierError { _ = try await client.send(Endpoint<Data>(.get, "drop")) }
    #expect(error?.kind == .connectionLost, "\(String(reflecting: error))")
  }

  @Test("a gzip body from nginx decodes once through the preset", arguments: Route.allCases)
  func gzip(route: Route) async throws {
    struct Items: Decodable, Sendable { let items: [Int] }
    let (transport, base, shutdown) = try make(route)
    defer { shutdown() }
    let response = try await Client.standard(baseURL: base, transport: transport)
      .response(for: Endpoint<Items>(.get, "data.json"))
    #expect(response.value.items == Array(0..<20_000))
    #expect(response.response.headers["Content-Encoding"] == nil)
    if route != .urlSession {
      // Without GzipMiddleware the bytes come as nginx sent them: still gzip.
      let raw = try await Client(baseURL: base, transport: transport)
        .send(Endpoint<Data>(.get, "data.json").header("Accept-Encoding", "gzip"))
      #expect(raw.starts(with: [0x1f, 0x8b]))
    }
  }

  @Test(
    "a download cut off part-way resumes from nginx with Range and If-Range, byte for byte",
    arguments: Route.allCases)
  func resume(route: Route) async throws {
    let (transport, base, shutdown) = try make(route)
    defer { shutdown() }
    let client = Client(baseURL: base, transport: transport)
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("courier-nginx-resume-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("pattern.bin")

    // First try: at 1 MB/s, cancelled once 256 KiB are on disk.
    let progress = TransferProgress()
    let first = Task {
      try await client.download(
        Endpoint<Void>(.get, "files/pattern.bin").header("X-Slow", "1").downloadProgress(progress),
        to: destination)
    }
    for await event in progress.events where event.completed >= 256 << 10 {
      first.cancel()
      break
    }
    let cancelled = await courierError { _ = try await first.value }
    #expect(cancelled?.kind == .cancelled, "\(String(reflecting: cancelled))")
    #expect(!FileManager.default.fileExists(atPath: destination.path))

    let result = try await client.download(
      Endpoint<Void>(.get, "files/pattern.bin"), to: destination)
    #expect(result.resumedFrom >= 256 << 10, "resumed from \(result.resumedFrom)")
    #expect(result.byteCount == 8 << 20)
    let bytes = try Data(contentsOf: destination)
    #expect(bytes.count == 8 << 20)
    let mismatch = bytes.enumerated().first { $0.element != UInt8($0.offset % 251) }
    #expect(mismatch == nil, "first wrong byte at \(mismatch?.offset ?? -1)")
  }

  @Test(
    "an 8 MiB body streamed with a 64 KiB buffer: every byte in order (pause and resume)",
    arguments: Route.allCases)
  func streamedPattern(route: Route) async throws {
    let (transport, base, shutdown) = try make(route)
    defer { shutdown() }
    let client = Client(baseURL: base, transport: transport)
    let streamed = try await client.stream(
      Endpoint<Void>(.get, "files/pattern.bin"), bufferSize: 64 << 10)
    var offset = 0
    var mismatch: Int?
    for try await chunk in streamed.body {
      if mismatch == nil,
        let wrong = chunk.enumerated().first(where: {
          $0.element != UInt8(($0.offset + offset) % 251)
        })
      {
        mismatch = offset + wrong.offset
      }
      offset += chunk.count
      // A slower reader than the loopback: the buffer fills and the transfer pauses.
      await Task.yield()
    }
    #expect(offset == 8 << 20)
    #expect(mismatch == nil, "first wrong byte at \(mismatch ?? -1)")
  }

  @Test("a body sent at 1 MB/s arrives while it is sent, over CurlTransport")
  func streamedWhileSent() async throws {
    let (transport, base, shutdown) = try make(.curl)
    defer { shutdown() }
    let client = Client(baseURL: base, transport: transport)
    let start = ContinuousClock.now
    let streamed = try await client.stream(
      Endpoint<Void>(.get, "files/pattern.bin").header("X-Slow", "1"))
    var firstChunk: Duration?
    var bytes = 0
    for try await chunk in streamed.body {
      if firstChunk == nil { firstChunk = ContinuousClock.now - start }
      bytes += chunk.count
      // Half the body is enough to see it arrive in pieces.
      if bytes >= 4 << 20 { break }
    }
    let half = ContinuousClock.now - start
    // nginx sends 8 MiB at 1 MB/s: the first piece comes at once, half the body after ~4 s.
    #expect(try #require(firstChunk) < .seconds(1))
    #expect(half > .seconds(2))
  }

  @Test("gzip from nginx, streamed through Client.standard: decoded as it is read")
  func streamedGzip() async throws {
    let (transport, base, shutdown) = try make(.curl)
    defer { shutdown() }
    let client = Client.standard(baseURL: base, transport: transport)
    struct Items: Decodable { let items: [Int] }
    let streamed = try await client.stream(Endpoint<Void>(.get, "data.json"), bufferSize: 4096)
    #expect(streamed.head.headers[.contentEncoding] == nil)
    let body = try await streamed.body.collect(upTo: 8 << 20)
    let items = try JSONDecoder().decode(Items.self, from: body)
    #expect(items.items == Array(0..<20000))
  }
}

/// The nginx `.ci/run` starts, from the environment.
enum Nginx {
  static let plainURL: URL? = url("COURIER_NGINX_URL")
  static let tlsURL: URL? = url("COURIER_NGINX_TLS_URL")

  private static func url(_ name: String) -> URL? {
    ProcessInfo.processInfo.environment[name]
      .flatMap { URL(string: $0.hasSuffix("/") ? $0 : $0 + "/") }
  }
}
