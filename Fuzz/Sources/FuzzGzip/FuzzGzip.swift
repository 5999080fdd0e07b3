// libFuzzer target: GzipDecompressor over arbitrary bytes, in every format, whole and in
// pieces, within a small DecompressionLimit; and compress → decompress round trips.
//
// Errors (corruptBody, bodyTooLarge) are expected; a crash, a sanitizer report, output past
// the limit or a chunk larger than `chunkSize` is a bug.

import CourierCore
import CourierGzip
import Foundation

private let limit = DecompressionLimit(
  maximumSize: 1 << 20, maximumRatio: 50, ratioFloor: 64 * 1024)
private let formats: [GzipFormat] = [.gzip, .zlib, .rawDeflate, .deflate]

/// libFuzzer's entry point: runs one input of `size` bytes at `data`; returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let input = Data(bytes: data, count: size)
  // Split points vary with the input so that every piece boundary (including one inside the
  // two bytes `.deflate` sniffs) is reached.
  let pieceSize = 1 + size % 7
  for format in formats {
    decompress(input, format: format, pieceSize: nil)
    decompress(input, format: format, pieceSize: pieceSize)
  }
  roundTrip(input)
  return 0
}

private func decompress(_ input: Data, format: GzipFormat, pieceSize: Int?) {
  let decompressor = GzipDecompressor(format: format, limit: limit)
  var produced = 0
  do {
    let sink = { (chunk: UnsafeRawBufferPointer) in
      guard chunk.count <= GzipDecompressor.chunkSize else {
        fatalError("chunk of \(chunk.count) bytes passes chunkSize")
      }
      produced += chunk.count
      guard produced <= limit.maximumSize ?? Int.max else {
        fatalError("\(produced) bytes handed out past the \(limit) limit")
      }
    }
    if let pieceSize {
      var offset = input.startIndex
      while offset < input.endIndex {
        let end = min(offset + pieceSize, input.endIndex)
        try decompressor.decompress(input[offset..<end], output: sink)
        offset = end
      }
    } else {
      try decompressor.decompress(input, output: sink)
    }
    try decompressor.finish()
    guard decompressor.isComplete, decompressor.totalOut == produced else {
      fatalError("finished without a complete stream or with a wrong totalOut")
    }
  } catch let error as CourierError {
    guard error.kind == .corruptBody || error.kind == .bodyTooLarge else {
      fatalError("unexpected error kind \(error.kind): \(error)")
    }
    // After an error every later call throws the same error.
    do {
      try decompressor.finish()
      fatalError("finish() succeeded after an error")
    } catch {}
  } catch {
    fatalError("not a CourierError: \(error)")
  }
}

private func roundTrip(_ input: Data) {
  for format in [GzipFormat.gzip, .zlib, .rawDeflate] {
    do {
      let compressed = try GzipCompressor.compress(input, format: format)
      let restored = try GzipDecompressor.decompress(compressed, format: format, limit: .none)
      guard restored == input else { fatalError("\(format) round trip changed the bytes") }
    } catch {
      fatalError("\(format) round trip failed: \(error)")
    }
  }
}
