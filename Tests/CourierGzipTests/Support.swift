import CourierCore
import CourierTesting
import Foundation

@testable import CourierGzip

/// Reproducible pseudo-random bytes (``SplitMix64``), fast enough for 64 MiB in a debug build.
func randomBytes(_ count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> Data {
  var generator = SplitMix64(seed: seed)
  var data = Data(count: count)
  data.withUnsafeMutableBytes { raw in
    let words = count / 8
    let wordPointer = raw.baseAddress?.assumingMemoryBound(to: UInt64.self)
    for index in 0..<words { wordPointer?[index] = generator.next() }
    for index in (words * 8)..<count {
      generator.state &+= 0x9E37_79B9_7F4A_7C15
      raw[index] = UInt8(truncatingIfNeeded: generator.state >> 17)
    }
  }
  return data
}

/// Text-like bytes that compress well: a JSON record repeated with a counter.
func repetitiveBytes(_ count: Int) -> Data {
  var data = Data()
  data.reserveCapacity(count)
  var index = 0
  while data.count < count {
    data.append(contentsOf: #"{"id":\#(index % 1000),"name":"Li Lei","city":"Beijing"},"#.utf8)
    index += 1
  }
  return data.prefix(count)
}

/// Decompresses `data` in pieces of `piece` bytes, as a transport would deliver it.
func decompressInPieces(
  _ data: Data, piece: Int, format: GzipFormat = .gzip, limit: DecompressionLimit = .standard
) throws -> Data {
  let decompressor = GzipDecompressor(format: format, limit: limit)
  var output = Data()
  var start = data.startIndex
  while start < data.endIndex {
    let end = min(start + piece, data.endIndex)
    try decompressor.decompress(data[start..<end]) { output.append(contentsOf: $0) }
    start = end
  }
  try decompressor.finish()
  return output
}

/// The error `body` throws as a `CourierError`, or `nil` when it throws nothing.
func codecError(_ body: () throws -> Void) -> CourierError? {
  do {
    try body()
    return nil
  } catch let error as CourierError {
    return error
  } catch {
    return CourierError(kind: .transport, debugMessage: "not a CourierError: \(error)")
  }
}

/// Runs `/usr/bin/gzip` with `arguments`, feeding `input` on standard input; returns standard
/// output and the exit status (``ChildProcess``: close-on-exec socket pairs, polled, so
/// neither fills up and no other child holds them open).
func runGzip(_ arguments: [String], input: Data) throws -> (output: Data, status: Int32) {
  let result = try ChildProcess.run("/usr/bin/gzip", arguments, input: input)
  return (result.output, result.status)
}
