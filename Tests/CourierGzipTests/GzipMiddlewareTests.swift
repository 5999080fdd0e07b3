import CourierCore
import CourierTesting
import Foundation
import Synchronization
import Testing

@testable import CourierGzip

/// A client over `stub` with `middleware` and the envelope pipeline `{"code":0,"data":…}`.
func stubClient(_ stub: StubTransport, _ middleware: GzipMiddleware = GzipMiddleware()) -> Client {
  Client(
    baseURL: URL(string: "https://api.test/"), transport: stub, middleware: [middleware],
    pipeline: .envelope(.codeZero))
}

/// A stub response with `body` and the given header fields.
func stubResponse(_ body: Data, headers: [(String, String)]) throws -> StubResponse {
  StubResponse(status: 200, headers: try HTTPHeaders(headers), body: body)
}

@Suite("GzipMiddleware over StubTransport", .timeLimit(.minutes(5)))
struct GzipMiddlewareTests {
  let text = repetitiveBytes(4096)

  /// Sends a POST of `body` through `middleware` and returns the request as the stub saw it.
  func sent(
    _ body: Data, contentType: String = "application/json",
    middleware: GzipMiddleware = GzipMiddleware(requestCompression: .enabled()),
    endpoint: (Endpoint<Data>) -> Endpoint<Data> = { $0 }
  ) async throws -> Request {
    let stub = StubTransport(fallback: .json(#"{"code":0,"data":{}}"#))
    let client = Client(
      baseURL: URL(string: "https://api.test/"), transport: stub, middleware: [middleware])
    _ = try await client.send(
      endpoint(Endpoint<Data>(.post, "upload").body(body, contentType: contentType)))
    return try #require(stub.requests.last)
  }

  // MARK: Requests

  @Test("1023 bytes are sent as they are, 1024 bytes are compressed")
  func threshold() async throws {
    let below = try await sent(text.prefix(1023))
    #expect(below.body.data == text.prefix(1023))
    #expect(below.headers[.contentEncoding] == nil)
    let at = try await sent(text.prefix(1024))
    let compressed = try #require(at.body.data)
    #expect(at.headers[.contentEncoding] == "gzip")
    #expect(at.headers[.contentLength] == String(compressed.count))
    #expect(compressed.count < 1024)
    #expect(try GzipDecompressor.decompress(compressed) == text.prefix(1024))
  }

  @Test("a client's request compression is off by default")
  func offByDefault() async throws {
    let request = try await sent(text, middleware: GzipMiddleware())
    #expect(request.body.data == text)
    #expect(request.headers[.contentEncoding] == nil)
    #expect(GzipMiddleware().requestCompression == .disabled)
  }

  @Test("an endpoint opts in while the client is off, and out while it is on")
  func perEndpoint() async throws {
    let optedIn = try await sent(text, middleware: GzipMiddleware()) { $0.compressRequestBody() }
    #expect(optedIn.headers[.contentEncoding] == "gzip")
    #expect(try GzipDecompressor.decompress(try #require(optedIn.body.data)) == text)
    let optedOut = try await sent(text) { $0.compressRequestBody(false) }
    #expect(optedOut.headers[.contentEncoding] == nil)
    #expect(optedOut.body.data == text)
    // The threshold still applies to an endpoint that opts in.
    let small = try await sent(text.prefix(100), middleware: GzipMiddleware()) {
      $0.compressRequestBody()
    }
    #expect(small.headers[.contentEncoding] == nil)
  }

  @Test("a body that already has a Content-Encoding is left alone")
  func existingContentEncoding() async throws {
    let request = try await sent(text) { $0.header(.contentEncoding, "br") }
    #expect(request.headers[.contentEncoding] == "br")
    #expect(request.body.data == text)
  }

  @Test(
    "already-compressed content types are left alone",
    arguments: [
      "image/jpeg", "image/png", "image/webp", "application/zip", "application/gzip", "video/mp4",
    ])
  func compressedTypes(contentType: String) async throws {
    let request = try await sent(text, contentType: contentType)
    #expect(request.headers[.contentEncoding] == nil)
    #expect(request.body.data == text)
  }

  @Test("already-compressed bytes are left alone whatever their content type")
  func compressedSignatures() async throws {
    let gzip = try GzipCompressor.compress(randomBytes(5000))
    let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + text
    for body in [gzip, png] {
      let request = try await sent(body, contentType: "application/octet-stream")
      #expect(request.headers[.contentEncoding] == nil)
      #expect(request.body.data == body)
    }
    // octet-stream itself is not skipped: repetitive bytes under it are compressed.
    let plain = try await sent(text, contentType: "application/octet-stream")
    #expect(plain.headers[.contentEncoding] == "gzip")
  }

  @Test("a body that does not get smaller is sent as it is")
  func incompressible() async throws {
    let random = randomBytes(4096)
    let request = try await sent(random)
    #expect(request.headers[.contentEncoding] == nil)
    #expect(request.body.data == random)
  }

  @Test("Accept-Encoding: gzip, deflate is added only when absent, and not when turned off")
  func acceptEncoding() async throws {
    let added = try await sent(Data())
    #expect(added.headers[.acceptEncoding] == "gzip, deflate")
    let kept = try await sent(Data()) { $0.header(.acceptEncoding, "br") }
    #expect(kept.headers.values(for: .acceptEncoding) == ["br"])
    // Left to a transport that asks by itself; responses are still decoded.
    let leftOut = try await sent(Data(), middleware: GzipMiddleware(addsAcceptEncoding: false))
    #expect(leftOut.headers[.acceptEncoding] == nil)
    #expect(GzipMiddleware(addsAcceptEncoding: false).decodesResponseBodies)
  }

  // MARK: Responses

  @Test("a gzip response is decoded, through the envelope pipeline, with true headers")
  func decodesGzip() async throws {
    let json = #"{"code":0,"data":{"name":"\#(String(repeating: "Li", count: 500))"}}"#
    let compressed = try GzipCompressor.compress(Data(json.utf8))
    let stub = StubTransport([
      try stubResponse(
        compressed,
        headers: [
          ("Content-Type", "application/json"), ("Content-Encoding", "gzip"),
          ("Content-Length", String(compressed.count)),
        ])
    ])
    let decoded = try await stubClient(stub).response(for: Endpoint<Name>(.get, "me"))
    #expect(decoded.value.name.count == 1000)
    #expect(decoded.response.body == Data(json.utf8))
    #expect(decoded.response.headers[.contentEncoding] == nil)
    #expect(decoded.response.headers[.contentLength] == String(json.utf8.count))
  }

  @Test("a business failure inside a gzip body reaches the middleware outside gzip as thrown")
  func businessFailureInGzipBody() async throws {
    let json = #"{"code":40101,"msg":"token expired"}"#
    let compressed = try GzipCompressor.compress(Data(json.utf8))
    let stub = StubTransport([
      try stubResponse(
        compressed, headers: [("Content-Type", "application/json"), ("Content-Encoding", "gzip")])
    ])
    /// Records what the layer outside gzip saw come back.
    final class Outer: Middleware {
      let seen = Mutex<CourierError?>(nil)
      func intercept(_ request: Request, next: Next) async throws -> Response {
        do {
          return try await next(request)
        } catch let error as CourierError {
          seen.withLock { $0 = error }
          throw error
        }
      }
    }
    let outer = Outer()
    let client = Client(
      baseURL: URL(string: "https://api.test/"), transport: stub,
      middleware: [outer, GzipMiddleware()], pipeline: .envelope(.codeZero))
    let error = await #expect(throws: CourierError.self) {
      try await client.send(Endpoint<Name>(.get, "me"))
    }
    let seen = outer.seen.withLock { $0 }
    #expect(seen?.kind == .business)
    #expect(seen?.code == "40101")
    #expect(error?.kind == .business)
  }

  @Test(
    "deflate responses decode, zlib-wrapped and raw", arguments: [GzipFormat.zlib, .rawDeflate])
  func decodesDeflate(format: GzipFormat) async throws {
    let json = #"{"code":0,"data":{"name":"Han Meimei"}}"#
    let compressed = try GzipCompressor.compress(Data(json.utf8), format: format)
    let stub = StubTransport([
      try stubResponse(compressed, headers: [("Content-Encoding", "deflate")])
    ])
    let decoded = try await stubClient(stub).response(for: Endpoint<Name>(.get, "me"))
    #expect(decoded.value.name == "Han Meimei")
    #expect(decoded.response.headers[.contentEncoding] == nil)
  }

  @Test(
    "a body labelled gzip or deflate that is plain JSON decodes, and the label is removed",
    arguments: ["gzip", "deflate", "x-gzip"])
  func labelledButPlain(coding: String) async throws {
    let json = Data(#"{"code":0,"data":{"name":"Li"}}"#.utf8)
    // The Content-Length an unwary transport leaves: the compressed size.
    let stub = StubTransport([
      try stubResponse(json, headers: [("Content-Encoding", coding), ("Content-Length", "25")])
    ])
    let decoded = try await stubClient(stub).response(for: Endpoint<Name>(.get, "me"))
    #expect(decoded.value.name == "Li")
    #expect(decoded.response.headers[.contentEncoding] == nil)
    #expect(decoded.response.headers[.contentLength] == String(json.count))
  }

  @Test("decoding is by the bytes: a gzip body without Content-Encoding is a file, kept as is")
  func gzipFileWithoutLabel() async throws {
    let archive = try GzipCompressor.compress(text)
    let stub = StubTransport([
      try stubResponse(archive, headers: [("Content-Type", "application/gzip")])
    ])
    let response = try await Client(
      baseURL: URL(string: "https://api.test/"), transport: stub, middleware: [GzipMiddleware()]
    ).send(Request(url: try #require(URL(string: "https://api.test/file.gz"))))
    #expect(response.body == archive)
  }

  @Test("a transport that decoded already (Content-Length ≠ body) is not decoded twice")
  func notTwice() async throws {
    // A .gz file served with Content-Encoding: gzip, after the transport removed that layer.
    let archive = try GzipCompressor.compress(text)
    let stub = StubTransport([
      try stubResponse(archive, headers: [("Content-Encoding", "gzip"), ("Content-Length", "17")])
    ])
    let response = try await Client(
      baseURL: URL(string: "https://api.test/"), transport: stub, middleware: [GzipMiddleware()]
    ).send(Request(url: try #require(URL(string: "https://api.test/file.gz"))))
    #expect(response.body == archive)
    #expect(response.headers[.contentLength] == String(archive.count))
    #expect(response.headers[.contentEncoding] == nil)
  }

  @Test("a coding gzip does not decode stays as it came; headers fixed if the transport decoded")
  func otherCodings() async throws {
    let client = { (stub: StubTransport) in
      Client(
        baseURL: URL(string: "https://api.test/"), transport: stub, middleware: [GzipMiddleware()])
    }
    let url = try #require(URL(string: "https://api.test/x"))
    // URLSession decoded a br body: the compressed Content-Length no longer fits it.
    let decoded = try await client(
      StubTransport([
        try stubResponse(text, headers: [("Content-Encoding", "br"), ("Content-Length", "17")])
      ])
    ).send(Request(url: url))
    #expect(decoded.body == text)
    #expect(decoded.headers[.contentEncoding] == nil)
    #expect(decoded.headers[.contentLength] == String(text.count))
    // Still encoded (the lengths agree): nothing is touched.
    let raw = Data([0x0b, 0x02, 0x80, 0x68, 0x69, 0x03])
    let kept = try await client(
      StubTransport([
        try stubResponse(
          raw, headers: [("Content-Encoding", "br"), ("Content-Length", String(raw.count))])
      ])
    ).send(Request(url: url))
    #expect(kept.body == raw)
    #expect(kept.headers[.contentEncoding] == "br")
    #expect(kept.headers[.contentLength] == String(raw.count))
  }

  @Test("stacked codings are undone last first: deflate, gzip and gzip, gzip, with identity")
  func stackedCodings() async throws {
    let url = try #require(URL(string: "https://api.test/x"))
    let client = { (stub: StubTransport) in
      Client(
        baseURL: URL(string: "https://api.test/"), transport: stub, middleware: [GzipMiddleware()])
    }
    let deflated = try GzipCompressor.compress(text, format: .zlib)
    for (label, body) in [
      ("deflate, gzip", try GzipCompressor.compress(deflated)),
      ("gzip, gzip", try GzipCompressor.compress(try GzipCompressor.compress(text))),
      ("gzip, identity,, X-GZIP", try GzipCompressor.compress(try GzipCompressor.compress(text))),
    ] {
      let response = try await client(
        StubTransport([try stubResponse(body, headers: [("Content-Encoding", label)])])
      ).send(Request(url: url))
      #expect(response.body == text, "\(label)")
      #expect(response.headers[.contentEncoding] == nil, "\(label)")
    }
    // A server that labels one layer too many: the layer that is not encoded ends decoding.
    let once = try await client(
      StubTransport([
        try stubResponse(
          try GzipCompressor.compress(text), headers: [("Content-Encoding", "gzip, gzip")])
      ])
    ).send(Request(url: url))
    #expect(once.body == text)
    // A list naming a coding gzip does not know is left as it came.
    let mixed = try GzipCompressor.compress(text)
    let kept = try await client(
      StubTransport([
        try stubResponse(
          mixed,
          headers: [("Content-Encoding", "br, gzip"), ("Content-Length", String(mixed.count))])
      ])
    ).send(Request(url: url))
    #expect(kept.body == mixed)
    #expect(kept.headers[.contentEncoding] == "br, gzip")
  }

  @Test("more than five stacked codings, or an inner layer past the limit, fail clearly")
  func stackedCodingLimits() async throws {
    var six = text
    for _ in 0..<6 { six = try GzipCompressor.compress(six) }
    let tooMany = StubTransport([
      try stubResponse(
        six,
        headers: [("Content-Encoding", Array(repeating: "gzip", count: 6).joined(separator: ","))])
    ])
    let error = await courierError { try await stubClient(tooMany).send(Endpoint<Data>(.get, "x")) }
    #expect(error?.kind == .corruptBody)
    #expect(error?.debugDescription.contains("6 content codings; at most 5") == true)
    // A bomb inside a second layer: the inner layer's ceiling counts from the wire bytes
    // (100× of a few hundred bytes, but never under the 1 MiB floor), not from the outer
    // layer's output.
    let bomb = try GzipCompressor.compress(Data(count: 8 * 1024 * 1024), level: .best)
    let wrapped = try GzipCompressor.compress(bomb, level: .best)
    let nested = StubTransport([
      try stubResponse(wrapped, headers: [("Content-Encoding", "gzip, gzip")])
    ])
    let nestedError = await courierError {
      try await stubClient(nested).send(Endpoint<Data>(.get, "x"))
    }
    #expect(nestedError?.kind == .bodyTooLarge)
    #expect(nestedError?.debugDescription.contains("limit of 1 MiB") == true)
  }

  @Test("a truncated gzip response is corruptBody with the raw response kept")
  func truncatedResponse() async throws {
    let compressed = try GzipCompressor.compress(text).dropLast(10)
    let stub = StubTransport([
      try stubResponse(Data(compressed), headers: [("Content-Encoding", "gzip")])
    ])
    let error = await courierError { try await stubClient(stub).send(Endpoint<Data>(.get, "x")) }
    #expect(error?.kind == .corruptBody)
    #expect(error?.response?.body == Data(compressed))
    #expect(error?.debugDescription.contains("truncated") == true)
  }

  @Test("a gzip bomb response is bodyTooLarge")
  func bombResponse() async throws {
    let bomb = try GzipCompressor.compress(Data(count: 8 * 1024 * 1024), level: .best)
    let stub = StubTransport([try stubResponse(bomb, headers: [("Content-Encoding", "gzip")])])
    let error = await courierError { try await stubClient(stub).send(Endpoint<Data>(.get, "x")) }
    #expect(error?.kind == .bodyTooLarge)
  }

  @Test("a HEAD response's headers are left alone: they describe the body a GET would get")
  func headResponse() async throws {
    let stub = StubTransport([
      try stubResponse(Data(), headers: [("Content-Encoding", "gzip"), ("Content-Length", "1234")])
    ])
    let response = try await Client(
      baseURL: URL(string: "https://api.test/"), transport: stub, middleware: [GzipMiddleware()]
    ).send(Request(method: .head, url: try #require(URL(string: "https://api.test/x"))))
    #expect(response.headers[.contentEncoding] == "gzip")
    #expect(response.headers[.contentLength] == "1234")
  }

  @Test("decoding turned off leaves the response as it came")
  func decodingOff() async throws {
    let compressed = try GzipCompressor.compress(text)
    let stub = StubTransport([try stubResponse(compressed, headers: [("Content-Encoding", "gzip")])]
    )
    let middleware = GzipMiddleware(responseDecompression: .disabled)
    let response = try await Client(
      baseURL: URL(string: "https://api.test/"), transport: stub, middleware: [middleware]
    ).send(Request(url: try #require(URL(string: "https://api.test/x"))))
    #expect(response.body == compressed)
    #expect(response.headers[.contentEncoding] == "gzip")
    #expect(stub.requests.last?.headers[.acceptEncoding] == nil)
  }

  @Test("the description names the settings on one line")
  func description() {
    #expect(
      GzipMiddleware().description
        == "GzipMiddleware(compress requests: off (≥ 1 KiB when on); decode: gzip, deflate;"
        + " limit 32 MiB, ratio 100×)")
    #expect(
      GzipMiddleware(
        requestCompression: .enabled(threshold: 4096), responseDecompression: .disabled
      ).description == "GzipMiddleware(compress requests: on (≥ 4 KiB); decode: off)")
    #expect(
      GzipMiddleware(addsAcceptEncoding: false).description.hasSuffix(
        "ratio 100×; Accept-Encoding: the transport's)"))
  }
}

struct Name: Decodable, Sendable {
  let name: String
}
