import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A `multipart/form-data` body (RFC 7578): text fields and files, sent in the order added.
///
/// ```swift
/// import Courier
///
/// let form = MultipartForm()
///   .field("title", "Holiday")
///   .file("thumbnail", data: Data([0xFF, 0xD8]), filename: "thumb.jpg", contentType: "image/jpeg")
///   .file("original", url: URL(fileURLWithPath: "/tmp/IMG_0001.jpg"), contentType: "image/jpeg")
/// let upload = Endpoint<Void>(.post, "photos").multipartBody(form)
/// ```
///
/// A form is a plain value; nothing is read or checked until it is encoded (by the client when
/// it builds the request, or by ``encoded()``). Then:
///
/// - **Memory.** A form without file-URL parts becomes a ``RequestBody/data(_:)`` body. A form
///   with any file-URL part is written, 64 KiB at a time, to a temporary file (mode `0600`, in
///   ``temporaryDirectory`` or `FileManager.default.temporaryDirectory`) that becomes a
///   ``RequestBody/temporaryFile(_:)`` body, which a transport streams from disk: memory stays
///   flat whatever the size of the files. The copy costs one sequential write of the whole
///   body, done synchronously when the request is built. The temporary file is deleted when the
///   last copy of the request is released (after the response is decoded by
///   `Client.send(_:)`; with a raw `Response` or a `CourierError` in hand, when those go).
/// - **Length.** `Content-Length` is the exact size, computed from the parts (file sizes from
///   their attributes); a file whose size changes while it is copied fails the request.
/// - **Boundary.** `courier-` and 32 random hexadecimal digits (128 bits from the system's
///   random generator), unless one is given to ``init(boundary:)``. The text and `Data` parts
///   are searched for it and a new one drawn if it occurs; file parts are searched as they are
///   copied, and the copy starts again with a new boundary if one occurs. A boundary given to
///   ``init(boundary:)`` that occurs in the content fails the request instead.
/// - **Names.** Field names and filenames are written as HTML does (and RFC 7578 §4.2
///   suggests): UTF-8, with `"` as `%22`, CR as `%0D` and LF as `%0A` (and, in filenames, any
///   other control character as `%XX`). A filename that is not ASCII also gets a
///   `filename*=UTF-8''…` parameter (RFC 8187) for servers that read it; the plain `filename`
///   stays UTF-8 rather than an ASCII approximation, since that is what every browser sends and
///   what servers that ignore `filename*` understand.
///
/// Errors are ``CourierError`` of kind ``CourierError/Kind/invalidRequest``: an empty field
/// name or one with a control character, a content type with a control character, a missing
/// or unreadable file (named in ``CourierError/debugMessage``), a bad fixed boundary.
public struct MultipartForm: Sendable {
  /// The content of one part.
  enum Content: Sendable {
    case text(String)
    case data(Data)
    case file(URL)
  }

  /// One part: a field or a file.
  struct Part: Sendable {
    var name: String
    var filename: String?
    var contentType: String?
    var content: Content
  }

  /// The parts, in order.
  private(set) var parts: [Part] = []

  /// The boundary to use, or `nil` for a random one at each encoding.
  public let boundary: String?

  /// Where the temporary file for a form with file parts is written; `nil` (the default) is
  /// `FileManager.default.temporaryDirectory`.
  public var temporaryDirectory: URL?

  /// The size of each read and write when a form is copied into its temporary file.
  public static let chunkSize = 64 * 1024

  /// The content type of a `Data` or file part when none is given.
  public static let defaultFileContentType = "application/octet-stream"

  /// Creates an empty form.
  ///
  /// - Parameter boundary: A fixed boundary (1–70 characters from RFC 2046's `bchars`, not
  ///   ending in a space), for reproducible bodies; `nil` (the default) draws a random one.
  public init(boundary: String? = nil) {
    self.boundary = boundary
  }

  /// The number of parts.
  public var count: Int { parts.count }

  /// Whether the form has no parts.
  public var isEmpty: Bool { parts.isEmpty }

  /// Appends a text field, sent as UTF-8 without a `Content-Type`.
  public func field(_ name: String, _ value: String) -> Self {
    appending(Part(name: name, filename: nil, contentType: nil, content: .text(value)))
  }

  /// Appends a file part whose bytes are in memory.
  ///
  /// - Parameters:
  ///   - name: The field name.
  ///   - data: The file's bytes.
  ///   - filename: The name the server sees.
  ///   - contentType: The part's media type; default `application/octet-stream`.
  public func file(
    _ name: String, data: Data, filename: String,
    contentType: String = MultipartForm.defaultFileContentType
  ) -> Self {
    appending(Part(name: name, filename: filename, contentType: contentType, content: .data(data)))
  }

  /// Appends a file part streamed from a local file when the form is encoded.
  ///
  /// - Parameters:
  ///   - name: The field name.
  ///   - url: A local file URL.
  ///   - filename: The name the server sees; default the URL's last path component.
  ///   - contentType: The part's media type; default `application/octet-stream`.
  public func file(
    _ name: String, url: URL, filename: String? = nil,
    contentType: String = MultipartForm.defaultFileContentType
  ) -> Self {
    appending(
      Part(
        name: name, filename: filename ?? url.lastPathComponent, contentType: contentType,
        content: .file(url)))
  }

  private func appending(_ part: Part) -> Self {
    var copy = self
    copy.parts.append(part)
    return copy
  }

  /// A form's body, ready to send.
  public struct Encoded: Sendable {
    /// The body: in memory, or a temporary file deleted when released.
    public let body: RequestBody
    /// The boundary between the parts.
    public let boundary: String
    /// The exact size of the body in bytes.
    public let contentLength: Int64

    /// `multipart/form-data; boundary=…`.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }
  }

  /// Encodes the form: in memory, or into a temporary file when it has file-URL parts (see
  /// the type's documentation).
  ///
  /// - Throws: ``CourierError`` of kind ``CourierError/Kind/invalidRequest``.
  public func encoded() throws(CourierError) -> Encoded {
    try encoded { Self.randomBoundary() }
  }

  /// A random boundary: `courier-` and 32 hexadecimal digits (128 bits).
  public static func randomBoundary() -> String {
    // `UInt64.random(in:)` rather than a `SystemRandomNumberGenerator` passed `inout`: the
    // generator is zero-sized, so its "address" is whatever a register holds, and
    // ThreadSanitizer's instrumentation of the inout access dereferences it (SEGV in
    // `__tsan::ExternalAccess`; see .ci/tsan-suppressions.txt).
    func hex(_ value: UInt64) -> String {
      let digits = String(value, radix: 16)
      return String(repeating: "0", count: 16 - digits.count) + digits
    }
    return "courier-" + hex(UInt64.random(in: .min ... .max))
      + hex(UInt64.random(in: .min ... .max))
  }

  /// How many random boundaries are tried before giving up; a second is already needed only
  /// when content holds a 128-bit random string.
  static let boundaryAttempts = 8

  /// Encodes with boundaries from `nextBoundary` (tests inject colliding ones).
  func encoded(nextBoundary: () -> String) throws(CourierError) -> Encoded {
    let files = try validate()
    for _ in 0..<(boundary == nil ? Self.boundaryAttempts : 1) {
      let candidate = boundary ?? nextBoundary()
      if let boundary { try Self.checkBoundary(boundary) }
      if parts.contains(where: { $0.content.inMemoryContains(candidate) }) { continue }
      let layout = Layout(form: self, boundary: candidate, fileSizes: files)
      if files.isEmpty {
        return Encoded(
          body: .data(layout.inMemoryBody()), boundary: candidate,
          contentLength: layout.contentLength)
      }
      if let body = try layout.writeTemporaryFile(in: temporaryDirectory) {
        return Encoded(body: body, boundary: candidate, contentLength: layout.contentLength)
      }
    }
    throw Self.failure(
      boundary == nil
        ? "no multipart boundary avoided the content after \(Self.boundaryAttempts) attempts"
        : "the multipart boundary \"\(boundary ?? "")\" occurs in the content")
  }

  // MARK: - Validation

  /// Checks names and content types, and returns the size of each file part by part index.
  private func validate() throws(CourierError) -> [Int: Int64] {
    var sizes: [Int: Int64] = [:]
    for (index, part) in parts.enumerated() {
      guard !part.name.isEmpty else {
        throw Self.failure("multipart part \(index) has an empty field name")
      }
      guard !part.name.unicodeScalars.contains(where: Self.isControl) else {
        throw Self.failure(
          "multipart field name \(part.name.debugDescription) contains a control character")
      }
      if let type = part.contentType {
        guard !type.isEmpty, !type.unicodeScalars.contains(where: Self.isControl) else {
          throw Self.failure(
            "multipart part \"\(part.name)\" has an invalid content type \(type.debugDescription)")
        }
      }
      if case .file(let url) = part.content {
        sizes[index] = try Self.fileSize(url, part: part.name)
      }
    }
    return sizes
  }

  /// The size of a readable regular file, after symlinks (as a body file: a link to a regular
  /// file is one).
  private static func fileSize(_ url: URL, part: String) throws(CourierError) -> Int64 {
    switch RegularFile.check(url) {
    case .sendable(let size): return size
    case .problem(let text): throw failure("multipart file part \"\(part)\": \(text)")
    }
  }

  /// RFC 2046 §5.1.1: 1–70 `bchars`, the last not a space.
  private static func checkBoundary(_ boundary: String) throws(CourierError) {
    let allowed = Set("'()+_,-./:=? ".utf8)
    let bytes = Array(boundary.utf8)
    guard (1...70).contains(bytes.count), bytes.last != UInt8(ascii: " "),
      bytes.allSatisfy({ ASCII.isAlphanumeric($0) || allowed.contains($0) })
    else {
      throw failure(
        "the multipart boundary \(boundary.debugDescription) is not 1–70 RFC 2046 characters")
    }
  }

  private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x20 || scalar.value == 0x7F
  }

  static func failure(_ message: String, underlying: (any Error)? = nil) -> CourierError {
    CourierError(
      kind: .invalidRequest, debugMessage: message, underlying: underlying, stage: "request")
  }

  // MARK: - Part headers

  /// A name or filename as HTML writes it in a quoted string: `"` → `%22`, CR → `%0D`,
  /// LF → `%0A`, any other control character → `%XX`.
  static func quoted(_ text: String) -> String {
    var result = ""
    result.reserveCapacity(text.utf8.count + 2)
    for scalar in text.unicodeScalars {
      if scalar == "\"" || isControl(scalar) {
        result += "%" + hexByte(UInt8(scalar.value))
      } else {
        result.unicodeScalars.append(scalar)
      }
    }
    return result
  }

  /// RFC 8187 `ext-value` for a UTF-8 text: `UTF-8''` and the bytes, `attr-char`s as they are,
  /// others as `%XX`.
  static func extendedValue(_ text: String) -> String {
    let attrChars = Set("!#$&+-.^_`|~".utf8)
    var result = "UTF-8''"
    for byte in text.utf8 {
      if ASCII.isAlphanumeric(byte) || attrChars.contains(byte) {
        result.unicodeScalars.append(Unicode.Scalar(byte))
      } else {
        result += "%" + hexByte(byte)
      }
    }
    return result
  }

  private static func hexByte(_ byte: UInt8) -> String {
    let digits = Array("0123456789ABCDEF".utf8)
    return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]], as: UTF8.self)
  }

  /// The delimiter line and header block that start a part.
  static func head(of part: Part, boundary: String) -> Data {
    var text = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(quoted(part.name))\""
    if let filename = part.filename {
      text += "; filename=\"\(quoted(filename))\""
      if !filename.unicodeScalars.allSatisfy(\.isASCII) {
        text += "; filename*=\(extendedValue(filename))"
      }
    }
    text += "\r\n"
    if let type = part.contentType { text += "Content-Type: \(type)\r\n" }
    text += "\r\n"
    return Data(text.utf8)
  }
}

// MARK: - Content search

extension MultipartForm.Content {
  /// Whether in-memory content holds `boundary`; files are searched while they are copied.
  func inMemoryContains(_ boundary: String) -> Bool {
    switch self {
    case .text(let text): ByteSearch.contains(Data(text.utf8), boundary)
    case .data(let data): ByteSearch.contains(data, boundary)
    case .file: false
    }
  }
}

// MARK: - Layout and writing

/// The bytes of a form with one boundary: each part's head, content and CRLF, then the close
/// delimiter.
private struct Layout {
  let form: MultipartForm
  let boundary: String
  let heads: [Data]
  let fileSizes: [Int: Int64]
  let close: Data

  init(form: MultipartForm, boundary: String, fileSizes: [Int: Int64]) {
    self.form = form
    self.boundary = boundary
    self.heads = form.parts.map { MultipartForm.head(of: $0, boundary: boundary) }
    self.fileSizes = fileSizes
    self.close = Data("--\(boundary)--\r\n".utf8)
  }

  var contentLength: Int64 {
    var total = Int64(close.count)
    for (index, part) in form.parts.enumerated() {
      total += Int64(heads[index].count) + 2
      switch part.content {
      case .text(let text): total += Int64(text.utf8.count)
      case .data(let data): total += Int64(data.count)
      case .file: total += fileSizes[index] ?? 0
      }
    }
    return total
  }

  private static let crlf = Data("\r\n".utf8)

  func inMemoryBody() -> Data {
    var body = Data(capacity: Int(contentLength))
    for (index, part) in form.parts.enumerated() {
      body += heads[index]
      switch part.content {
      case .text(let text): body += Data(text.utf8)
      case .data(let data): body += data
      case .file: break
      }
      body += Self.crlf
    }
    body += close
    return body
  }

  /// Writes the body to a new temporary file; `nil` when a file turned out to hold the
  /// boundary (the file is then deleted).
  func writeTemporaryFile(in directory: URL?) throws(CourierError) -> RequestBody? {
    let folder = directory ?? FileManager.default.temporaryDirectory
    let url = folder.appendingPathComponent("courier-multipart-\(UUID().uuidString).tmp")
    let output: FileHandle
    do {
      output = try CloseOnExecFile.create(url)
    } catch {
      throw MultipartForm.failure(
        "cannot create the multipart temporary file \(url.path)", underlying: error)
    }
    // The owner deletes the file if anything below fails, or once the body is released.
    let owned = RequestBody.temporaryFile(url)
    do {
      for (index, part) in form.parts.enumerated() {
        try output.write(contentsOf: heads[index])
        switch part.content {
        case .text(let text): try output.write(contentsOf: Data(text.utf8))
        case .data(let data): try output.write(contentsOf: data)
        case .file(let source):
          let expected = fileSizes[index] ?? 0
          guard try copy(source, expected: expected, part: part.name, to: output) else {
            try? output.close()
            return nil
          }
        }
        try output.write(contentsOf: Self.crlf)
      }
      try output.write(contentsOf: close)
      try output.close()
    } catch let error as CourierError {
      try? output.close()
      throw error
    } catch {
      try? output.close()
      throw MultipartForm.failure(
        "cannot write the multipart temporary file \(url.path)", underlying: error)
    }
    return owned
  }

  /// Copies `expected` bytes of `source` in chunks, searching them for the boundary; `false`
  /// if it occurs.
  private func copy(
    _ source: URL, expected: Int64, part: String, to output: FileHandle
  ) throws -> Bool {
    let input: FileHandle
    do {
      input = try CloseOnExecFile.forReading(source)
    } catch {
      throw MultipartForm.failure(
        "multipart file part \"\(part)\": \(source.path) cannot be opened", underlying: error)
    }
    defer { try? input.close() }
    let overlap = boundary.utf8.count - 1
    var tail = Data()
    var copied: Int64 = 0
    while true {
      let wanted = Int(min(Int64(MultipartForm.chunkSize), expected - copied + 1))
      guard wanted > 0, let chunk = try input.read(upToCount: wanted), !chunk.isEmpty else {
        break
      }
      copied += Int64(chunk.count)
      guard copied <= expected else { break }
      // The boundary may straddle two chunks: search the seam, then the chunk.
      if !tail.isEmpty, ByteSearch.contains(tail + chunk.prefix(overlap), boundary) {
        return false
      }
      if ByteSearch.contains(chunk, boundary) { return false }
      tail = chunk.suffix(overlap)
      try output.write(contentsOf: chunk)
    }
    guard copied == expected else {
      throw MultipartForm.failure(
        "multipart file part \"\(part)\": \(source.path) changed size while it was read"
          + " (expected \(expected) bytes)")
    }
    return true
  }
}
