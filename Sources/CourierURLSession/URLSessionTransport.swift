import CourierCore
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A ``Transport`` that sends each attempt with `URLSession`.
///
/// One `send` is one `URLSession` task and nothing else: retries, timeouts beyond the
/// per-request one, logging and compression belong in middleware. Every `URLError` becomes a
/// ``CourierError`` with a matching kind (see ``URLErrorMapping``), and cancelling the calling
/// `Task` cancels the `URLSession` task.
///
/// ```swift
/// let transport = URLSessionTransport()               // ephemeral configuration
/// let custom = URLSessionTransport(configuration: {
///   let configuration = URLSessionConfiguration.ephemeral
///   configuration.httpMaximumConnectionsPerHost = 12
///   return configuration
/// }())
/// ```
///
/// ## Platform notes (Linux, where URLSession is libcurl)
/// - ``Request/timeout`` becomes `URLRequest.timeoutInterval`, which libcurl enforces as an
///   idle timeout (no bytes for that long), not a total deadline.
/// - libcurl decodes gzip responses itself but leaves `Content-Encoding` in place.
/// - At most 6 connections per host unless the configuration says otherwise.
public struct URLSessionTransport: Transport {
  /// The session every request is sent with.
  public let session: URLSession

  /// Creates a transport with its own session.
  ///
  /// - Parameter configuration: Copied when the session is created; default `.ephemeral`
  ///   (no disk cache, no shared cookie storage — nothing leaks between clients).
  public init(configuration: URLSessionConfiguration = .ephemeral) {
    self.session = URLSession(configuration: configuration)
  }

  /// Creates a transport that sends with an existing session.
  public init(session: URLSession) {
    self.session = session
  }

  /// Sends `request` once.
  ///
  /// - Throws: ``CourierError`` with a kind from ``URLErrorMapping`` (for example
  ///   ``CourierError/Kind/cannotConnect`` or ``CourierError/Kind/timedOut``),
  ///   ``CourierError/Kind/cancelled`` when the calling task was cancelled.
  public func send(_ request: Request) async throws -> Response {
    let urlRequest = Self.urlRequest(for: request)
    do {
      let (data, urlResponse): (Data, URLResponse)
      if let file = request.body.fileURL {
        (data, urlResponse) = try await session.upload(for: urlRequest, fromFile: file)
      } else if let body = request.body.data, !body.isEmpty {
        (data, urlResponse) = try await session.upload(for: urlRequest, from: body)
      } else {
        (data, urlResponse) = try await session.data(for: urlRequest)
      }
      guard let http = urlResponse as? HTTPURLResponse else {
        throw CourierError(
          kind: .badResponse, debugMessage: "URLSession returned a non-HTTP response",
          request: request, attempts: 1, stage: "transport")
      }
      return Response(
        status: http.statusCode, headers: Self.headers(of: http), body: data, request: request)
    } catch let error as CourierError {
      throw error
    } catch {
      var mapped = URLErrorMapping.courierError(for: error, request: request)
      if Task.isCancelled, mapped.kind != .cancelled {
        mapped.debugMessage += "; the calling task was cancelled"
        mapped.kind = .cancelled
      }
      throw mapped
    }
  }

  /// The `URLRequest` for `request`. Courier's headers are set one by one, so a name with
  /// several values is sent as several fields joined by URLSession.
  static func urlRequest(for request: Request) -> URLRequest {
    var urlRequest = URLRequest(url: request.url)
    urlRequest.httpMethod = request.method.rawValue
    for field in request.headers {
      urlRequest.addValue(field.value, forHTTPHeaderField: field.name.rawName)
    }
    if let timeout = request.timeout {
      let seconds = Double(timeout.components.seconds)
        + Double(timeout.components.attoseconds) / 1e18
      urlRequest.timeoutInterval = max(seconds, 0.001)
    }
    return urlRequest
  }

  static func headers(of response: HTTPURLResponse) -> HTTPHeaders {
    HTTPHeaders(
      received: response.allHeaderFields.compactMap { key, value in
        guard let name = key as? String else { return nil }
        return (name, value as? String ?? String(describing: value))
      })
  }
}
