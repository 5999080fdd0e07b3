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

/// A server and a client on it, shut down by the test.
struct WireFixture {
  let server: MockServer
  let client: Client

  init(
    pipeline: ResponsePipeline = .standard, locale: String = "en",
    configuration: URLSessionConfiguration = URLSessionTransport.defaultConfiguration
  ) throws {
    server = try MockServer()
    client = Client(
      baseURL: server.baseURL, transport: URLSessionTransport(configuration: configuration),
      pipeline: pipeline, locale: locale)
  }
}

/// A port on 127.0.0.1 where nothing listens: a server's, after it shut down.
func closedPort() throws -> Int {
  let server = try MockServer()
  let port = server.port
  server.shutdown()
  return port
}
