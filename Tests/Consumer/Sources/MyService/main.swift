// A service file that imports Courier next to a module with Vapor's type names. Unqualified
// `Request`, `Response`, `Client`, `Middleware`, `HTTPHeaders` and `HTTPMethod` would be
// ambiguous here; the module name picks one.
import Courier
import CourierTesting
import FakeVapor
import Foundation

struct User: Decodable, Sendable {
  let id: Int
  let name: String
}

/// A Courier middleware, written with qualified names.
struct StampMiddleware: Courier.Middleware {
  func intercept(_ request: Courier.Request, next: Courier.Next) async throws -> Courier.Response {
    var request = request
    try request.headers.set("X-Stamp", "consumer")
    return try await next(request)
  }
}

/// A Vapor-side middleware in the same file.
struct VaporSide: FakeVapor.Middleware {
  func respond(to request: FakeVapor.Request) async throws -> FakeVapor.Response {
    FakeVapor.Response(status: request.method == .GET ? 200 : 405)
  }
}

/// An untyped `throws` function: the error is `any Error` here, so a `catch` casts it.
func loadUser(_ client: Courier.Client, id: Int) async throws -> User {
  try await client.send(Endpoint<User>(.get, "user/{id}").parameter("id", id))
}

func fail(_ message: String) -> Never {
  print("consumer: FAILED: \(message)")
  exit(1)
}

let server = try MockServer()
server.enqueue(.json(#"{"code":0,"msg":"ok","data":{"id":7,"name":"Li"}}"#))
server.enqueue(.json(#"{"code":40101,"msg":"Token expired","data":null}"#))

let client = Courier.Client(
  baseURL: server.url("/api/"), transport: URLSessionTransport(),
  middleware: [StampMiddleware()], pipeline: .envelope(.codeZero), locale: "en")

// Typed throws: `Client.send` throws `CourierError`, so `error` already is one.
do {
  let user = try await client.send(Endpoint<User>(.get, "user/{id}").parameter("id", 7))
  guard user.name == "Li" else { fail("decoded \(user)") }
} catch {
  fail(error.reason)
}
let recorded = try await server.takeRequest()
guard recorded.path == "/api/user/7", recorded.header("x-stamp") == "consumer" else {
  fail("server saw \(recorded.path) with X-Stamp \(recorded.header("x-stamp") ?? "none")")
}

// Untyped throws: cast to reach kind, code and reason.
do {
  _ = try await loadUser(client, id: 8)
  fail("a business failure was not thrown")
} catch let error as CourierError {
  guard error.kind == .business, error.code == "40101" else { fail(error.debugDescription) }
}

let vapor = try await VaporSide().respond(to: FakeVapor.Request(method: .GET))
let headers = Courier.HTTPHeaders()
let method: Courier.HTTPMethod = .get
guard vapor.status == 200, headers.isEmpty, method.rawValue == "GET" else { fail("names") }
server.shutdown()
print("consumer: ok (Courier used by path from another package, next to Vapor's type names)")
