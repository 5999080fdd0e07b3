import CourierCore
import CourierReachability
import CourierTesting
import Foundation
import Synchronization

#if canImport(Glibc)
  import CCourierLinux
  import Glibc
#endif

let testBase = URL(string: "https://api.example.test/v1/")!
/// A base URL whose host is an IP literal (TEST-NET-1, RFC 5737): the kind of destination
/// fail fast and wait look a route up for, and refuse or hold back when it has none.
let addressBase = URL(string: "http://192.0.2.10/v1/")!

func stubClient(
  _ stub: StubTransport, middleware: [any Middleware], base: URL = testBase,
  locale: String = "en"
) -> Client {
  Client(baseURL: base, transport: NetworkStack(stub), middleware: middleware, locale: locale)
}

/// A stand-in for a wire transport: answers from a stub, and reports the stub's scripted
/// failures as a network stack does (stage `transport`), so ``networkFailure(_:underlying:)``
/// reads as the network's. A plain `StubTransport` marks them `stub`.
struct NetworkStack: Transport {
  let stub: StubTransport

  init(_ stub: StubTransport) { self.stub = stub }

  func send(_ request: Request) async throws -> Response {
    do {
      return try await stub.send(request)
    } catch var failure as CourierError where failure.stage == "stub" {
      failure.stage = "transport"
      throw failure
    }
  }

  var observesRequestCancellation: Bool { true }
}

/// What a network stack says when it fails: the underlying error a wire transport puts under
/// its `CourierError` (a stub or a cassette has none).
struct StackFailure: Error, CustomStringConvertible {
  let description: String
}

/// A stubbed transport failure of `kind` as a wire transport reports it: with the stack's own
/// error (`underlying`, default "Connection refused") underneath.
func networkFailure(
  _ kind: CourierError.Kind, underlying: any Error = StackFailure(description: "Connection refused")
) -> StubResponse {
  .failure(
    CourierError(
      kind: kind, debugMessage: "stack failure", underlying: underlying, attempts: 1,
      stage: "transport"))
}

/// Runs `body` and returns the `CourierError` it threw, or `nil` when it threw none.
func thrownError(_ body: () async throws -> Void) async -> CourierError? {
  do {
    try await body()
    return nil
  } catch {
    return error as? CourierError
  }
}

/// A listening TCP socket on 127.0.0.1: the kernel completes handshakes into its backlog, so a
/// probe connects without anyone accepting. (A port that refuses is ``RefusingPort``.)
final class ListeningPort: Sendable {
  let port: Int
  private let fd: Int32

  /// Binds an ephemeral port and listens on it.
  init() throws {
    let listener = try Socket.bindAndListen(host: "127.0.0.1")
    port = listener.port
    fd = listener.fd
  }

  deinit { _ = close(fd) }

  var url: URL { URL(string: "http://127.0.0.1:\(port)/")! }
}

// MARK: - /proc

/// Whether `/proc` describes this process's descriptors and threads (Linux).
let hasProcFS = FileManager.default.fileExists(atPath: "/proc/self/task")

/// This process's sockets and pipes: all the monitor opens, so all it could leak. Not the
/// runtime's eventfd/timerfd/epoll (`anon_inode:`), which Dispatch opens and closes on its
/// worker threads as load comes and goes, and not files: an exit test's child inherits the
/// parent's files that are open without close-on-exec, and the target of one that the parent
/// deletes meanwhile changes to "… (deleted)" (seen in CI: a signing test's temporary file).
func ownDescriptors() -> [Int32: String] {
  ProcessProbe.descriptors().filter { $0.value.hasPrefix("socket:") || $0.value.hasPrefix("pipe:") }
}

/// The number of live threads of this process named `name`.
func threads(named name: String) -> Int {
  let directory = "/proc/self/task"
  guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
    return -1
  }
  return tasks.count { task in
    let comm = (try? String(contentsOfFile: "\(directory)/\(task)/comm", encoding: .utf8)) ?? ""
    return comm.trimmingCharacters(in: .whitespacesAndNewlines) == name
  }
}

// MARK: - Network namespaces

/// Where `ip` (iproute2) is, if anywhere.
let ipCommand = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first {
  FileManager.default.isExecutableFile(atPath: $0)
}

/// Whether this process can make network namespaces: root, `ip` present, and the kernel lets
/// it (a container without CAP_SYS_ADMIN answers EPERM). Tried once, with a namespace that is
/// deleted at once.
let canMakeNamespaces: Bool = {
  guard geteuid() == 0, ipCommand != nil,
    FileManager.default.fileExists(atPath: "/proc/self/ns/net")
  else { return false }
  TestNetwork.deleteStaleNamespaces()
  let name = "courier-test-\(getpid())-probe"
  guard (try? TestNetwork.ip("netns", "add", name)) != nil else { return false }
  _ = try? TestNetwork.ip("netns", "delete", name)
  return true
}()

/// Two network namespaces made for one test, `inner` (the one monitored) and `outer`, joined
/// by a veth pair — `vethA` in `inner` with 10.77.0.1/24 and (unless `defaultRoute` is
/// false: a subnet route only) a default route via 10.77.0.2, `vethB` in `outer` with
/// 10.77.0.2/24 — both ends inside namespaces this test made, never in the machine's own.
/// ``destroy()`` deletes both namespaces, which deletes the veth pair.
///
/// Bringing `vethB` down takes the carrier away from `vethA` (a veth runs only while its peer
/// is up) while `vethA` stays administratively up and keeps its routes: a cable pulled out.
final class TestNetwork: Sendable {
  let inner: String
  let outer: String

  /// The address of `vethB`, the peer in `outer`.
  static let peer = "10.77.0.2"

  init(defaultRoute: Bool = true) throws {
    let stem = "courier-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    inner = stem + "a"
    outer = stem + "b"
    do {
      try Self.ip("netns", "add", inner)
      try Self.ip("netns", "add", outer)
      try Self.ip(
        "-n", inner, "link", "add", "vethA", "type", "veth", "peer", "name", "vethB",
        "netns", outer)
      try Self.ip("-n", inner, "addr", "add", "10.77.0.1/24", "dev", "vethA")
      try Self.ip("-n", outer, "addr", "add", "10.77.0.2/24", "dev", "vethB")
      try Self.ip("-n", inner, "link", "set", "vethA", "up")
      try Self.ip("-n", outer, "link", "set", "vethB", "up")
      if defaultRoute { try addDefaultRoute() }
    } catch {
      destroy()
      throw error
    }
  }

  /// `ip -n <inner> route add default via 10.77.0.2` (needs vethA's carrier: the gateway must
  /// be reachable when the route is added).
  func addDefaultRoute() throws {
    try Self.ip("-n", inner, "route", "add", "default", "via", "10.77.0.2", "dev", "vethA")
  }

  /// Sets the outer end down or up: `vethA` loses or regains its carrier.
  func setPeer(up: Bool) throws {
    try Self.ip("-n", outer, "link", "set", "vethB", up ? "up" : "down")
  }

  /// Deletes both namespaces (and with them the veth pair). Safe to call more than once.
  func destroy() {
    for name in [inner, outer] { _ = try? Self.ip("netns", "delete", name) }
  }

  /// Runs `ip` with `arguments`; throws with its standard error when it fails.
  @discardableResult
  static func ip(_ arguments: String...) throws -> String {
    guard let ipCommand else { throw CommandFailure(description: "no ip command") }
    let result = try ChildProcess.run(ipCommand, arguments)
    guard result.status == 0 else {
      throw CommandFailure(
        description:
          "ip \(arguments.joined(separator: " ")): \(String(decoding: result.error, as: UTF8.self))"
      )
    }
    return String(decoding: result.output, as: UTF8.self)
  }

  /// Deletes `courier-test-<pid>-…` namespaces left by processes that no longer run (a test
  /// run that was killed); never one of a process that is still alive.
  static func deleteStaleNamespaces() {
    guard let list = try? ip("netns", "list") else { return }
    for line in list.split(separator: "\n") {
      guard let name = line.split(separator: " ").first, name.hasPrefix("courier-test-") else {
        continue
      }
      let fields = name.dropFirst("courier-test-".count).split(separator: "-")
      guard let pid = fields.first.flatMap({ Int32($0) }) else { continue }
      if kill(pid, 0) != 0 && errno == ESRCH {
        _ = try? ip("netns", "delete", String(name))
      }
    }
  }
}

/// A network namespace with nothing in it but its loopback interface, down: no route at all,
/// as `unshare --net` or `docker run --network none` give a process.
final class EmptyNamespace: Sendable {
  let name: String

  init() throws {
    name = "courier-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))e"
    try TestNetwork.ip("netns", "add", name)
  }

  /// Deletes the namespace. Safe to call more than once.
  func destroy() { _ = try? TestNetwork.ip("netns", "delete", name) }
}

#if os(Linux)
  /// Runs `body` on a new thread that has first joined the network namespace
  /// `/run/netns/<namespace>`, and returns what it returned. Sockets `body` opens live in that
  /// namespace, and so do threads it starts (a thread inherits its creator's namespace): a
  /// `CurlTransport` made there has its event-loop thread, its connections and libcurl's
  /// resolver threads in the namespace; a `MockServer` made there listens in it.
  func inNamespace<T: Sendable>(
    _ namespace: String, _ body: @escaping @Sendable () throws -> T
  ) throws -> T {
    let outcome = Outcome<T>()
    let thread = NativeThread.spawn(name: "CourierTestNS") {
      let fd = open("/run/netns/\(namespace)", O_RDONLY | O_CLOEXEC)
      guard fd >= 0, ccourier_enter_network_namespace(fd) == 0 else {
        let code = errno
        if fd >= 0 { _ = close(fd) }
        outcome.set(.failure(CommandFailure(description: "setns \(namespace): errno \(code)")))
        return
      }
      _ = close(fd)
      outcome.set(Result { try body() })
    }
    guard let thread else { throw CommandFailure(description: "pthread_create failed") }
    thread.join()
    guard let result = outcome.get() else {
      throw CommandFailure(description: "the namespace thread returned nothing")
    }
    return try result.get()
  }

  /// What the thread of ``inNamespace(_:_:)`` hands back.
  private final class Outcome<T: Sendable>: Sendable {
    private let value = Mutex<Result<T, any Error>?>(nil)

    func set(_ result: Result<T, any Error>) { value.withLock { $0 = result } }
    func get() -> Result<T, any Error>? { value.withLock { $0 } }
  }
#endif

struct CommandFailure: Error, CustomStringConvertible {
  let description: String
}

/// A ``PathMonitor`` that passes everything through to `base` and announces each subscription,
/// so a test knows a request is waiting for the network before it changes the network.
final class ObservedMonitor: PathMonitor {
  let base: any PathMonitor
  let subscriptions: AsyncStream<Void>
  private let continuation: AsyncStream<Void>.Continuation

  init(_ base: any PathMonitor) {
    self.base = base
    (subscriptions, continuation) = AsyncStream.makeStream(of: Void.self)
  }

  var status: PathStatus { base.status }

  func updates() -> AsyncStream<PathStatus> {
    let stream = base.updates()
    continuation.yield()
    return stream
  }

  func route(to destination: RouteDestination) -> RouteAnswer { base.route(to: destination) }
}
