import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc

  /// A process the application spawns while requests are in flight inherits none of them: not
  /// an idle keep-alive connection, not a download's connection, not its partial file, and not
  /// the mock server's sockets. Each would keep a connection open, or a file busy, for as long
  /// as an unrelated child lives.
  @Suite("Transport conformance: child processes inherit nothing", .timeLimit(.minutes(5)))
  struct InheritanceConformanceTests {
    @Test(
      "a spawned child holds no connection, no partial file, no server socket",
      arguments: TransportKind.wire)
    func spawnedChild(kind: TransportKind) async throws {
      let fixture = try Fixture(kind)
      let gate = Gate()
      defer {
        gate.open()
        fixture.shutdown()
      }
      // The download stays mid-body, its partial file open, while the child starts.
      let (source, _) = MockBodySource.gatedNoise(count: 4 * 1024 * 1024, gate: gate)
      fixture.server.setDispatcher {
        $0.path == "/ping" ? .json(#"{"ok":true}"#) : .ranged(source, request: $0, etag: "\"i1\"")
      }
      // An idle connection in the transport's pool, then a second one busy downloading.
      _ = try await fixture.client.send(Endpoint<Data>(.get, "ping"))
      let folder = try temporaryFolder()
      defer { try? FileManager.default.removeItem(at: folder) }
      let destination = folder.appendingPathComponent("inherit.bin")
      let progress = TransferProgress(minimumInterval: .zero)
      let endpoint = Endpoint<Void>(.get, "big").downloadProgress(progress)
      let client = fixture.client
      let task = Task { try await client.download(endpoint, to: destination) }
      defer { task.cancel() }
      for await event in progress.events where event.completed >= 1024 * 1024 { break }

      let ours = SocketsOfPort(fixture.server.port)
      #expect(ours.client.count >= 1, "no client connection to port \(fixture.server.port) found")
      #expect(ours.server.count >= 2, "the listener and an accepted connection")
      let pid = try ChildProcess.start("/bin/sleep", ["30"])
      let inherited = ProcessProbe.descriptors(ofProcess: pid).values
      ChildProcess.stop(pid)

      let partial = DownloadDestination(url: destination).partialURL.path
      #expect(!inherited.contains { $0.hasSuffix(partial) }, "the partial file is inherited")
      #expect(inherited.filter(ours.server.contains).isEmpty, "MockServer sockets inherited")
      let connections = inherited.filter(ours.client.contains)
      switch kind {
      case .curl:
        #expect(connections.isEmpty, "connections inherited: \(connections)")
      case .urlSession:
        // FoundationNetworking's libcurl opens sockets without close-on-exec, and URLSession
        // has no hook to change that. When this stops being an issue, the Transports article
        // can say so.
        withKnownIssue("FoundationNetworking's connections are inherited by child processes") {
          #expect(connections.isEmpty, "connections inherited: \(connections)")
        }
      }
    }
  }

  /// This process's sockets to and on a local TCP port, as `/proc` names their targets
  /// (`socket:[inode]`): `client` connected to it, `server` bound to it (the listener and
  /// the connections it accepted).
  struct SocketsOfPort {
    var client: Set<String> = []
    var server: Set<String> = []

    init(_ port: Int) {
      for (fd, target) in ProcessProbe.descriptors() where target.hasPrefix("socket:") {
        if Self.port(of: fd, peer: true) == port { client.insert(target) }
        if Self.port(of: fd, peer: false) == port { server.insert(target) }
      }
    }

    /// The TCP port of `fd`'s peer or of `fd` itself; `nil` for anything but IPv4 and IPv6.
    private static func port(of fd: Int32, peer: Bool) -> Int? {
      var storage = sockaddr_storage()
      var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
      let named = withUnsafeMutablePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          peer ? getpeername(fd, $0, &length) : getsockname(fd, $0, &length)
        }
      }
      guard named == 0 else { return nil }
      return withUnsafePointer(to: &storage) { pointer -> Int? in
        switch Int32(pointer.pointee.ss_family) {
        case AF_INET:
          pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
            Int(UInt16(bigEndian: $0.pointee.sin_port))
          }
        case AF_INET6:
          pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
            Int(UInt16(bigEndian: $0.pointee.sin6_port))
          }
        default: nil
        }
      }
    }
  }
#endif
