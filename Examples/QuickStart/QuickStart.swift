// The README's quick start, compiled by CI so it cannot rot: `.ci/run` checks that the README
// shows `import Courier` and the code between the markers. `swift run quick-start` runs it
// against the embedded MockServer.
import Courier
import CourierTesting
import Foundation

// README:begin
struct User: Decodable, Sendable {
  let id: Int
  let name: String
}

/// Logs each attempt's outcome; any type with `intercept(_:next:)` is a middleware.
struct PrintMiddleware: Middleware {
  func intercept(_ request: Request, next: Next) async throws -> Response {
    do {
      let response = try await next(request)
      print("\(request.method) \(request.url.path) -> \(response.status)")
      return response
    } catch let error as CourierError {
      // A 4xx, a 5xx or a business failure arrives here as an error already: the response
      // checks run next to the wire, below your middleware.
      print("\(request.method) \(request.url.path) -> \(error.kind)")
      throw error
    }
  }
}

func quickStart(baseURL: URL) async {
  // One client for every endpoint: base URL, response rules, and the standard middleware
  // (headers, request id, retry, reachability, timeout, logging, gzip) over the platform's
  // transport (CurlTransport on Linux).
  let client = Client.standard(
    baseURL: baseURL,
    pipeline: .envelope(.codeZero)  // {"code": 0, "msg": "...", "data": {...}}
  ) {
    $0.perAttempt = [PrintMiddleware()]  // your own middleware, for every attempt
  }

  do {
    let user = try await client.send(
      Endpoint<User>(.get, "user/check/{phone}").parameter("phone", "+86 138 0013 8000"))
    print("Hello, \(user.name)")
  } catch {
    // Always a CourierError: a kind for code, a reason for people (en / zh-Hans).
    print("\(error.kind): \(error.reason)")
  }
}
// README:end

@main
struct QuickStart {
  static func main() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(.json(#"{"code":0,"msg":"ok","data":{"id":7,"name":"Li Lei"}}"#))
    server.enqueue(.json(#"{"code":40101,"msg":"Token expired","data":null}"#))
    await quickStart(baseURL: server.baseURL)
    await quickStart(baseURL: server.baseURL)
  }
}
