import CourierCore
import CourierGzip
import CourierTesting
import Foundation
import Testing

/// A cassette sits below `GzipMiddleware`, where bodies are still compressed: a secret in a
/// gzip or deflate body must not reach the file in a form that one decompression recovers
/// (found by the secret-travel matrix of issue #33).
@Suite("Cassettes and content codings", .timeLimit(.minutes(5)))
struct CassetteCodingTests {
  static let responseJSON = #"{"user":"li","access_token":"RESPONSE-TOKEN-1"}"#

  static func temporaryFile() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-cassette-coding-\(UUID().uuidString).json")
  }

  /// The cassette's text, with every base64 body decoded and, if it decompresses as gzip,
  /// zlib or raw deflate, decompressed too.
  static func recoverable(_ file: URL) throws -> String {
    var texts = [try String(contentsOf: file, encoding: .utf8)]
    let cassette = try Cassette(contentsOf: file)
    for body in cassette.interactions.flatMap({ [$0.request.body, $0.response?.body] }) {
      guard let body else { continue }
      texts.append(String(decoding: body.data, as: UTF8.self))
      for format in [GzipFormat.gzip, .zlib, .rawDeflate] {
        if let plain = try? GzipDecompressor.decompress(body.data, format: format) {
          texts.append(String(decoding: plain, as: UTF8.self))
        }
      }
    }
    return texts.joined(separator: "\n")
  }

  @Test(
    "a gzip or deflate response is recorded decoded and redacted, and replays",
    arguments: [("gzip", GzipFormat.gzip), ("deflate", .zlib), ("x-gzip, identity", .gzip)])
  func codedResponse(coding: String, format: GzipFormat) async throws {
    var headers = HTTPHeaders()
    try headers.add(.contentType, "application/json")
    try headers.add(.contentEncoding, coding)
    let compressed = try GzipCompressor.compress(Data(Self.responseJSON.utf8), format: format)
    try headers.add(.contentLength, String(compressed.count))
    let file = Self.temporaryFile()
    defer { try? FileManager.default.removeItem(at: file) }
    let recording = RecordingTransport(
      wrapping: StubTransport(fallback: StubResponse(headers: headers, body: compressed)),
      cassette: file)
    let base = try #require(URL(string: "https://api.example.test/"))
    let client = Client(baseURL: base, transport: recording, middleware: [GzipMiddleware()])
    let live = try await client.send(Endpoint<Data>(.get, "login"))
    #expect(String(decoding: live, as: UTF8.self) == Self.responseJSON)
    #expect(!(try Self.recoverable(file)).contains("RESPONSE-TOKEN-1"))

    // Replayed, the recorded body is what the client decodes.
    let replay = Client(
      baseURL: base, transport: try ReplayTransport(cassette: file),
      middleware: [GzipMiddleware()])
    let replayed = try await replay.send(Endpoint<Data>(.get, "login"))
    #expect(String(decoding: replayed, as: UTF8.self) == #"{"user":"li","access_token":"***"}"#)
  }

  @Test("a compressed request body is recorded decoded and redacted, and still matches")
  func codedRequest() async throws {
    let padding = String(repeating: "x", count: 2048)
    let json = #"{"padding":"\#(padding)","password":"REQUEST-PASSWORD-2"}"#
    let endpoint = Endpoint<Void>(.post, "login")
      .body(Data(json.utf8), contentType: "application/json").compressRequestBody()
    let file = Self.temporaryFile()
    defer { try? FileManager.default.removeItem(at: file) }
    let stub = StubTransport(fallback: .status(204))
    let base = try #require(URL(string: "https://api.example.test/"))
    let client = Client(
      baseURL: base, transport: RecordingTransport(wrapping: stub, cassette: file),
      middleware: [GzipMiddleware()])
    try await client.send(endpoint)
    // The body went compressed: the case is not void.
    #expect(stub.requests.first?.headers[.contentEncoding] == "gzip")
    #expect(!(try Self.recoverable(file)).contains("REQUEST-PASSWORD-2"))

    let replay = Client(
      baseURL: base,
      transport: try ReplayTransport(cassette: file, matching: .methodURLAndBody),
      middleware: [GzipMiddleware()])
    try await replay.send(endpoint)
  }
}
