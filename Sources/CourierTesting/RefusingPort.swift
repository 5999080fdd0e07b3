import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A port on a loopback address that refuses every connection for as long as this value
/// lives: the target for "connection refused" tests.
///
/// A socket is bound to the port and never listens, so a connection to it is refused at once
/// (`ECONNREFUSED`), and the kernel gives the port to no other socket meanwhile — not to a
/// ``MockServer`` another test starts in parallel, which a port taken from a server that had
/// just shut down could be given to (the test then saw "Connection reset by peer" instead of a
/// refusal). The socket closes when the last reference goes: keep the value until the request
/// has failed.
///
/// ```
/// let refusing = try RefusingPort()
/// let client = Client(baseURL: refusing.baseURL, transport: CurlTransport())
/// let error = await #expect(throws: CourierError.self) {
///   try await client.send(Endpoint<Data>(.get, "x"))
/// }
/// #expect(error?.kind == .cannotConnect)
/// withExtendedLifetime(refusing) {}
/// ```
public final class RefusingPort: Sendable {
  /// The port; connections to it are refused while this value lives.
  public let port: Int
  /// `http://127.0.0.1:<port>/` (`http://[::1]:<port>/` for IPv6).
  public let baseURL: URL
  private let fd: Int32

  /// Binds a free port on `host` without listening on it.
  ///
  /// - Parameter host: A numeric address, normally loopback; default `127.0.0.1` (`::1` for
  ///   IPv6).
  /// - Throws: ``MockServerError`` when the address is not numeric or the socket cannot be
  ///   made or bound.
  public init(host: String = "127.0.0.1") throws(MockServerError) {
    let socket = try Socket.boundSocket(host: host, port: 0, listening: false)
    guard let baseURL = URL(string: "http://\(socket.urlHost):\(socket.port)/") else {
      _ = close(socket.fd)
      throw MockServerError("cannot form a URL for host '\(host)'")
    }
    fd = socket.fd
    port = socket.port
    self.baseURL = baseURL
  }

  deinit { _ = close(fd) }

  /// The URL for `path` on this port, made as ``MockServer/url(_:)`` makes it; a leading `/`
  /// is optional.
  public func url(_ path: String = "") -> URL { MockServer.url(path, on: baseURL) }
}
