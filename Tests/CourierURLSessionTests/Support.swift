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
