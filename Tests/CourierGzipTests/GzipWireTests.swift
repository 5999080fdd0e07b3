import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A server and a URLSession client with a `GzipMiddleware`, shut down by the test.
struct GzipWireFixture {
  let server: MockServer
  let transport: URLSessionTransport
  let client: Client

  init(_ middleware: GzipMiddleware = GzipMiddleware()) throws {
    server = try MockServer()
    transport = URLSessionTransport()
    client = Client(
      baseURL: server.baseURL, transport: transport, middleware: [middleware],
      pipeline: .envelope(.codeZero))
  }

  func shutdown() {
    transport.shutdown()
    server.shutdown()
  }
}

@Suite("GzipMiddleware over URLSessionTransport and MockServer", .timeLimit(.minutes(5)))
struct GzipWireTests {
  static let json =
    #"{"code":0,"msg":"ok","data":{"name":"\#(String(repeating: "Li Lei ", count: 300))"}}"#

  @Test(
    "a gzip response arrives decoded exactly once, with Content-Encoding and Content-Length true")
  func gzipResponse() async throws {
    let fixture = try GzipWireFixture()
    defer { fixture.shutdown() }
    let compressed = try GzipCompressor.compress(Data(Self.json.utf8))
    fixture.server.enqueue(
      MockResponse(status: 200, body: compressed)
        .addingHeader("Content-Type", "application/json")
        .addingHeader("Content-Encoding", "gzip"))
    let decoded = try await fixture.client.response(for: Endpoint<Name>(.get, "me"))
    #expect(decoded.value.name.hasPrefix("Li Lei"))
    #expect(decoded.response.body == Data(Self.json.utf8))
    #expect(decoded.response.headers[.contentEncoding] == nil)
    #expect(decoded.response.headers[.contentLength] == String(Self.json.utf8.count))
    let recorded = try await fixture.server.takeRequest()
    #expect(recorded.header("Accept-Encoding") == "gzip, deflate")
  }

  @Test("a chunked gzip response (no Content-Length) is decoded once too")
  func chunkedGzipResponse() async throws {
    let fixture = try GzipWireFixture()
    defer { fixture.shutdown() }
    let compressed = try GzipCompressor.compress(Data(Self.json.utf8))
    fixture.server.enqueue(
      MockResponse(status: 200, body: compressed, chunked: true)
        .addingHeader("Content-Encoding", "gzip"))
    let decoded = try await fixture.client.response(for: Endpoint<Name>(.get, "me"))
    #expect(decoded.response.body == Data(Self.json.utf8))
    #expect(decoded.response.headers[.contentEncoding] == nil)
  }

  @Test("a compressed request body reaches the server encoded and decodes there to the original")
  func compressedRequestBody() async throws {
    let fixture = try GzipWireFixture(GzipMiddleware(requestCompression: .enabled()))
    defer { fixture.shutdown() }
    fixture.server.enqueue(.json(#"{"code":0,"data":{"name":"ok"}}"#))
    let original = repetitiveBytes(100_000)
    _ = try await fixture.client.send(
      Endpoint<Name>(.post, "upload").body(original, contentType: "application/json"))
    let recorded = try await fixture.server.takeRequest()
    #expect(recorded.body.starts(with: [0x1F, 0x8B]))
    #expect(recorded.header("Content-Encoding") == "gzip")
    #expect(recorded.header("Content-Length") == String(recorded.body.count))
    #expect(recorded.body.count < original.count / 4)
    #expect(try GzipDecompressor.decompress(recorded.body) == original)
  }

  /// What URLSession on Linux does with `Content-Encoding: gzip` over a plain body: libcurl
  /// (CURLOPT_ACCEPT_ENCODING is always set by swift-corelibs-foundation) fails the transfer
  /// with "Error while processing content unencoding" before any middleware sees a byte, and
  /// URLSessionTransport reports `corruptBody`. Nothing a middleware can do; a transport that
  /// does not decode (StubTransport here; a libcurl transport with decoding off later) hands
  /// the plain body to GzipMiddleware, which decodes it (see GzipMiddlewareTests).
  @Test("URLSession on Linux fails a plain body labelled gzip before the middleware runs")
  func labelledGzipButPlainOverURLSession() async throws {
    let fixture = try GzipWireFixture()
    defer { fixture.shutdown() }
    fixture.server.enqueue(
      MockResponse.json(#"{"code":0,"data":{"name":"Li"}}"#).addingHeader(
        "Content-Encoding", "gzip"))
    let result = await courierError {
      try await fixture.client.send(Endpoint<Name>(.get, "plain"))
    }
    #if canImport(FoundationNetworking)
      #expect(result?.kind == .corruptBody, "\(String(reflecting: result))")
      #expect(String(reflecting: result).contains("unencoding"))
    #else
      #expect(result == nil)
    #endif
  }

  /// Found by a hostile test server: URLSession on Linux reported trailing bytes after a gzip
  /// body as `URLError` -1 "Failed writing received data to disk/application", which mapped
  /// to `transport` ("A network error occurred") though nothing was wrong with the network.
  @Test("gzip with trailing garbage is corruptBody over URLSession too, not a network error")
  func trailingGarbageOverURLSession() async throws {
    let fixture = try GzipWireFixture()
    defer { fixture.shutdown() }
    let body = try GzipCompressor.compress(Data(#"{"code":0,"data":{"name":"Li"}}"#.utf8))
    fixture.server.enqueue(
      MockResponse(body: body + Data("GARBAGE".utf8)).addingHeader("Content-Encoding", "gzip"))
    let result = await courierError {
      try await fixture.client.send(Endpoint<Name>(.get, "garbage"))
    }
    #expect(result?.kind == .corruptBody, "\(String(reflecting: result))")
  }

  @Test("stacked codings (gzip, gzip) arrive decoded once over URLSession, with true headers")
  func stackedOverURLSession() async throws {
    let fixture = try GzipWireFixture()
    defer { fixture.shutdown() }
    let json = Data(#"{"code":0,"data":{"name":"Li"}}"#.utf8)
    let twice = try GzipCompressor.compress(try GzipCompressor.compress(json))
    fixture.server.enqueue(MockResponse(body: twice).addingHeader("Content-Encoding", "gzip, gzip"))
    let decoded = try await fixture.client.response(for: Endpoint<Name>(.get, "twice"))
    #expect(decoded.value.name == "Li")
    #expect(decoded.response.headers[.contentEncoding] == nil)
    #expect(decoded.response.headers[.contentLength] == String(decoded.response.body.count))
  }

  @Test("a plain body labelled gzip decodes over a transport that does not auto-decode")
  func labelledGzipButPlainOverStub() async throws {
    let json = Data(#"{"code":0,"data":{"name":"Li"}}"#.utf8)
    let stub = StubTransport([
      try stubResponse(
        json, headers: [("Content-Type", "application/json"), ("Content-Encoding", "gzip")])
    ])
    let decoded = try await stubClient(stub).response(for: Endpoint<Name>(.get, "plain"))
    #expect(decoded.value.name == "Li")
    #expect(decoded.response.headers[.contentEncoding] == nil)
    #expect(decoded.response.headers[.contentLength] == String(json.count))
  }
}
