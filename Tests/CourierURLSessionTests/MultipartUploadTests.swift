import Courier
import CourierTesting
import Foundation
import Testing

/// A private folder for one test's files, removed by ``remove()``.
struct UploadScratch {
  let folder: URL

  init() throws {
    folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-upload-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
  }

  /// A new subfolder.
  func subfolder(_ name: String) throws -> URL {
    let url = folder.appendingPathComponent(name)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
  }

  /// The names of the files in `url`.
  func contents(of url: URL) -> [String] {
    (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
  }

  func remove() {
    try? FileManager.default.removeItem(at: folder)
  }

  /// Writes `size` bytes of a position-dependent pattern (so a lost, repeated or reordered
  /// block shows) to `name`, a MiB at a time.
  func patternFile(_ name: String, size: Int) throws -> URL {
    let url = folder.appendingPathComponent(name)
    guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
      throw MockServerError("cannot create \(url.path)")
    }
    let handle = try FileHandle(forWritingTo: url)
    defer { try? handle.close() }
    let block = 1024 * 1024
    var buffer = Data(count: block)
    var written = 0
    var blockNumber: UInt32 = 0
    while written < size {
      let count = min(block, size - written)
      buffer.withUnsafeMutableBytes { (bytes: UnsafeMutableRawBufferPointer) in
        for index in 0..<count {
          bytes[index] = UInt8(truncatingIfNeeded: UInt32(index) &* 31 &+ blockNumber &* 7)
        }
      }
      try handle.write(contentsOf: buffer.prefix(count))
      written += count
      blockNumber += 1
    }
    return url
  }
}

/// Whether `range` of `file` holds exactly the bytes of `expected`, compared a MiB at a time.
func fileRange(_ range: Range<Int64>, of file: URL, equals expected: URL) throws -> Bool {
  let left = try FileHandle(forReadingFrom: file)
  let right = try FileHandle(forReadingFrom: expected)
  defer {
    try? left.close()
    try? right.close()
  }
  guard Int64(try right.seekToEnd()) == Int64(range.count) else { return false }
  try right.seek(toOffset: 0)
  try left.seek(toOffset: UInt64(range.lowerBound))
  var remaining = Int64(range.count)
  while remaining > 0 {
    let count = Int(min(remaining, 1024 * 1024))
    guard let a = try left.read(upToCount: count), let b = try right.read(upToCount: count),
      a.count == count, a == b
    else { return false }
    remaining -= Int64(count)
  }
  return true
}

@Suite("Multipart uploads over URLSession and MockServer", .timeLimit(.minutes(5)))
struct MultipartUploadTests {
  @Test("fields, a Data part and a file part arrive intact, with an exact Content-Length")
  func smallFormOverWire() async throws {
    let scratch = try UploadScratch()
    defer { scratch.remove() }
    let fixture = try WireFixture()
    defer { fixture.shutdown() }
    let source = try scratch.patternFile("photo.raw", size: 3 * 1024 * 1024 + 17)
    let temporary = try scratch.subfolder("tmp")
    var form = MultipartForm()
      .field("title", "Holiday ☀️")
      .file(
        "thumb", data: Data([0xFF, 0xD8, 0x00, 0x0D, 0x0A]), filename: "t.jpg",
        contentType: "image/jpeg"
      )
      .file("original", url: source, filename: "été.raw", contentType: "image/x-raw")
    form.temporaryDirectory = temporary
    fixture.server.enqueue(MockResponse(status: 201))

    try await fixture.client.send(Endpoint<Void>(.post, "photos").multipartBody(form))

    #expect(scratch.contents(of: temporary).isEmpty, "the temporary body file is deleted")
    let recorded = try await fixture.server.takeRequest()
    let contentType = try #require(recorded.header("Content-Type"))
    #expect(contentType.hasPrefix("multipart/form-data; boundary=courier-"))
    #expect(recorded.header("Content-Length") == String(recorded.body.count))
    #expect(recorded.header("Transfer-Encoding") == nil)
    let boundary = try #require(MultipartParts.boundary(fromContentType: contentType))
    let parts = try MultipartParts.parse(recorded.body, boundary: boundary)
    #expect(parts.map(\.name) == ["title", "thumb", "original"])
    #expect(parts[0].content == Data("Holiday ☀️".utf8))
    #expect(parts[1].content == Data([0xFF, 0xD8, 0x00, 0x0D, 0x0A]))
    #expect(parts[1].contentType == "image/jpeg")
    #expect(parts[2].extendedFilename == "été.raw")
    #expect(parts[2].content == (try Data(contentsOf: source)))
  }

  @Test("MockServer writes a large body to a file; parsed from the file, the part matches")
  func bodyToFile() async throws {
    let scratch = try UploadScratch()
    defer { scratch.remove() }
    let fixture = try WireFixture()
    defer { fixture.shutdown() }
    let received = try scratch.subfolder("server")
    fixture.server.requestBodyDirectory = received
    let source = try scratch.patternFile("data.bin", size: 9 * 1024 * 1024 + 5)
    var form = MultipartForm().field("id", "7").file("data", url: source)
    form.temporaryDirectory = try scratch.subfolder("tmp")

    let request = try fixture.client.request(
      for: Endpoint<Void>(.post, "upload").multipartBody(form))
    let length = try #require(request.headers[.contentLength].flatMap(Int64.init))
    fixture.server.enqueue(MockResponse(status: 200))
    _ = try await fixture.client.send(request)

    let recorded = try await fixture.server.takeRequest()
    #expect(recorded.body.isEmpty)
    let file = try #require(recorded.bodyFile)
    #expect(file.deletingLastPathComponent().path == received.path)
    let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber
    #expect(size?.int64Value == length)
    let boundary = try #require(
      recorded.header("Content-Type").flatMap(MultipartParts.boundary(fromContentType:)))
    let parts = try MultipartParts.parse(fileAt: file, boundary: boundary)
    #expect(parts.map(\.name) == ["id", "data"])
    #expect(parts.allSatisfy { $0.content == nil })
    #expect(try fileRange(parts[1].contentRange, of: file, equals: source))
  }

  @Test(
    "a 256 MiB file part: peak RSS growth < 64 MiB, and the server's part matches the file",
    .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/status"), "reads /proc"))
  func hugeUpload() async throws {
    // In a child process, where nothing else runs, as the gzip bomb test measures memory.
    let result = await withTaskExecutorPreference(OwnThreadExecutor.shared) {
      await #expect(
        processExitsWith: .success, observing: [\.standardOutputContent, \.standardErrorContent]
      ) {
        try await MultipartUploadTests.hugeUploadScenario()
      }
    }
    let report = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
    print("multipart upload, 256 MiB:", report)
    #expect(report.contains("parts match"))
    if let result, result.exitStatus != .exitCode(EXIT_SUCCESS) {
      Issue.record(
        "the child's standard error:\n\(String(decoding: result.standardErrorContent, as: UTF8.self))"
      )
    }
  }

  /// Uploads a 256 MiB file part through `Client` and `URLSessionTransport` to a
  /// `MockServer` that writes bodies to disk, and exits with failure unless peak RSS grew by
  /// less than 64 MiB and the server's part equals the file.
  static func hugeUploadScenario() async throws {
    let size = 256 * 1024 * 1024
    let bound = 64 * 1024 * 1024
    let scratch = try UploadScratch()
    defer { scratch.remove() }
    let fixture = try WireFixture()
    defer { fixture.shutdown() }
    let received = try scratch.subfolder("server")
    let temporary = try scratch.subfolder("tmp")
    fixture.server.requestBodyDirectory = received
    let source = try scratch.patternFile("huge.bin", size: size)
    let small = try scratch.patternFile("small.bin", size: 8 * 1024 * 1024)

    /// Builds (encodes) and sends a form with `file`; returns how long each step took.
    func upload(_ file: URL) async throws -> (encode: Duration, send: Duration) {
      var form = MultipartForm().field("name", file.lastPathComponent).file("file", url: file)
      form.temporaryDirectory = temporary
      let started = ContinuousClock.now
      let request = try fixture.client.request(
        for: Endpoint<Void>(.post, "upload").multipartBody(form))
      let encoded = ContinuousClock.now
      fixture.server.enqueue(MockResponse(status: 200))
      _ = try await fixture.client.send(request)
      return (encoded - started, ContinuousClock.now - encoded)
    }

    // A small upload first primes URLSession, libcurl, the server's threads and malloc, so
    // that the measurement sees the big upload alone.
    _ = try await upload(small)
    let warmUp = try await fixture.server.takeRequest()
    if let file = warmUp.bodyFile { try? FileManager.default.removeItem(at: file) }

    let peakReset = ProcessProbe.resetPeakMemory()
    let before = try ProcessProbe.memory()
    let elapsed = try await upload(source)
    let after = try ProcessProbe.memory()
    let start = peakReset ? before.resident : min(before.resident, before.peak)
    let growth = after.peak - start

    let recorded = try await fixture.server.takeRequest()
    let file = try #require(recorded.bodyFile)
    let boundary = try #require(
      recorded.header("Content-Type").flatMap(MultipartParts.boundary(fromContentType:)))
    let parts = try MultipartParts.parse(fileAt: file, boundary: boundary)
    let matches =
      try parts.count == 2 && parts[1].filename == "huge.bin"
      && fileRange(parts[1].contentRange, of: file, equals: source)
    let leftovers = scratch.contents(of: temporary)
    func seconds(_ duration: Duration) -> String {
      let value =
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
      return String(format: "%.2f s (%.0f MiB/s)", value, Double(size) / 1_048_576 / value)
    }
    let report =
      "\(matches ? "parts match" : "PARTS DIFFER"); encode to temporary file"
      + " \(seconds(elapsed.encode)), upload \(seconds(elapsed.send)); peak RSS growth"
      + " \(growth / 1024) KiB (start \(start / 1024) KiB, peak \(after.peak / 1024) KiB,"
      + " peak reset: \(peakReset)); bound \(bound / 1024) KiB; temporary files left:"
      + " \(leftovers.count)"
    FileHandle.standardOutput.write(Data(report.utf8))
    guard matches, growth < bound, leftovers.isEmpty else { exit(1) }
  }
}
