import Courier
import CourierTesting
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

struct Profile: Codable, Sendable, Equatable {
  let name: String
  let age: Int
}

/// A server and a client on it, shut down by the test with ``shutdown()``.
struct WireFixture {
  let server: MockServer
  let transport: URLSessionTransport
  let client: Client

  init(
    pipeline: ResponsePipeline = .standard, locale: String = "en",
    configuration: URLSessionConfiguration = URLSessionTransport.defaultConfiguration,
    cookieStorage: HTTPCookieStorage? = nil,
    middleware: [any Middleware] = [],
    host: String = "127.0.0.1"
  ) throws {
    server = try MockServer(host: host)
    transport = URLSessionTransport(configuration: configuration, cookieStorage: cookieStorage)
    client = Client(
      baseURL: server.baseURL, transport: transport, middleware: middleware,
      pipeline: pipeline, locale: locale)
  }

  /// Shuts the transport's session and the server down.
  func shutdown() {
    transport.shutdown()
    server.shutdown()
  }
}

/// A port on 127.0.0.1 where nothing listens.
func closedPort() throws -> Int { try MockServer.closedPort() }

/// A middleware that reports every request entering the chain, so a test can wait for
/// requests to be under way without polling.
struct Entered: Middleware {
  let continuation: AsyncStream<Request>.Continuation

  /// The middleware and the stream of requests it saw.
  static func make() -> (Entered, AsyncStream<Request>) {
    let (stream, continuation) = AsyncStream<Request>.makeStream()
    return (Entered(continuation: continuation), stream)
  }

  func intercept(_ request: Request, next: Next) async throws -> Response {
    continuation.yield(request)
    return try await next(request)
  }
}

extension AsyncStream {
  /// Waits for the next `count` elements.
  func take(_ count: Int) async {
    var iterator = makeAsyncIterator()
    for _ in 0..<count { _ = await iterator.next() }
  }
}
