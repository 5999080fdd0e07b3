import CourierTesting
import Foundation
import Testing

@testable import CourierCore

/// A private folder for one test's files, removed by ``remove()``.
struct Scratch {
  let folder: URL

  init() throws {
    folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-multipart-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
  }

  /// Writes `data` to `name` in the folder.
  func file(_ name: String, _ data: Data) throws -> URL {
    let url = folder.appendingPathComponent(name)
    try data.write(to: url)
    return url
  }

  /// The names of the files in the folder.
  var contents: [String] {
    (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
  }

  func remove() {
    try? FileManager.default.removeItem(at: folder)
  }
}

/// The bytes of an encoded form, from memory or from its file.
func bytes(of encoded: MultipartForm.Encoded) throws -> Data {
  if let data = encoded.body.data { return data }
  let url = try #require(encoded.body.fileURL)
  return try Data(contentsOf: url)
}

@Suite("MultipartForm", .timeLimit(.minutes(5)))
struct MultipartFormTests {
  @Test("a text-only form is exactly RFC 7578's layout, in memory")
  func textOnly() throws {
    let encoded = try MultipartForm(boundary: "XyZ")
      .field("a", "1")
      .field("message", "héllo\r\nworld")
      .encoded()
    let expected =
      "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n"
      + "--XyZ\r\nContent-Disposition: form-data; name=\"message\"\r\n\r\nhéllo\r\nworld\r\n"
      + "--XyZ--\r\n"
    #expect(encoded.body.data == Data(expected.utf8))
    #expect(encoded.body.fileURL == nil)
    #expect(encoded.contentLength == Int64(expected.utf8.count))
    #expect(encoded.contentType == "multipart/form-data; boundary=XyZ")
  }

  @Test("an empty form is the close delimiter alone")
  func emptyForm() throws {
    let form = MultipartForm(boundary: "b")
    #expect(form.isEmpty)
    let encoded = try form.encoded()
    #expect(encoded.body.data == Data("--b--\r\n".utf8))
    #expect(encoded.contentLength == 7)
  }

  @Test("a Data file part carries filename and content type, and parses back byte for byte")
  func dataFilePart() throws {
    let payload = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
    let encoded = try MultipartForm()
      .field("title", "x")
      .file("upload", data: payload, filename: "a.bin")
      .file("photo", data: Data([1, 2]), filename: "p.png", contentType: "image/png")
      .encoded()
    let body = try bytes(of: encoded)
    #expect(Int64(body.count) == encoded.contentLength)
    let parts = try MultipartParts.parse(body, boundary: encoded.boundary)
    #expect(parts.map(\.name) == ["title", "upload", "photo"])
    #expect(parts[0].content == Data("x".utf8))
    #expect(parts[0].contentType == nil)
    #expect(parts[1].filename == "a.bin")
    #expect(parts[1].contentType == "application/octet-stream")
    #expect(parts[1].content == payload)
    #expect(parts[2].contentType == "image/png")
    #expect(parts[2].content == Data([1, 2]))
  }

  @Test("random boundaries: courier- and 32 hex digits, different each time")
  func randomBoundary() throws {
    let first = MultipartForm.randomBoundary()
    let second = MultipartForm.randomBoundary()
    #expect(first != second)
    #expect(first.hasPrefix("courier-"))
    #expect(first.utf8.count == 40)
    #expect(first.dropFirst(8).allSatisfy { $0.isHexDigit })
    let a = try MultipartForm().field("a", "1").encoded()
    let b = try MultipartForm().field("a", "1").encoded()
    #expect(a.boundary != b.boundary)
  }

  @Test("a boundary that occurs in a field or Data part is replaced by a fresh one")
  func boundaryAvoidsMemoryContent() throws {
    var tried: [String] = []
    var candidates = ["courier-1", "courier-2", "courier-3"].makeIterator()
    let form = MultipartForm()
      .field("a", "text mentioning courier-1 inside")
      .file("b", data: Data("and courier-2 here".utf8), filename: "b.txt")
    let encoded = try form.encoded {
      let next = candidates.next() ?? "courier-x"
      tried.append(next)
      return next
    }
    #expect(encoded.boundary == "courier-3")
    #expect(tried == ["courier-1", "courier-2", "courier-3"])
    let body = try bytes(of: encoded)
    #expect(try MultipartParts.parse(body, boundary: "courier-3").count == 2)
  }

  @Test("a boundary that occurs in a file, even across two 64 KiB chunks, is replaced")
  func boundaryAvoidsFileContent() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    // "courier-1" straddles the first chunk's end; "courier-2" lies inside the second chunk.
    var content = Data(repeating: UInt8(ascii: "x"), count: 3 * MultipartForm.chunkSize)
    content.replaceSubrange(
      MultipartForm.chunkSize - 4..<MultipartForm.chunkSize + 5, with: Data("courier-1".utf8))
    content.replaceSubrange(100_000..<100_009, with: Data("courier-2".utf8))
    let source = try scratch.file("source.bin", content)
    var candidates = ["courier-1", "courier-2", "courier-3"].makeIterator()
    var form = MultipartForm().file("f", url: source)
    form.temporaryDirectory = scratch.folder
    let encoded = try form.encoded { candidates.next() ?? "courier-x" }
    #expect(encoded.boundary == "courier-3")
    let body = try bytes(of: encoded)
    let parts = try MultipartParts.parse(body, boundary: encoded.boundary)
    #expect(parts.count == 1)
    #expect(parts[0].content == content)
    #expect(parts[0].filename == "source.bin")
    // The abandoned attempts left no file behind: only the source and the body remain.
    #expect(scratch.contents.count == 2)
  }

  @Test("a fixed boundary that occurs in the content fails with invalidRequest")
  func fixedBoundaryCollision() throws {
    let error = try #require(throws: CourierError.self) {
      try MultipartForm(boundary: "abc").field("a", "xxabcxx").encoded()
    }
    #expect(error.kind == .invalidRequest)
    #expect(error.debugMessage.contains("\"abc\" occurs in the content"))
  }

  @Test(
    "fixed boundaries outside RFC 2046 are refused",
    arguments: ["", String(repeating: "a", count: 71), "ends with space ", "semi;colon", "é"])
  func badFixedBoundary(boundary: String) throws {
    let error = try #require(throws: CourierError.self) {
      try MultipartForm(boundary: boundary).field("a", "1").encoded()
    }
    #expect(error.kind == .invalidRequest)
    #expect(error.debugMessage.contains("RFC 2046"))
  }

  @Test("quotes, CR and LF in names and filenames are percent-encoded as HTML does")
  func escaping() throws {
    let encoded = try MultipartForm(boundary: "b")
      .field("say \"hi\"", "v")
      .file("f", data: Data(), filename: "evil\"\r\nX-Injected: 1.txt")
      .file("g", data: Data(), filename: "tab\there\u{7F}.txt")
      .encoded()
    let text = String(decoding: try bytes(of: encoded), as: UTF8.self)
    #expect(text.contains("name=\"say %22hi%22\""))
    #expect(text.contains("filename=\"evil%22%0D%0AX-Injected: 1.txt\""))
    #expect(text.contains("filename=\"tab%09here%7F.txt\""))
    #expect(!text.contains("\r\nX-Injected"))
    let parts = try MultipartParts.parse(try bytes(of: encoded), boundary: "b")
    #expect(parts.count == 3)
    #expect(parts[0].name == "say %22hi%22")
  }

  @Test("a non-ASCII filename gets filename*=UTF-8'' beside the UTF-8 filename")
  func extendedFilename() throws {
    let encoded = try MultipartForm(boundary: "b")
      .file("cv", data: Data("pdf".utf8), filename: "résumé 2024 \"final\".pdf")
      .file("plain", data: Data(), filename: "plain.txt")
      .encoded()
    let text = String(decoding: try bytes(of: encoded), as: UTF8.self)
    #expect(
      text.contains(
        "filename=\"résumé 2024 %22final%22.pdf\"; "
          + "filename*=UTF-8''r%C3%A9sum%C3%A9%202024%20%22final%22.pdf\r\n"))
    #expect(!text.contains("filename*=UTF-8''plain"))
    let parts = try MultipartParts.parse(try bytes(of: encoded), boundary: "b")
    #expect(parts[0].extendedFilename == "résumé 2024 \"final\".pdf")
    #expect(parts[1].extendedFilename == nil)
    #expect(parts[1].filename == "plain.txt")
  }

  @Test(
    "invalid names and content types fail with invalidRequest naming the problem",
    arguments: [
      (MultipartForm().field("", "v"), "empty field name"),
      (MultipartForm().field("a\nb", "v"), "control character"),
      (MultipartForm().field("a\u{0}", "v"), "control character"),
      (
        MultipartForm().file("f", data: Data(), filename: "f", contentType: "text/plain\r\nX: y"),
        "invalid content type"
      ),
      (MultipartForm().file("f", data: Data(), filename: "f", contentType: ""), "content type"),
    ])
  func invalidParts(form: MultipartForm, message: String) throws {
    let error = try #require(throws: CourierError.self) { try form.encoded() }
    #expect(error.kind == .invalidRequest)
    #expect(error.debugMessage.contains(message), "\(error.debugMessage)")
  }

  @Test("a missing file, a folder and a non-file URL fail with invalidRequest naming the file")
  func badFiles() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let missing = scratch.folder.appendingPathComponent("missing.bin")
    let cases: [(URL, String)] = [
      (missing, missing.path),
      (scratch.folder, scratch.folder.path),
      (URL(string: "https://example.com/a.bin")!, "not a file URL"),
      (URL(fileURLWithPath: "/dev/zero"), "not a readable regular file"),
    ]
    for (url, expected) in cases {
      let error = try #require(throws: CourierError.self) {
        try MultipartForm().field("a", "1").file("upload", url: url).encoded()
      }
      #expect(error.kind == .invalidRequest)
      #expect(error.debugMessage.contains(expected), "\(error.debugMessage)")
      #expect(error.debugMessage.contains("\"upload\""))
    }
    #expect(scratch.contents.isEmpty)
  }

  @Test("a symlink to a regular file is a file part, as it is a body file")
  func symlinkedFile() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let target = scratch.folder.appendingPathComponent("target.bin")
    try Data([1, 2, 3]).write(to: target)
    let link = scratch.folder.appendingPathComponent("link.bin")
    try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
    let encoded = try MultipartForm(boundary: "b").file("f", url: link).encoded()
    #expect(encoded.contentLength > 3)
  }

  @Test("a temporary folder that does not exist fails with invalidRequest naming the file")
  func missingTemporaryFolder() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let source = try scratch.file("a.bin", Data("x".utf8))
    var form = MultipartForm().file("f", url: source)
    form.temporaryDirectory = scratch.folder.appendingPathComponent("gone")
    let error = try #require(throws: CourierError.self) { try form.encoded() }
    #expect(error.kind == .invalidRequest)
    #expect(error.debugMessage.contains("cannot create the multipart temporary file"))
    #expect(error.debugMessage.contains(scratch.folder.path + "/gone/courier-multipart-"))
    #expect((error.underlying as? POSIXError)?.code == .ENOENT, "\(error.debugDescription)")
  }

  @Test("a form with a file part becomes a temporary file, 0600, deleted with the last copy")
  func temporaryFileLifetime() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let content = Data(repeating: 0xAB, count: 200_000)
    let source = try scratch.file("big.bin", content)
    var form = MultipartForm().field("a", "1").file("f", url: source, contentType: "x/y")
    form.temporaryDirectory = scratch.folder
    var encoded: MultipartForm.Encoded? = try form.encoded()
    let url = try #require(encoded?.body.fileURL)
    #expect(encoded?.body.isTemporaryFile == true)
    #expect(url.deletingLastPathComponent().path == scratch.folder.path)
    let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
    #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    #expect((attributes[.size] as? NSNumber)?.int64Value == encoded?.contentLength)
    var copy: RequestBody? = encoded?.body
    encoded = nil
    #expect(FileManager.default.fileExists(atPath: url.path), "a copy still holds it")
    #expect(copy?.fileURL == url)
    copy = nil
    #expect(!FileManager.default.fileExists(atPath: url.path))
    #expect(scratch.contents == ["big.bin"])
  }

  @Test("Content-Length equals the bytes written, for memory and file forms alike")
  func contentLengthExact() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let empty = try scratch.file("empty.txt", Data())
    let odd = try scratch.file("odd ünï.bin", Data(repeating: 7, count: 65_537))
    var form = MultipartForm()
      .field("ä", "ö")
      .file("e", url: empty)
      .file("o", url: odd, filename: "ödd.bin")
      .file("d", data: Data(repeating: 1, count: 10), filename: "d")
    form.temporaryDirectory = scratch.folder
    let encoded = try form.encoded()
    let body = try bytes(of: encoded)
    #expect(Int64(body.count) == encoded.contentLength)
    let parts = try MultipartParts.parse(body, boundary: encoded.boundary)
    #expect(parts.map(\.contentLength) == [2, 0, 65_537, 10])
    #expect(parts[2].extendedFilename == "ödd.bin")
  }

  @Test("the endpoint sets the form's Content-Type and Content-Length, over a caller's type")
  func endpointHeaders() throws {
    let endpoint = Endpoint<Void>(.post, "upload")
      .header("Content-Type", "text/plain")
      .multipartBody(MultipartForm(boundary: "q").field("a", "1"))
    let request = try endpoint.makeRequest(baseURL: testBase, encoder: JSONEncoder())
    #expect(request.headers[.contentType] == "multipart/form-data; boundary=q")
    #expect(request.headers.values(for: .contentType).count == 1)
    let body = try #require(request.body.data)
    #expect(request.headers[.contentLength] == String(body.count))
  }

  @Test("a bad file fails the client's request with invalidRequest before any attempt")
  func clientRejects() async throws {
    let stub = StubTransport(fallback: .status(200))
    let client = stubClient(stub)
    let endpoint = Endpoint<Void>(.post, "upload")
      .multipartBody(MultipartForm().file("f", url: URL(fileURLWithPath: "/nonexistent/x.bin")))
    let error = await #expect(throws: CourierError.self) { try await client.send(endpoint) }
    #expect(error?.kind == .invalidRequest)
    #expect(error?.debugMessage.contains("/nonexistent/x.bin") == true)
    #expect(stub.requests.isEmpty)
  }

  @Test("retry replays the same temporary file; it is deleted when the requests are released")
  func retryReplaysAndCleansUp() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let source = try scratch.file("s.bin", Data(repeating: 9, count: 100_000))
    let attempts = try await Self.sendTwice(source, temporaryDirectory: scratch.folder)
    #expect(attempts.count == 2)
    #expect(attempts.first == attempts.last, "the same file, whole, on both attempts")
    #expect(attempts.first?.hasPrefix(scratch.folder.path) == true)
    #expect(attempts.allSatisfy { (Int($0.split(separator: " ").last ?? "") ?? 0) > 100_000 })
    // The stub, which kept every request, is gone with the client: so is the file.
    #expect(scratch.contents == ["s.bin"], "the temporary file is gone")
  }

  /// Sends a form through retry to a stub that answers 503 then 200; returns each attempt's
  /// body file and its size then. The stub keeps its requests, and with them the temporary
  /// file, until it is released on return.
  static func sendTwice(_ source: URL, temporaryDirectory: URL) async throws -> [String] {
    let seen = Recorder()
    let stub = StubTransport(fallback: .status(200))
    stub.enqueue(.status(503))
    /// Records the body file of each attempt and its size at that moment.
    struct Peek: Middleware {
      let seen: Recorder
      func intercept(_ request: Request, next: Next) async throws -> Response {
        if let url = request.body.fileURL {
          let size = (try? Data(contentsOf: url).count) ?? -1
          seen.record("\(url.path) \(size)")
        }
        return try await next(request)
      }
    }
    let client = stubClient(
      stub,
      middleware: [
        RetryMiddleware(policy: RetryPolicy(baseDelay: .zero), budget: nil), Peek(seen: seen),
      ])
    var form = MultipartForm().file("f", url: source)
    form.temporaryDirectory = temporaryDirectory
    try await client.send(
      Endpoint<Void>(.post, "upload").header("Idempotency-Key", "k").multipartBody(form))
    #expect(stub.requests.count == 2)
    return seen.all
  }

  @Test("logging at body level summarises a multipart body and never writes its fields")
  func loggingSummarises() async throws {
    let sink = InMemoryLogSink()
    let client = stubClient(
      StubTransport(fallback: .status(200)),
      middleware: [LoggingMiddleware(level: .body, sink: sink)])
    let endpoint = Endpoint<Void>(.post, "upload")
      .multipartBody(MultipartForm().field("password", "hunter2-secret"))
    try await client.send(endpoint)
    let text = sink.text
    #expect(text.contains("<multipart/form-data, "))
    #expect(text.contains("bytes, not logged>"))
    #expect(!text.contains("hunter2-secret"))
  }
}
