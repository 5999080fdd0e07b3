import CourierCore
import CourierGzip
import CourierTesting
import Foundation
import Testing

/// Promises of the Gzip article (Sources/Courier/Courier.docc) and of `GzipMiddleware`'s
/// documentation that no other test held (see `Docs/Promises.md`).
@Suite("Promises: gzip", .timeLimit(.minutes(5)))
struct PromisesGzipTests {
  let text = repetitiveBytes(4096)

  /// Sends a POST of `body` through a client that compresses every request body, and returns
  /// the request as the stub saw it.
  func sent(_ body: RequestBody, contentType: String) async throws -> Request {
    let stub = StubTransport(fallback: .status(204))
    let client = Client(
      baseURL: URL(string: "https://api.test/"), transport: stub,
      middleware: [GzipMiddleware(requestCompression: .enabled())])
    var endpoint = Endpoint<Void>(.post, "upload")
    if let data = body.data {
      endpoint = endpoint.body(data, contentType: contentType)
    } else if let file = body.fileURL {
      endpoint = endpoint.fileBody(file, contentType: contentType)
    }
    try await client.send(endpoint)
    return try #require(stub.requests.last)
  }

  @Test(
    "SVG, BMP and WAV are compressed; other images and audio, fonts and archives are not",
    arguments: [
      ("image/svg+xml", true), ("image/bmp", true), ("audio/wav", true), ("audio/x-wav", true),
      ("image/gif", false), ("image/avif", false), ("audio/mpeg", false), ("audio/ogg", false),
      ("video/webm", false), ("font/woff2", false), ("font/woff", false),
      ("application/x-7z-compressed", false), ("application/x-bzip2", false),
      ("application/x-xz", false), ("application/zstd", false), ("application/vnd.rar", false),
      ("text/csv; charset=utf-8", true),
    ])
  func compressedMediaTypes(contentType: String, compressed: Bool) async throws {
    let request = try await sent(.data(text), contentType: contentType)
    #expect((request.headers[.contentEncoding] == "gzip") == compressed)
    #expect((request.body.data == text) == !compressed)
  }

  @Test(
    "bytes that start like an already-compressed format are sent as they are",
    arguments: [
      ("zip", [0x50, 0x4B, 0x03, 0x04] as [UInt8]), ("JPEG", [0xFF, 0xD8, 0xFF]),
      ("GIF", [0x47, 0x49, 0x46, 0x38]), ("zstd", [0x28, 0xB5, 0x2F, 0xFD]),
      ("xz", [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]), ("bzip2", [0x42, 0x5A, 0x68]),
      ("7z", [0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]), ("RAR", [0x52, 0x61, 0x72, 0x21]),
      ("WebP", Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBP".utf8)),
    ])
  func compressedSignatures(format: String, signature: [UInt8]) async throws {
    let body = Data(signature) + text
    let request = try await sent(.data(body), contentType: "application/octet-stream")
    #expect(request.headers[.contentEncoding] == nil, "\(format)")
    #expect(request.body.data == body, "\(format)")
  }

  @Test("a file body is sent as it is: compressing it would read the whole file into memory")
  func fileBodiesAreNotCompressed() async throws {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent(
      "promises-gzip-\(UUID().uuidString).json")
    try text.write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    let request = try await sent(.file(file), contentType: "application/json")
    #expect(request.headers[.contentEncoding] == nil)
    #expect(request.body.fileURL == file)
  }

  @Test("GzipMiddleware() defaults: no request compression, decoding within 32 MiB and 100×")
  func defaults() {
    let gzip = GzipMiddleware()
    #expect(gzip.requestCompression == .disabled)
    #expect(gzip.requestCompression.threshold == 1024)
    #expect(RequestCompression.defaultThreshold == 1024)
    #expect(gzip.responseDecompression == .standard)
    #expect(gzip.responseDecompression.limit == .standard)
    #expect(DecompressionLimit.standard.maximumSize == 32 * 1024 * 1024)
    #expect(DecompressionLimit.standard.maximumRatio == 100)
    #expect(gzip.addsAcceptEncoding)
    #expect(GzipMiddleware.acceptEncoding == "gzip, deflate")
    #expect(gzip.decodesResponseBodies)
  }
}
