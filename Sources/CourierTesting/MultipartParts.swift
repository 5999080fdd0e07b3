import CourierCore
import Foundation

/// A small `multipart/form-data` parser for tests: splits a body received by ``MockServer``
/// into its parts, from memory or from a file (``MockServer/requestBodyDirectory``) without
/// loading it.
///
/// ```swift
/// import CourierTesting
/// import Foundation
///
/// let body = Data("--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--b--\r\n".utf8)
/// let parts = try MultipartParts.parse(body, boundary: "b")
/// assert(parts[0].name == "a" && parts[0].content == Data("1".utf8))
/// ```
public enum MultipartParts {
  /// Why a body could not be parsed.
  public struct ParseError: Error, CustomStringConvertible, Sendable {
    /// What is wrong.
    public var message: String

    /// Creates an error.
    public init(_ message: String) {
      self.message = message
    }

    /// The message.
    public var description: String { "MultipartParts.ParseError: \(message)" }
  }

  /// The `boundary` parameter of a `multipart/…` content type.
  public static func boundary(fromContentType contentType: String) -> String? {
    for parameter in contentType.split(separator: ";").dropFirst() {
      let pair = parameter.split(separator: "=", maxSplits: 1)
      guard pair.count == 2,
        asciiCaseInsensitiveEquals(pair[0].trimmingCharacters(in: .whitespaces), "boundary")
      else { continue }
      var value = pair[1].trimmingCharacters(in: .whitespaces)
      if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
        value = String(value.dropFirst().dropLast())
      }
      return value
    }
    return nil
  }

  /// Splits an in-memory body; each part carries its ``MultipartPart/content``.
  ///
  /// - Throws: ``ParseError`` when the body has no delimiter, a part lacks its header block,
  ///   or the close delimiter is missing.
  public static func parse(_ body: Data, boundary: String) throws -> [MultipartPart] {
    let source = Source(size: Int64(body.count)) { offset, count in
      let lower = body.startIndex + Int(offset)
      return body[lower..<min(body.endIndex, lower + count)]
    }
    var parts = try parse(source, boundary: boundary)
    for index in parts.indices {
      let range = parts[index].contentRange
      let lower = body.startIndex + Int(range.lowerBound)
      parts[index].content = body[lower..<lower + Int(range.count)]
    }
    return parts
  }

  /// Splits a body held in a file, reading it in 1 MiB blocks: memory stays small whatever
  /// its size. Parts carry ``MultipartPart/contentRange`` but no content.
  ///
  /// - Throws: ``ParseError`` as ``parse(_:boundary:)`` does, or the file's read error.
  public static func parse(fileAt url: URL, boundary: String) throws -> [MultipartPart] {
    let handle = try CloseOnExecFile.forReading(url)
    defer { try? handle.close() }
    let size = Int64(try handle.seekToEnd())
    let source = Source(size: size) { offset, count in
      try handle.seek(toOffset: UInt64(offset))
      return try handle.read(upToCount: count) ?? Data()
    }
    return try parse(source, boundary: boundary)
  }

  /// Random access to the body.
  private struct Source {
    let size: Int64
    let read: (Int64, Int) throws -> Data
  }

  private static let blockSize = 1024 * 1024
  private static let maxHeaderBlock = 64 * 1024

  private static func parse(_ source: Source, boundary: String) throws -> [MultipartPart] {
    let dash = Array("--\(boundary)".utf8)
    let delimiter = Array("\r\n".utf8) + dash
    // Delimiters: offsets of the `--boundary` that starts each one.
    var delimiters: [Int64] = []
    if try source.read(0, dash.count).elementsEqual(dash) { delimiters.append(0) }
    var offset: Int64 = 0
    while offset < source.size {
      let block = try source.read(offset, blockSize + delimiter.count - 1)
      block.withUnsafeBytes { bytes in
        var from = 0
        while let found = ByteSearch.firstOffset(of: delimiter, in: bytes, from: from) {
          // Matches that start in the overlap are found again with the next block.
          if found < blockSize { delimiters.append(offset + Int64(found) + 2) }
          from = found + 1
        }
      }
      offset += Int64(blockSize)
    }
    guard !delimiters.isEmpty else { throw ParseError("no delimiter --\(boundary) in the body") }

    var parts: [MultipartPart] = []
    for (number, start) in delimiters.enumerated() {
      let afterDash = start + Int64(dash.count)
      let window = try source.read(afterDash, maxHeaderBlock)
      let bytes = Array(window)
      if bytes.starts(with: Array("--".utf8)) { return parts }
      // Transport padding (RFC 2046 §5.1.1), then the CRLF ending the delimiter line.
      var index = 0
      while index < bytes.count, bytes[index] == UInt8(ascii: " ") || bytes[index] == 9 {
        index += 1
      }
      guard bytes[index...].starts(with: Array("\r\n".utf8)) else {
        throw ParseError("delimiter \(number) is not followed by CRLF")
      }
      index += 2
      let headers: [MockHeader]
      (headers, index) = try headerBlock(bytes, from: index, part: number)
      guard number + 1 < delimiters.count else {
        throw ParseError("part \(number) is not followed by a delimiter")
      }
      let contentStart = afterDash + Int64(index)
      let contentEnd = delimiters[number + 1] - 2
      guard contentStart <= contentEnd else {
        throw ParseError("part \(number)'s header block overlaps the next delimiter")
      }
      parts.append(MultipartPart(headers: headers, contentRange: contentStart..<contentEnd))
    }
    throw ParseError("no close delimiter --\(boundary)--")
  }

  /// Parses header lines from `index` up to the empty line; returns them and the index after.
  private static func headerBlock(
    _ bytes: [UInt8], from start: Int, part: Int
  ) throws -> ([MockHeader], Int) {
    var headers: [MockHeader] = []
    var index = start
    while true {
      guard
        let lineEnd = (index..<max(index, bytes.count - 1)).first(where: {
          bytes[$0] == UInt8(ascii: "\r") && bytes[$0 + 1] == UInt8(ascii: "\n")
        })
      else {
        throw ParseError("part \(part)'s header block does not end within 64 KiB")
      }
      if lineEnd == index { return (headers, index + 2) }
      let line = String(decoding: bytes[index..<lineEnd], as: UTF8.self)
      guard let colon = line.firstIndex(of: ":") else {
        throw ParseError("part \(part) has a header line without a colon: \(line.debugDescription)")
      }
      headers.append(
        MockHeader(
          name: String(line[..<colon]),
          value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
      index = lineEnd + 2
    }
  }
}
