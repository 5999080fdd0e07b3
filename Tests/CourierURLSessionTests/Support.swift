import Courier
import CourierTesting
import Foundation
import Testing

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

/// Runs `body` and returns the `CourierError` it throws, or `nil` when it throws nothing.
func courierError<T>(_ body: () async throws -> T) async -> CourierError? {
  do {
    _ = try await body()
    return nil
  } catch let error as CourierError {
    return error
  } catch {
    Issue.record("expected a CourierError, got \(type(of: error)): \(error)")
    return nil
  }
}

/// A port on 127.0.0.1 where nothing listens: a server's, after it shut down.
func closedPort() throws -> Int {
  let server = try MockServer()
  let port = server.port
  server.shutdown()
  return port
}
