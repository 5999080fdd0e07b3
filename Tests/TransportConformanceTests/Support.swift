import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A transport the conformance suite runs against; each case takes it as an argument, so a
/// failure names the transport.
enum TransportKind: String, CaseIterable, Codable, Sendable, CustomTestStringConvertible {
  case urlSession
  case curl

  /// Every transport that talks to a real server.
  static let wire: [TransportKind] = allCases

  var testDescription: String {
    switch self {
    case .urlSession: "URLSessionTransport"
    case .curl: "CurlTransport"
    }
  }

  /// A new transport of this kind allowing `connections` connections per host.
  func make(connections: Int? = nil) -> TransportUnderTest {
    switch self {
    case .urlSession:
      let configuration = URLSessionTransport.defaultConfiguration
      if let connections { configuration.httpMaximumConnectionsPerHost = connections }
      return TransportUnderTest(URLSessionTransport(configuration: configuration))
    case .curl:
      var configuration = CurlTransport.Configuration.standard
      if let connections { configuration.maximumConnectionsPerHost = connections }
      return TransportUnderTest(CurlTransport(configuration: configuration))
    }
  }
}

/// A transport and how to shut it down.
struct TransportUnderTest: Sendable {
  let transport: any Transport
  let shutdown: @Sendable () -> Void
  let isShutDown: @Sendable () -> Bool

  init(_ transport: URLSessionTransport) {
    self.transport = transport
    shutdown = { transport.shutdown() }
    isShutDown = { transport.isShutDown }
  }

  init(_ transport: CurlTransport) {
    self.transport = transport
    shutdown = { transport.shutdown() }
    isShutDown = { transport.isShutDown }
  }
}

struct Profile: Codable, Sendable, Equatable {
  let name: String
  let age: Int
}

/// A server and a client on it over one transport, shut down by the test with ``shutdown()``.
struct Fixture {
  let server: MockServer
  let underTest: TransportUnderTest
  let client: Client

  init(
    _ kind: TransportKind, connections: Int? = nil, middleware: [any Middleware] = [],
    pipeline: ResponsePipeline = .standard
  ) throws {
    server = try MockServer()
    underTest = kind.make(connections: connections)
    client = Client(
      baseURL: server.baseURL, transport: underTest.transport, middleware: middleware,
      pipeline: pipeline, locale: "en")
  }

  /// Shuts the transport and the server down.
  func shutdown() {
    underTest.shutdown()
    server.shutdown()
  }
}

/// How many sockets this process has open.
func openSockets() -> Int { ProcessProbe.openSockets() }

/// Every transport, the stub included, for the cases that need no real server: scripted
/// answers, waiting for requests, cancellation and counting.
enum Subject: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case urlSession
  /// `URLSessionTransport(session:)` over a session the test made, as a caller would.
  case callersSession
  case curl
  case stub

  var testDescription: String {
    switch self {
    case .urlSession: "URLSessionTransport"
    case .callersSession: "URLSessionTransport(session:)"
    case .curl: "CurlTransport"
    case .stub: "StubTransport"
    }
  }
}

/// What a ``Backend`` answers for a request path.
enum Scripted: Sendable {
  /// A response with this status and body.
  case respond(status: Int, body: Data)
  /// No answer, ever.
  case hang
}

/// A client over one ``Subject``, with answers scripted by path.
struct Backend {
  let client: Client
  private let server: MockServer?
  private let stub: StubTransport?
  private let underTest: TransportUnderTest?

  init(_ subject: Subject, connections: Int? = nil, middleware: [any Middleware] = []) throws {
    switch subject {
    case .stub:
      let stub = StubTransport()
      self.stub = stub
      server = nil
      underTest = nil
      client = Client(
        baseURL: URL(string: "http://stub.test/"), transport: stub, middleware: middleware,
        locale: "en")
    case .urlSession, .callersSession, .curl:
      let server = try MockServer()
      server.recordsRequests = true
      let underTest: TransportUnderTest
      switch subject {
      case .curl: underTest = TransportKind.curl.make(connections: connections)
      case .callersSession:
        let configuration = URLSessionConfiguration.ephemeral
        if let connections { configuration.httpMaximumConnectionsPerHost = connections }
        underTest = TransportUnderTest(
          URLSessionTransport(session: URLSession(configuration: configuration)))
      default: underTest = TransportKind.urlSession.make(connections: connections)
      }
      self.server = server
      self.underTest = underTest
      stub = nil
      client = Client(
        baseURL: server.baseURL, transport: underTest.transport, middleware: middleware,
        locale: "en")
    }
  }

  /// Answers every request with `script(path)`.
  func answer(_ script: @escaping @Sendable (String) -> Scripted) {
    if let server {
      server.setDispatcher { request in
        switch script(request.path) {
        case .respond(let status, let body): MockResponse(status: status, body: body)
        case .hang: MockResponse(fault: .hang)
        }
      }
    }
    stub?.on(nil, "**") { request in
      switch script(request.url.path) {
      case .respond(let status, let body): StubResponse(status: status, body: body)
      case .hang: .never
      }
    }
  }

  /// Returns once `count` requests in all reached the server (or the stub).
  func waitForRequests(_ count: Int) async throws {
    if let server {
      while server.requestCount < count { _ = try await server.takeRequest() }
    }
    await stub?.waitForRequests(count)
  }

  /// How many requests reached the server (or the stub).
  var requestCount: Int { server?.requestCount ?? stub?.requests.count ?? 0 }

  func shutdown() {
    underTest?.shutdown()
    server?.shutdown()
  }
}
