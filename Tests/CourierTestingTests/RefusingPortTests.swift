import CourierTesting
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

@Suite("RefusingPort", .timeLimit(.minutes(5)))
struct RefusingPortTests {
  /// `connect(2)` to `port` on `host` (IPv4 or IPv6 loopback), blocking; its `errno`, or 0.
  private static func connectErrno(host: String, port: Int) -> Int32 {
    let v6 = host.contains(":")
    let fd = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return -1 }
    defer { close(fd) }
    let result: Int32
    if v6 {
      var address = sockaddr_in6()
      address.sin6_family = sa_family_t(AF_INET6)
      address.sin6_port = UInt16(port).bigEndian
      inet_pton(AF_INET6, host, &address.sin6_addr)
      result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
      }
    } else {
      var address = sockaddr_in()
      address.sin_family = sa_family_t(AF_INET)
      address.sin_port = UInt16(port).bigEndian
      address.sin_addr.s_addr = inet_addr(host)
      result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
    }
    return result == 0 ? 0 : errno
  }

  @Test("a connection to the port is refused, on IPv4 and IPv6 loopback")
  func refuses() throws {
    let v4 = try RefusingPort()
    #expect(v4.port > 0)
    #expect(v4.baseURL.absoluteString == "http://127.0.0.1:\(v4.port)/")
    #expect(v4.url("/down?x=1").absoluteString == "http://127.0.0.1:\(v4.port)/down?x=1")
    #expect(Self.connectErrno(host: "127.0.0.1", port: v4.port) == ECONNREFUSED)
    // IPv6 loopback may be switched off in a container: then there is nothing to check.
    guard let v6 = try? RefusingPort(host: "::1") else { return }
    #expect(v6.url("x").absoluteString == "http://[::1]:\(v6.port)/x")
    #expect(Self.connectErrno(host: "::1", port: v6.port) == ECONNREFUSED)
  }

  @Test("no server can take the port while it lives; one can after")
  func holdsThePort() throws {
    var refusing: RefusingPort? = try RefusingPort()
    let port = try #require(refusing?.port)
    #expect(throws: MockServerError.self) { _ = try MockServer(port: port) }
    refusing = nil
    let server = try MockServer(port: port)
    defer { server.shutdown() }
    #expect(Self.connectErrno(host: "127.0.0.1", port: port) == 0)
  }

  @Test("an address that is not numeric is a MockServerError, not a crash")
  func badHost() {
    #expect(throws: MockServerError.self) { _ = try RefusingPort(host: "localhost") }
  }
}
