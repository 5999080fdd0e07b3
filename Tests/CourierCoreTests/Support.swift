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
