import Foundation

/// Writes one download attempt to its temporary file: the part every transport shares.
///
/// 1. ``prepare(_:)`` adds `Range: bytes=N-` and `If-Range: <validator>` when a partial file
///    of `N` bytes and its validator (a strong `ETag`, else `Last-Modified`) are on disk and
///    were downloaded from this request's URL.
/// 2. ``begin(status:headers:request:)`` with the response head: a `206` whose `Content-Range`
///    starts at `N` appends; any other `2xx` starts the file again from zero (the server
///    ignored the range or the resource changed); `416` deletes the partial file; other
///    statuses do not touch the disk (the transport keeps that body in memory).
/// 3. ``write(_:)`` for each piece of body, ``finish()`` at the end. A failed attempt leaves
///    the partial file and its validator for the next attempt, never a file at the
///    destination.
///
/// Not thread-safe: a transport calls it from one delivery context at a time.
public final class DownloadWriter {
  /// The destination this writer serves.
  public let destination: DownloadDestination
  /// Bytes on disk when the attempt started (what `Range` asked for).
  public private(set) var offset: Int64 = 0
  /// Bytes in the file now.
  public private(set) var written: Int64 = 0
  /// The total size when known: `Content-Range`'s, or `offset + Content-Length`.
  public private(set) var expected: Int64?
  /// Whether ``begin(status:headers:request:)`` chose to write the body to the file.
  public private(set) var isWriting = false

  private var handle: FileHandle?
  private var resumedFrom: Int64 = 0
  /// The SHA-256 of the URL ``prepare(_:)`` was given: what the partial file's validator is
  /// kept under. `nil` before `prepare`, when no validator is written.
  private var sourceKey: String?
  /// The first line of a validator file in the format this writer reads and writes.
  private static let validatorFormat = "courier-download 2"
  /// The body's length on the wire when the transport may decode it into the file (a
  /// `Content-Encoding` other than `identity`): `.some(nil)` when the response gave no
  /// length; `nil` when the body is written as it arrives.
  private var decodedFrom: Int64??

  /// How many times its length on the wire a body that the transport decodes may grow in the
  /// file, once past ``decodedGrowthFloor``: 100×, `DecompressionLimit`'s default ratio. Text
  /// and JSON compress 3–20×; a decompression bomb about 1,000× (a 1 MiB gzip of zeros is a
  /// gigabyte), which URLSession on Linux — and `CurlTransport` with automatic decoding —
  /// would otherwise write to disk whole.
  public static let maximumDecodedGrowth: Int64 = 100

  /// 1 MiB: a decoded download is never refused for its growth below this size.
  public static let decodedGrowthFloor: Int64 = 1 << 20

  /// 1 GiB: the most a body that the transport decodes may write when the response gave no
  /// `Content-Length` to measure its growth against.
  public static let maximumDecodedSizeWithoutLength: Int64 = 1 << 30

  /// ``maximumDecodedSizeWithoutLength``, smaller in tests.
  package var decodedSizeWithoutLength = DownloadWriter.maximumDecodedSizeWithoutLength

  /// Creates a writer for `destination`.
  public init(destination: DownloadDestination) {
    self.destination = destination
  }

  deinit {
    try? handle?.close()
  }

  /// `request` with `Range` and `If-Range` when a partial file downloaded from its URL can be
  /// resumed, and without them otherwise. A transport that follows redirects itself calls it
  /// again for each hop's request, so that the partial file is kept under the URL that sends
  /// the body and resumed only from there.
  public func prepare(_ request: Request) -> Request {
    var request = request
    offset = 0
    let key = SHA256.hex(of: request.url.absoluteString.utf8)
    sourceKey = key
    let manager = FileManager.default
    let partial = destination.partialURL.path
    guard destination.resumes,
      let attributes = try? manager.attributesOfItem(atPath: partial),
      let size = (attributes[.size] as? NSNumber)?.int64Value, size > 0,
      let data = manager.contents(atPath: destination.validatorURL.path),
      let validator = Self.validator(in: data, forKey: key),
      (try? request.headers.set("Range", "bytes=\(size)-")) != nil,
      (try? request.headers.set("If-Range", validator)) != nil
    else {
      request.headers.remove("Range")
      request.headers.remove("If-Range")
      return request
    }
    offset = size
    return request
  }

  /// Decides from the response head whether the body goes to the file, and opens it.
  ///
  /// - Returns: `true` when the body is written to the file; `false` when the transport keeps
  ///   it in memory (a status that is not `2xx`).
  /// - Throws: ``CourierError`` of kind ``CourierError/Kind/badResponse`` when a `206` does
  ///   not start where the partial file ends, or ``CourierError/Kind/invalidRequest`` when
  ///   the file cannot be written.
  public func begin(
    status: Int, headers: HTTPHeaders, request: Request
  ) throws(CourierError)
    -> Bool
  {
    let manager = FileManager.default
    if status == 416 {
      try? manager.removeItem(at: destination.partialURL)
      try? manager.removeItem(at: destination.validatorURL)
      return false
    }
    guard (200..<300).contains(status) else { return false }
    let length = headers["Content-Length"].flatMap { Int64($0) }
    // A body the transport decoded (gzip) has no byte ranges that match the file.
    let encoded = headers["Content-Encoding"].map { $0.lowercased() != "identity" } ?? false
    var append = false
    if status == 206 {
      expected = try resumedTotal(headers, length: length, request: request)
      append = true
    } else {
      expected = encoded ? nil : length
    }
    if let maximum = destination.maximumSize, let total = expected, total > maximum {
      throw discarded(
        "the download announces \(total) bytes, over its maximum size of \(maximum); nothing "
          + "was written", request: request)
    }
    try openFile(appending: append, encoded: encoded, headers: headers, request: request)
    resumedFrom = append ? offset : 0
    written = resumedFrom
    decodedFrom = encoded ? .some(length) : nil
    isWriting = true
    return true
  }

  /// The total a `206` announces; deletes the partial file and throws unless it resumes it.
  private func resumedTotal(
    _ headers: HTTPHeaders, length: Int64?, request: Request
  ) throws(CourierError) -> Int64? {
    guard let range = headers["Content-Range"].flatMap(Self.parseContentRange),
      range.start == offset, offset > 0
    else {
      try? FileManager.default.removeItem(at: destination.partialURL)
      try? FileManager.default.removeItem(at: destination.validatorURL)
      throw CourierError(
        kind: .badResponse,
        debugMessage: "206 with Content-Range \(headers["Content-Range"] ?? "none") "
          + "for a partial file of \(offset) bytes",
        request: request, attempts: 1, stage: "transport")
    }
    return range.total ?? length.map { offset + $0 }
  }

  /// Opens the partial file at its end when `appending`; else creates it, and its validator.
  private func openFile(
    appending append: Bool, encoded: Bool, headers: HTTPHeaders, request: Request
  ) throws(CourierError) {
    let manager = FileManager.default
    do {
      if !append {
        try? manager.removeItem(at: destination.validatorURL)
        guard manager.createFile(atPath: destination.partialURL.path, contents: nil) else {
          throw CocoaError(.fileWriteUnknown)
        }
        if !encoded, let key = sourceKey, let validator = Self.validator(headers) {
          let record = "\(Self.validatorFormat)\n\(key)\n\(validator)"
          try Data(record.utf8).write(to: destination.validatorURL)
        }
      }
      let handle = try CloseOnExecFile.forWriting(destination.partialURL)
      if append {
        try handle.truncate(atOffset: UInt64(offset))
        try handle.seekToEnd()
      }
      self.handle = handle
    } catch {
      throw CourierError(
        kind: .invalidRequest,
        debugMessage: "cannot write \(destination.partialURL.path): \(error)",
        underlying: error, request: request, attempts: 1, stage: "transport")
    }
  }

  /// Appends a piece of body to the file.
  ///
  /// Pieces are gathered to 1 MiB before they go to the file: transports deliver 16 KiB at a
  /// time, and a write call for each would slow the download down.
  public func write(_ data: Data) throws(CourierError) {
    guard handle != nil else { return }
    pending.append(data)
    try gathered(data.count)
  }

  /// Appends a piece of body that a transport holds in its own buffer (libcurl's write
  /// callback), copied straight into the gathered pieces without a `Data` of its own.
  package func write(_ bytes: UnsafeRawBufferPointer) throws(CourierError) {
    guard handle != nil, let base = bytes.baseAddress, !bytes.isEmpty else { return }
    pending.append(base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
    try gathered(bytes.count)
  }

  private func gathered(_ count: Int) throws(CourierError) {
    written += Int64(count)
    if let wireLength = decodedFrom, written > Self.decodedGrowthFloor {
      try checkGrowth(from: wireLength)
    }
    if let maximum = destination.maximumSize, written > maximum {
      throw discarded(
        "the download passed its maximum size of \(maximum) bytes; the partial file was deleted")
    }
    if pending.count >= Self.writeSize { try flush() }
  }

  /// Refuses a decoded body that grew past ``maximumDecodedGrowth`` times its length on the
  /// wire (``decodedSizeWithoutLength`` without one), and deletes what it wrote: a bomb
  /// leaves nothing to resume.
  private func checkGrowth(from wireLength: Int64?) throws(CourierError) {
    let limit =
      wireLength.map { $0.multipliedReportingOverflow(by: Self.maximumDecodedGrowth) }
      .map { $0.overflow ? Int64.max : $0.partialValue } ?? decodedSizeWithoutLength
    guard written > limit else { return }
    let measure =
      wireLength.map { "\(Self.maximumDecodedGrowth)× its \($0) bytes on the wire" }
      ?? "\(limit) bytes, with no Content-Length to measure it against"
    throw discarded(
      "the download's Content-Encoding was decoded by the transport and grew past \(measure) "
        + "(a decompression bomb?); the partial file was deleted")
  }

  /// The most bytes gathered before a write to the file.
  static let writeSize = 1 << 20

  private var pending = Data()

  private func flush() throws(CourierError) {
    guard let handle, !pending.isEmpty else { return }
    do {
      try handle.write(contentsOf: pending)
      pending.removeAll(keepingCapacity: true)
    } catch {
      throw CourierError(
        kind: .invalidRequest, debugMessage: "cannot write the download: \(error)",
        underlying: error, attempts: 1, stage: "transport")
    }
  }

  /// Closes the complete file and forgets its validator (nothing is left to resume).
  public func finish() throws(CourierError) -> DownloadedFile {
    try flush()
    do {
      try handle?.close()
    } catch {
      throw CourierError(
        kind: .invalidRequest, debugMessage: "cannot close the download: \(error)",
        underlying: error, attempts: 1, stage: "transport")
    }
    handle = nil
    try? FileManager.default.removeItem(at: destination.validatorURL)
    return DownloadedFile(url: destination.partialURL, byteCount: written, resumedFrom: resumedFrom)
  }

  /// Closes the file and deletes it and its validator — a body over a limit leaves nothing
  /// worth resuming — and returns the ``CourierError/Kind/bodyTooLarge`` to throw.
  private func discarded(_ message: String, request: Request? = nil) -> CourierError {
    pending = Data()
    try? handle?.close()
    handle = nil
    try? FileManager.default.removeItem(at: destination.partialURL)
    try? FileManager.default.removeItem(at: destination.validatorURL)
    return CourierError(
      kind: .bodyTooLarge, debugMessage: message, request: request, attempts: 1,
      stage: "transport")
  }

  /// Closes the file after a failed attempt, keeping it and its validator for a resume.
  public func abandon() {
    // What arrived is good: keep it for the resume.
    try? flush()
    try? handle?.close()
    handle = nil
  }

  /// The validator in a validator file's `data` when it was written for the URL whose key is
  /// `key`; `nil` for another URL, another format, or an empty validator.
  static func validator(in data: Data, forKey key: String) -> String? {
    let lines = String(decoding: data, as: UTF8.self).split(
      separator: "\n", maxSplits: 2, omittingEmptySubsequences: false)
    guard lines.count == 3, lines[0] == validatorFormat, lines[1] == key, !lines[2].isEmpty
    else { return nil }
    return String(lines[2])
  }

  /// A strong `ETag`, else `Last-Modified`; a weak `ETag` cannot be used in `If-Range`.
  static func validator(_ headers: HTTPHeaders) -> String? {
    if let etag = headers["ETag"], !etag.hasPrefix("W/"), !etag.isEmpty { return etag }
    return headers["Last-Modified"]
  }

  /// `bytes 100-199/1000` → (100, 1000); `bytes 100-199/*` → (100, nil).
  static func parseContentRange(_ value: String) -> (start: Int64, total: Int64?)? {
    let trimmed = value.trimmingCharacters(in: .whitespaces)
    guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
    let spec = trimmed.dropFirst(6)
    let parts = spec.split(separator: "/", maxSplits: 1)
    guard parts.count == 2, let dash = parts[0].firstIndex(of: "-"),
      let start = Int64(parts[0][..<dash].trimmingCharacters(in: .whitespaces))
    else { return nil }
    return (start, Int64(parts[1].trimmingCharacters(in: .whitespaces)))
  }
}
