import CourierCore
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Reads HTTP/1.1 requests from a connected socket through a growable buffer.
///
/// Bytes are read in large blocks; the header block is located by scanning the buffer once,
/// and bodies larger than what is already buffered are received straight into their final
/// `Data`, so a multi-megabyte upload is not copied through the buffer.
struct RequestReader {
  /// The largest accepted header block (request line and fields), and trailer section.
  static let maxHeaderBytes = 64 * 1024
  /// The largest accepted request body held in memory.
  static let maxBodyBytes = 256 * 1024 * 1024
  /// The largest accepted request body written to a file (``MockServer/requestBodyDirectory``).
  static let maxFileBodyBytes = 64 * 1024 * 1024 * 1024
  /// The receive buffer while a body is streamed to a file.
  static let streamingBufferBytes = 256 * 1024
  /// The largest accepted chunk-size line, extensions included.
  static let maxChunkLineBytes = 4096

  private static let initialCapacity = 16 * 1024
  private static let cr = UInt8(ascii: "\r")
  private static let lf = UInt8(ascii: "\n")

  /// The connection being read.
  let fd: Int32
  private var buffer: [UInt8]
  /// Unconsumed bytes are `buffer[start..<end]`.
  private var start = 0
  private var end = 0

  /// Creates a reader for the connected socket `fd`.
  init(fd: Int32) {
    self.fd = fd
    self.buffer = [UInt8](repeating: 0, count: Self.initialCapacity)
  }

  // MARK: - Head

  /// Reads the next request line and header block.
  ///
  /// Returns `nil` if the peer closed the connection cleanly between requests.
  mutating func readHead() throws(RequestReadError) -> RequestHead? {
    if start == end {
      start = 0
      end = 0
    }
    // Offset from `start` up to which the buffer is known not to hold the terminator.
    var scanned = 0
    while true {
      // RFC 9112 §2.2: ignore empty lines received before the request line.
      while start < end, buffer[start] == Self.cr || buffer[start] == Self.lf {
        start += 1
        scanned = 0
      }
      if let terminator = findHeadTerminator(from: start + scanned) {
        guard terminator + 4 - start <= Self.maxHeaderBytes else { throw .headerTooLarge }
        let head = try parseHead(start..<terminator + 2)
        start = terminator + 4
        return head
      }
      let pending = end - start
      guard pending <= Self.maxHeaderBytes else { throw .headerTooLarge }
      scanned = max(0, pending - 3)
      guard fill() else {
        if end == start { return nil }
        throw .connectionClosed
      }
    }
  }

  /// The index of the first `\r\n\r\n` at or after `from`, if buffered.
  private func findHeadTerminator(from: Int) -> Int? {
    let last = end - 4
    guard from <= last else { return nil }
    return buffer.withUnsafeBufferPointer { bytes -> Int? in
      var index = from
      while index <= last {
        if bytes[index + 3] == Self.lf && bytes[index + 2] == Self.cr
          && bytes[index + 1] == Self.lf && bytes[index] == Self.cr
        {
          return index
        }
        index += 1
      }
      return nil
    }
  }

  /// Parses the lines in `range`, each of which ends with CRLF.
  private func parseHead(_ range: Range<Int>) throws(RequestReadError) -> RequestHead {
    let parsed = buffer.withUnsafeBufferPointer { bytes in
      HeadParser(bytes: bytes).parse(range)
    }
    return try parsed.get()
  }

  // MARK: - Body

  /// Reads the body framed by `head`: by `Content-Length`, de-chunked, or empty.
  mutating func readBody(for head: RequestHead) throws(RequestReadError) -> Data {
    var body = Data()
    if head.isChunked {
      try readChunkedBody(into: &body)
    } else if head.contentLength > 0 {
      try append(head.contentLength, to: &body)
    }
    return body
  }

  private mutating func readChunkedBody(into body: inout Data) throws(RequestReadError) {
    while true {
      let size = try readLine(limit: Self.maxChunkLineBytes) { Self.parseChunkSize($0) }
      guard let size else { throw .malformed }
      if size == 0 { break }
      guard size <= Self.maxBodyBytes - body.count else { throw .bodyTooLarge }
      try append(size, to: &body)
      let terminatorLength = try readLine(limit: 0) { $0.count }
      guard terminatorLength == 0 else { throw .malformed }
    }
    // Trailer section: fields up to an empty line. Read and discarded.
    var trailerBytes = 0
    while true {
      let length = try readLine(limit: Self.maxHeaderBytes) { $0.count }
      if length == 0 { return }
      trailerBytes += length + 2
      guard trailerBytes <= Self.maxHeaderBytes else { throw .headerTooLarge }
    }
  }

  /// Parses `chunk-size [ BWS ; chunk-ext ]`. Returns `nil` if malformed; sizes above the body
  /// limit are clamped to just above it so they fail the size check without overflowing.
  private static func parseChunkSize(_ line: UnsafeBufferPointer<UInt8>) -> Int? {
    var value = 0
    var digits = 0
    for byte in line {
      guard let digit = ASCII.hexValue(byte).map(Int.init) else {
        let endsDigits =
          byte == UInt8(ascii: ";") || byte == UInt8(ascii: " ")
          || byte == UInt8(ascii: "\t")
        return endsDigits && digits > 0 ? value : nil
      }
      digits += 1
      value = min(value * 16 + digit, maxFileBodyBytes + 1)
    }
    return digits > 0 ? value : nil
  }

  /// The most `append` grows a body by before its bytes have arrived, unless the body already
  /// holds more (then it doubles): memory follows what the peer sent, not what it declared.
  static let bodyGrowthStep = 1024 * 1024

  /// Appends exactly `count` bytes of the stream to `data`: first whatever is buffered, then
  /// straight from the socket into `data`'s storage.
  ///
  /// `data` grows by at most ``bodyGrowthStep`` (or its own size) ahead of the bytes received,
  /// so a declared size that is never sent (`Content-Length: 200000000`, a chunk of
  /// `FFFFFFF`) costs no more than that: growing it to `count` at once would let a request of
  /// a few bytes make the server allocate hundreds of MiB.
  private mutating func append(_ count: Int, to data: inout Data) throws(RequestReadError) {
    let buffered = min(count, end - start)
    if buffered > 0 {
      let from = start
      buffer.withUnsafeBytes { source in
        data.append(contentsOf: UnsafeRawBufferPointer(rebasing: source[from..<from + buffered]))
      }
      start += buffered
    }
    var remaining = count - buffered
    while remaining > 0 {
      let offset = data.count
      let step = min(remaining, max(Self.bodyGrowthStep, offset))
      data.count = offset + step
      var written = 0
      while written < step {
        let alreadyWritten = written
        let received = data.withUnsafeMutableBytes { destination -> Int in
          guard let base = destination.baseAddress else { return 0 }
          return Socket.receive(
            fd, into: base + offset + alreadyWritten, count: step - alreadyWritten)
        }
        guard received > 0 else { throw .connectionClosed }
        written += received
      }
      remaining -= step
    }
  }

  // MARK: - Streamed body

  /// Reads the body framed by `head` and hands it to `sink` piece by piece, through a fixed
  /// buffer, so a body of any size costs no more memory than that buffer. `sink` returns
  /// `false` to give up (the connection is then dropped). Returns the body's size.
  mutating func streamBody(
    for head: RequestHead,
    limit: Int,
    to sink: (UnsafeRawBufferPointer) -> Bool
  ) throws(RequestReadError) -> Int {
    if buffer.count < Self.streamingBufferBytes {
      buffer.append(contentsOf: repeatElement(0, count: Self.streamingBufferBytes - buffer.count))
    }
    guard head.isChunked else {
      guard head.contentLength <= limit else { throw .bodyTooLarge }
      try stream(head.contentLength, to: sink)
      return head.contentLength
    }
    var total = 0
    while true {
      let size = try readLine(limit: Self.maxChunkLineBytes) { Self.parseChunkSize($0) }
      guard let size else { throw .malformed }
      if size == 0 { break }
      guard size <= limit - total else { throw .bodyTooLarge }
      try stream(size, to: sink)
      total += size
      let terminatorLength = try readLine(limit: 0) { $0.count }
      guard terminatorLength == 0 else { throw .malformed }
    }
    var trailerBytes = 0
    while true {
      let length = try readLine(limit: Self.maxHeaderBytes) { $0.count }
      if length == 0 { return total }
      trailerBytes += length + 2
      guard trailerBytes <= Self.maxHeaderBytes else { throw .headerTooLarge }
    }
  }

  /// Hands exactly `count` bytes of the stream to `sink`, buffered ones first.
  private mutating func stream(
    _ count: Int, to sink: (UnsafeRawBufferPointer) -> Bool
  ) throws(RequestReadError) {
    var remaining = count
    while remaining > 0 {
      if start == end {
        start = 0
        end = 0
        guard fill() else { throw .connectionClosed }
      }
      let length = min(remaining, end - start)
      let from = start
      let accepted = buffer.withUnsafeBytes { bytes in
        sink(UnsafeRawBufferPointer(rebasing: bytes[from..<from + length]))
      }
      guard accepted else { throw .connectionClosed }
      start += length
      remaining -= length
    }
  }

  // MARK: - Lines and buffering

  /// Reads one line (ending in LF, optionally preceded by CR) and hands its content, without
  /// the line ending, to `parse`. Lines longer than `limit` are malformed.
  private mutating func readLine<T>(
    limit: Int,
    _ parse: (UnsafeBufferPointer<UInt8>) -> T
  ) throws(RequestReadError) -> T {
    var scanned = 0
    while true {
      if let newline = indexOfLineFeed(from: start + scanned) {
        var lineEnd = newline
        if lineEnd > start && buffer[lineEnd - 1] == Self.cr { lineEnd -= 1 }
        let lineStart = start
        let result = buffer.withUnsafeBufferPointer { bytes in
          parse(UnsafeBufferPointer(rebasing: bytes[lineStart..<lineEnd]))
        }
        start = newline + 1
        return result
      }
      scanned = end - start
      guard scanned <= limit + 1 else { throw .malformed }
      guard fill() else { throw .connectionClosed }
    }
  }

  private func indexOfLineFeed(from: Int) -> Int? {
    guard from < end else { return nil }
    return buffer.withUnsafeBytes { bytes -> Int? in
      guard let base = bytes.baseAddress,
        let found = memchr(base + from, Int32(Self.lf), end - from)
      else { return nil }
      return base.distance(to: UnsafeRawPointer(found))
    }
  }

  /// Receives more bytes, compacting or growing the buffer first if it is full. Returns
  /// `false` at end of stream or on error.
  private mutating func fill() -> Bool {
    if end == buffer.count {
      if start > 0 {
        let from = start
        let length = end - start
        buffer.withUnsafeMutableBytes { bytes in
          guard let base = bytes.baseAddress else { return }
          memmove(base, base + from, length)
        }
        start = 0
        end = length
      } else {
        buffer.append(contentsOf: repeatElement(0, count: buffer.count))
      }
    }
    let offset = end
    let received = buffer.withUnsafeMutableBytes { bytes -> Int in
      guard let base = bytes.baseAddress else { return 0 }
      return Socket.receive(fd, into: base + offset, count: bytes.count - offset)
    }
    guard received > 0 else { return false }
    end += received
    return true
  }
}

// MARK: - Header block parsing

/// Parses a request line and header fields out of raw bytes.
private struct HeadParser {
  let bytes: UnsafeBufferPointer<UInt8>

  private static let contentLength = Array("content-length".utf8)
  private static let transferEncoding = Array("transfer-encoding".utf8)
  private static let connection = Array("connection".utf8)
  private static let expect = Array("expect".utf8)
  private static let chunked = Array("chunked".utf8)
  private static let close = Array("close".utf8)
  private static let keepAlive = Array("keep-alive".utf8)
  private static let continue100 = Array("100-continue".utf8)

  private static let space = UInt8(ascii: " ")
  private static let tab = UInt8(ascii: "\t")
  private static let colon = UInt8(ascii: ":")
  private static let comma = UInt8(ascii: ",")

  /// Parses `range`, a sequence of lines each terminated by CRLF.
  func parse(_ range: Range<Int>) -> Result<RequestHead, RequestReadError> {
    guard let requestLineEnd = lineEnd(from: range.lowerBound, before: range.upperBound),
      var head = parseRequestLine(range.lowerBound..<requestLineEnd)
    else { return .failure(.malformed) }

    var transferEncodingSeen = false
    var lastCodingIsChunked = false
    var declaredLength: Int?
    var lineStart = requestLineEnd + 2
    head.headers.reserveCapacity(12)
    while lineStart < range.upperBound {
      guard let end = lineEnd(from: lineStart, before: range.upperBound) else {
        return .failure(.malformed)
      }
      let line = lineStart..<end
      lineStart = end + 2
      // Obsolete line folding and whitespace before the colon are rejected (RFC 9112 §5).
      guard let colon = firstIndex(of: Self.colon, in: line), colon > line.lowerBound,
        bytes[line.lowerBound] != Self.space, bytes[line.lowerBound] != Self.tab,
        bytes[colon - 1] != Self.space, bytes[colon - 1] != Self.tab
      else { return .failure(.malformed) }
      let name = line.lowerBound..<colon
      let value = trimmed(colon + 1..<line.upperBound)
      head.headers.append(MockHeader(name: string(name), value: string(value)))

      if equalsLowercase(name, Self.contentLength) {
        switch parseContentLength(value) {
        case .failure(let error):
          return .failure(error)
        case .success(let length):
          if let declaredLength, declaredLength != length { return .failure(.malformed) }
          declaredLength = length
        }
      } else if equalsLowercase(name, Self.transferEncoding) {
        transferEncodingSeen = true
        var last: Range<Int>?
        forEachListElement(in: value) { last = $0 }
        lastCodingIsChunked = last.map { equalsLowercase($0, Self.chunked) } ?? false
      } else if equalsLowercase(name, Self.connection) {
        forEachListElement(in: value) { token in
          if equalsLowercase(token, Self.close) { head.wantsClose = true }
          if equalsLowercase(token, Self.keepAlive) { head.wantsKeepAlive = true }
        }
      } else if equalsLowercase(name, Self.expect) {
        if equalsLowercase(value, Self.continue100) { head.expectsContinue = true }
      }
    }

    if transferEncodingSeen {
      // Only chunked is supported as the final coding; a body of unknown length is malformed.
      guard lastCodingIsChunked else { return .failure(.malformed) }
      head.isChunked = true
      // RFC 9112 §6.1: with both fields present, the connection must be closed afterwards.
      if declaredLength != nil { head.wantsClose = true }
    } else {
      head.contentLength = declaredLength ?? 0
    }
    return .success(head)
  }

  /// `METHOD SP request-target SP HTTP-version`.
  private func parseRequestLine(_ line: Range<Int>) -> RequestHead? {
    guard let firstSpace = firstIndex(of: Self.space, in: line),
      let secondSpace = firstIndex(of: Self.space, in: firstSpace + 1..<line.upperBound)
    else { return nil }
    let method = line.lowerBound..<firstSpace
    let target = firstSpace + 1..<secondSpace
    let version = secondSpace + 1..<line.upperBound
    guard !method.isEmpty, !target.isEmpty, version.count == 8,
      bytes[version.lowerBound + 5] == UInt8(ascii: "1"),
      bytes[version.lowerBound + 6] == UInt8(ascii: "."),
      UnsafeBufferPointer(rebasing: bytes[version.lowerBound..<version.lowerBound + 5])
        .elementsEqual("HTTP/".utf8)
    else { return nil }
    for index in line where bytes[index] < 0x20 || bytes[index] == 0x7F {
      return nil
    }
    return RequestHead(
      method: string(method),
      target: string(target),
      version: string(version),
      headers: []
    )
  }

  /// Parses a `Content-Length` value, which may be a list of identical numbers.
  private func parseContentLength(_ value: Range<Int>) -> Result<Int, RequestReadError> {
    var result: Int?
    var failure: RequestReadError?
    forEachListElement(in: value) { element in
      guard failure == nil else { return }
      var length = 0
      for index in element {
        let byte = bytes[index]
        guard ASCII.isDigit(byte) else {
          failure = .malformed
          return
        }
        length = length * 10 + Int(byte &- UInt8(ascii: "0"))
        // The in-memory limit is the connection's to apply: a body streamed to a file may be
        // larger.
        guard length <= RequestReader.maxFileBodyBytes else {
          failure = .bodyTooLarge
          return
        }
      }
      if let result, result != length { failure = .malformed }
      result = length
    }
    if let failure { return .failure(failure) }
    guard let result else { return .failure(.malformed) }
    return .success(result)
  }

  // MARK: Byte helpers

  /// The index of the CR of the first CRLF in `from..<before`; a bare CR or LF is malformed.
  private func lineEnd(from: Int, before: Int) -> Int? {
    var index = from
    while index < before {
      let byte = bytes[index]
      if byte == UInt8(ascii: "\r") {
        return index + 1 < before && bytes[index + 1] == UInt8(ascii: "\n") ? index : nil
      }
      if byte == UInt8(ascii: "\n") || byte == 0 { return nil }
      index += 1
    }
    return nil
  }

  private func firstIndex(of byte: UInt8, in range: Range<Int>) -> Int? {
    range.first { bytes[$0] == byte }
  }

  private func trimmed(_ range: Range<Int>) -> Range<Int> {
    var lower = range.lowerBound
    var upper = range.upperBound
    while lower < upper, bytes[lower] == Self.space || bytes[lower] == Self.tab { lower += 1 }
    while upper > lower, bytes[upper - 1] == Self.space || bytes[upper - 1] == Self.tab {
      upper -= 1
    }
    return lower..<upper
  }

  /// Calls `body` with each trimmed, non-empty element of a comma-separated list.
  private func forEachListElement(in range: Range<Int>, _ body: (Range<Int>) -> Void) {
    var elementStart = range.lowerBound
    for index in range.lowerBound...range.upperBound
    where index == range.upperBound || bytes[index] == Self.comma {
      let element = trimmed(elementStart..<index)
      if !element.isEmpty { body(element) }
      elementStart = index + 1
    }
  }

  /// Whether the bytes in `range` equal `lowercase` (already lower-case), ignoring ASCII case.
  private func equalsLowercase(_ range: Range<Int>, _ lowercase: [UInt8]) -> Bool {
    guard range.count == lowercase.count else { return false }
    var other = 0
    for index in range {
      if ASCII.lowercased(bytes[index]) != lowercase[other] { return false }
      other += 1
    }
    return true
  }

  private func string(_ range: Range<Int>) -> String {
    String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
  }
}
