import CourierCore
import Foundation

/// A response body ``MockServer`` produces piece by piece as it sends, never holding it whole:
/// a file on disk or bytes computed from their offset. Set it as ``MockResponse/source``;
/// ``MockResponse/ranged(_:request:etag:lastModified:contentType:)`` answers `Range` and `If-Range` from it.
///
/// ```swift
/// let body = try MockBodySource.file(URL(fileURLWithPath: "/tmp/big.bin"))
/// server.setDispatcher { request in .ranged(body, request: request, etag: "\"v1\"") }
/// ```
public struct MockBodySource: Sendable {
  /// The body's size in bytes.
  public let count: Int
  private let read: @Sendable (_ offset: Int, _ count: Int) -> Data

  /// A body of `count` bytes whose bytes `produce(offset, count)` returns on demand.
  public init(count: Int, produce: @escaping @Sendable (_ offset: Int, _ count: Int) -> Data) {
    self.count = count
    self.read = produce
  }

  /// The bytes of a file, read as they are sent.
  ///
  /// - Throws: When the file cannot be opened.
  public static func file(_ url: URL) throws -> MockBodySource {
    let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
    let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
    return MockBodySource(count: size) { offset, count in
      guard let handle = try? CloseOnExecFile.forReading(url) else { return Data() }
      defer { try? handle.close() }
      guard (try? handle.seek(toOffset: UInt64(offset))) != nil else { return Data() }
      return (try? handle.read(upToCount: count)) ?? Data()
    }
  }

  /// `count` bytes of `pattern` repeated.
  public static func repeating(_ pattern: Data, count: Int) -> MockBodySource {
    let bytes = [UInt8](pattern.isEmpty ? Data([0]) : pattern)
    return MockBodySource(count: count) { offset, count in
      var output = Data(capacity: count)
      var position = offset % bytes.count
      while output.count < count {
        let take = min(bytes.count - position, count - output.count)
        output.append(contentsOf: bytes[position..<(position + take)])
        position = 0
      }
      return output
    }
  }

  /// The bytes in `offset..<offset + count`, clamped to the body.
  public func bytes(at offset: Int, count: Int) -> Data {
    let count = max(0, min(count, self.count - offset))
    return count == 0 ? Data() : read(offset, count)
  }
}

extension MockResponse {
  /// A response that streams `source`, honouring the request's `Range` (one range,
  /// `bytes=N-`, `bytes=N-M` or `bytes=-N`) with `206` and `Content-Range`, and `If-Range`: a
  /// validator other than `etag` or `lastModified` gets the whole body with `200`. A range
  /// that starts past the end gets `416`.
  public static func ranged(
    _ source: MockBodySource, request: RecordedRequest, etag: String? = nil,
    lastModified: String? = nil, contentType: String = "application/octet-stream"
  ) -> MockResponse {
    var headers = [
      MockHeader(name: "Content-Type", value: contentType),
      MockHeader(name: "Accept-Ranges", value: "bytes"),
    ]
    if let etag { headers.append(MockHeader(name: "ETag", value: etag)) }
    if let lastModified { headers.append(MockHeader(name: "Last-Modified", value: lastModified)) }
    var range = 0..<source.count
    var status = 200
    let ifRange = request.header("If-Range")
    let validatorMatches = ifRange == nil || ifRange == etag || ifRange == lastModified
    if let spec = request.header("Range"), validatorMatches,
      let parsed = Self.parseRange(spec, count: source.count)
    {
      guard parsed.lowerBound < source.count else {
        return MockResponse(
          status: 416,
          headers: [MockHeader(name: "Content-Range", value: "bytes */\(source.count)")])
      }
      range = parsed
      status = 206
      headers.append(
        MockHeader(
          name: "Content-Range",
          value: "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(source.count)"))
    }
    headers.append(MockHeader(name: "Content-Length", value: String(range.count)))
    var response = MockResponse(status: status, headers: headers)
    response.source = source
    response.sourceRange = range
    return response
  }

  /// `bytes=N-`, `bytes=N-M`, `bytes=-N` → a range of `0..<count` (start may be past it).
  static func parseRange(_ spec: String, count: Int) -> Range<Int>? {
    let value = spec.trimmingCharacters(in: .whitespaces)
    guard value.hasPrefix("bytes="), !value.contains(",") else { return nil }
    let parts = value.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 2 else { return nil }
    let first = Int(parts[0].trimmingCharacters(in: .whitespaces))
    let last = Int(parts[1].trimmingCharacters(in: .whitespaces))
    switch (first, last) {
    case (let start?, nil): return start..<max(start, count)
    case (let start?, let end?) where end >= start: return start..<max(start, min(end + 1, count))
    case (nil, let suffix?): return max(0, count - suffix)..<count
    default: return nil
    }
  }
}
