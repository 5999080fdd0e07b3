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

/// Sends the app's API key on every attempt: any type with `intercept(_:next:)` is a middleware.
struct APIKeyMiddleware: Middleware {
  let key: String

  func intercept(_ request: Request, next: Next) async throws -> Response {
    var request = request
    try request.headers.set("X-API-Key", key)
    return try await next(request)
  }
}

/// One client for every endpoint: the base URL, how responses say "failed" (here an envelope,
/// `{"code": 0, "msg": "…", "data": {…}}`), and the standard middleware with yours among them.
func makeClient(baseURL: URL, transport: any Transport = Client.standardTransport()) -> Client {
  Client.standard(baseURL: baseURL, transport: transport, pipeline: .envelope(.codeZero)) {
    $0.perAttempt = [APIKeyMiddleware(key: "my-api-key")]
  }
}

func greet(_ client: Client, userID: Int) async {
  do {
    let user = try await client.send(Endpoint<User>(.get, "user/{id}").parameter("id", userID))
    print("Hello, \(user.name)")
  } catch {
    // Always a CourierError: a kind for code, a reason for people.
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
    let client = makeClient(baseURL: server.baseURL)
    print(client.chainDescription)
    await greet(client, userID: 7)
    await greet(client, userID: 8)
  }
}
