import CourierCore
import Foundation

/// Undoes one content coding of a streamed body (``ResponseBodyStream``) while it is read,
/// within the middleware's ``DecompressionLimit`` counted over the whole stream.
///
/// The first bytes decide, as for a body in memory: a gzip member, or for `deflate` a zlib
/// stream, is decoded; anything else passes as it came (the transport decoded it already, or
/// the server labelled a plain body). Raw deflate, which has no signature to tell it by, is
/// not decoded while streaming.
struct StreamedDecoding: ResponseBodyTransform {
  let coding: GzipFormat
  let limit: DecompressionLimit
  /// The first bytes, until there are enough to tell the format by.
  private var head = Data()
  private var decompressor: GzipDecompressor?
  private var passesThrough = false

  init(coding: GzipFormat, limit: DecompressionLimit) {
    self.coding = coding
    self.limit = limit
  }

  mutating func transform(_ chunk: Data) throws(CourierError) -> Data {
    if passesThrough { return chunk }
    if let decompressor { return try Self.decompress(chunk, with: decompressor, coding) }
    head.append(chunk)
    guard head.count >= 2 else { return Data() }
    let input = head
    head = Data()
    if GzipSniffer.isGzip(input) {
      let decompressor = GzipDecompressor(format: .gzip, limit: limit)
      self.decompressor = decompressor
      return try Self.decompress(input, with: decompressor, coding)
    }
    if coding == .deflate, GzipSniffer.isZlib(input) {
      let decompressor = GzipDecompressor(format: .zlib, limit: limit)
      self.decompressor = decompressor
      return try Self.decompress(input, with: decompressor, coding)
    }
    passesThrough = true
    return input
  }

  mutating func finish() throws(CourierError) -> Data {
    guard let decompressor else {
      // Under two bytes in all: no stream of either format, so not encoded.
      defer { head = Data() }
      return head
    }
    do {
      try decompressor.finish()
    } catch {
      throw Self.failure(error, coding)
    }
    return Data()
  }

  private static func decompress(
    _ input: Data, with decompressor: GzipDecompressor, _ coding: GzipFormat
  ) throws(CourierError) -> Data {
    var output = Data()
    do {
      try decompressor.decompress(input) { output.append(contentsOf: $0) }
    } catch {
      throw failure(error, coding)
    }
    return output
  }

  private static func failure(_ error: any Error, _ coding: GzipFormat) -> CourierError {
    var failure = CourierError(error, stage: "transport", otherwise: .corruptBody)
    failure.debugMessage =
      "GzipMiddleware: \(coding) streamed response body: \(failure.debugMessage)"
    return failure
  }
}
