// Stand-ins for the types Vapor and NIOHTTP1 export under the same names as Courier's:
// `Request`, `Response`, `Client`, `Middleware`, `HTTPHeaders`, `HTTPMethod`.

/// Vapor's request (a class there too).
public final class Request: Sendable {
  /// The method.
  public let method: HTTPMethod
  /// Creates a request.
  public init(method: HTTPMethod) { self.method = method }
}

/// Vapor's response.
public final class Response: Sendable {
  /// The status.
  public let status: Int
  /// Creates a response.
  public init(status: Int) { self.status = status }
}

/// Vapor's client protocol.
public protocol Client: Sendable {
  /// Sends a request.
  func send(_ request: Request) async throws -> Response
}

/// Vapor's middleware protocol.
public protocol Middleware: Sendable {
  /// Responds to a request.
  func respond(to request: Request) async throws -> Response
}

/// NIOHTTP1's headers.
public struct HTTPHeaders: Sendable {
  /// The fields.
  public var fields: [(String, String)] = []
  /// Creates empty headers.
  public init() {}
}

// swift-format-ignore: AlwaysUseLowerCamelCase
/// NIOHTTP1's method enum (upper-case cases, as NIOHTTP1 spells them).
public enum HTTPMethod: Sendable {
  /// GET
  case GET
  /// POST
  case POST
}
