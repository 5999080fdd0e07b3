import CourierCore
import CourierTesting
import Foundation
import Synchronization

/// Records strings from concurrent code, in order.
final class Recorder: Sendable {
  private let entries = Mutex<[String]>([])
  func record(_ entry: String) { entries.withLock { $0.append(entry) } }
  var all: [String] { entries.withLock { $0 } }
}

/// A middleware that records when a request passes in and its response passes out.
struct RecordingMiddleware: Middleware {
  let name: String
  let recorder: Recorder
  func intercept(_ request: Request, next: Next) async throws -> Response {
    recorder.record("\(name) in")
    let response = try await next(request)
    recorder.record("\(name) out")
    return response
  }
}

let testBase = URL(string: "https://api.example.test/v1/")!

func stubClient(
  _ stub: StubTransport, middleware: [any Middleware] = [], pipeline: ResponsePipeline = .standard,
  locale: String = "en"
) -> Client {
  Client(
    baseURL: testBase, transport: stub, middleware: middleware, pipeline: pipeline,
    locale: locale)
}

/// `seed` with one to four random edits: a byte replaced by a piece of `insertions`, a byte
/// removed, or a piece inserted.
func mutant(
  of seed: [UInt8], insertions: [[UInt8]], maximumEdits: Int = 4,
  using generator: inout SplitMix64
) -> [UInt8] {
  var bytes = seed
  for _ in 0..<Int.random(in: 1...maximumEdits, using: &generator) {
    let position = Int.random(in: 0..<bytes.count, using: &generator)
    let piece = insertions.randomElement(using: &generator) ?? [0x20]
    switch Int.random(in: 0..<3, using: &generator) {
    case 0: bytes.replaceSubrange(position..<(position + 1), with: piece)
    case 1: bytes.remove(at: position)
    default: bytes.insert(contentsOf: piece, at: position)
    }
    if bytes.isEmpty { bytes = [0x7B] }
  }
  return bytes
}
