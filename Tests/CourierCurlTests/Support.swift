import Courier
import CourierTesting
import Foundation
import Synchronization
import Testing

@testable import CourierCurl

#if canImport(Glibc)
  import Glibc
#endif

/// A server and a client over a ``CurlTransport``, shut down by the test.
struct CurlFixture {
  let server: MockServer
  let transport: CurlTransport
  let client: Client

  init(
    _ configuration: CurlTransport.Configuration = .standard,
    middleware: [any Middleware] = [], pipeline: ResponsePipeline = .standard
  ) throws {
    server = try MockServer()
    transport = CurlTransport(configuration: configuration)
    client = Client(
      baseURL: server.baseURL, transport: transport, middleware: middleware, pipeline: pipeline,
      locale: "en")
  }

  func shutdown() {
    transport.shutdown()
    server.shutdown()
  }
}

/// A TCP server on 127.0.0.1 that does what MockServer will not: on each of `connections`
/// connections in turn (one by default) it reads the request head (unless `readsHead` is
/// `false`), then writes `reply` byte for byte (or, with `reset`, closes at once with a TCP
/// reset without reading anything) and closes.
final class RawServer: Sendable {
  let port: Int
  private let listener: Int32
  private let done = DispatchSemaphore(value: 0)

  init(reply: Data, readsHead: Bool = true, reset: Bool = false, connections: Int = 1) throws {
    let listener = try Socket.bindAndListen(host: "127.0.0.1")
    try Socket.setNonBlocking(listener.fd, false)
    self.listener = listener.fd
    port = listener.port
    let socket = listener.fd
    let done = self.done
    Thread.detachNewThread {
      defer {
        close(socket)
        done.signal()
      }
      for _ in 0..<connections {
        let connection = accept(socket, nil, nil)
        guard connection >= 0 else { return }
        Self.serve(connection, reply: reply, readsHead: readsHead, reset: reset)
        close(connection)
      }
    }
  }

  private static func serve(_ connection: Int32, reply: Data, readsHead: Bool, reset: Bool) {
    if reset {
      var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
      setsockopt(
        connection, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
      return
    }
    var head = Data()
    var buffer = [UInt8](repeating: 0, count: 4096)
    while readsHead, !head.contains("\r\n\r\n".utf8) {
      let count = read(connection, &buffer, buffer.count)
      if count <= 0 { return }
      head.append(contentsOf: buffer[0..<count])
    }
    _ = reply.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
  }

  /// Waits for the connection to be served and closed.
  func finish() {
    done.wait()
  }
}

extension Data {
  fileprivate func contains(_ bytes: String.UTF8View) -> Bool {
    range(of: Data(bytes)) != nil
  }
}

/// The number of open descriptors and of threads of this process.
func processResources() -> (descriptors: Int, threads: Int) {
  let manager = FileManager.default
  // Sockets, pipes and files. Not `anon_inode:` descriptors: Dispatch opens a timerfd the
  // first time a timer of another clock is armed anywhere in the process (seen in CI), which
  // says nothing about the transport.
  let descriptors = openDescriptors().filter { !$0.contains("→anon_inode:") }.count
  let threads = (try? manager.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
  return (descriptors, threads)
}

/// What each open descriptor of this process points to (`socket:[…]`, a path, …).
func openDescriptors() -> [String] { ProcessProbe.openDescriptors() }

/// How many sockets this process has open.
func openSockets() -> Int { ProcessProbe.openSockets() }

/// The ids of this process's threads named `name`.
func threads(named name: String) -> [String] {
  let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
  return tasks.filter { task in
    let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
    return comm?.trimmingCharacters(in: .whitespacesAndNewlines) == name
  }
}

/// Bytes that compress extremely well: `count` zero bytes.
func zeros(_ count: Int) -> Data { Data(count: count) }

/// A connected pair of stream sockets standing for one connection: `ours` is the client's
/// (libcurl's), `server` the server's. Both are closed when the pair is freed.
final class SocketPair {
  let ours: Int32
  let server: Int32

  init() throws {
    var pair: [Int32] = [-1, -1]
    let made = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair)
    try #require(made == 0, "socketpair failed: \(String(cString: strerror(errno)))")
    (ours, server) = (pair[0], pair[1])
  }

  /// The server writes `text` to the client.
  func serverSends(_ text: String) {
    _ = Array(text.utf8).withUnsafeBytes { send(server, $0.baseAddress, $0.count, 0) }
  }

  /// Whether the server reads the end of the stream now (the client shut it down), without
  /// waiting.
  func serverSeesEnd() -> Bool { Self.readsEnd(server) }

  /// Whether the client reads the end of the stream now, with nothing before it.
  func oursReadsEnd() -> Bool { Self.readsEnd(ours) }

  private static func readsEnd(_ socket: Int32) -> Bool {
    var byte: UInt8 = 0
    return recv(socket, &byte, 1, Int32(MSG_DONTWAIT)) == 0
  }

  deinit {
    close(ours)
    close(server)
  }
}

/// Waits (up to 10 s) until `transport` has no transfer in libcurl, and expects that: a
/// removal is queued to the loop, so it lands a moment after the call that asked for it.
func expectIdle(_ transport: CurlTransport) async {
  let end = ContinuousClock.now + .seconds(10)
  while transport.transfersInFlight > 0, ContinuousClock.now < end { await Task.yield() }
  #expect(transport.transfersInFlight == 0)
}
