import Courier
import CourierTesting
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A JSON model the wire tests decode.
struct Profile: Codable, Sendable, Equatable {
  let name: String
  let age: Int
}

/// A `MockServer` and a client on it over a real transport, for tests of the chain and the
/// pipeline that are not about the transport; shut down by the test with ``shutdown()``.
struct ChainFixture {
  let server: MockServer
  let client: Client
  private let stopTransport: @Sendable () -> Void

  /// Sends with a new `URLSessionTransport` (its default configuration) unless given one.
  init(
    pipeline: ResponsePipeline = .standard, locale: String = "en",
    middleware: [any Middleware] = [],
    transport: (any Transport)? = nil
  ) throws {
    server = try MockServer()
    let chosen: any Transport
    if let transport {
      chosen = transport
      stopTransport = {}
    } else {
      let session = URLSessionTransport()
      chosen = session
      stopTransport = { session.shutdown() }
    }
    client = Client(
      baseURL: server.baseURL, transport: chosen, middleware: middleware,
      pipeline: pipeline, locale: locale)
  }

  /// Shuts the transport this fixture made and the server down.
  func shutdown() {
    stopTransport()
    server.shutdown()
  }
}
