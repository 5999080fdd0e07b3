import Foundation

/// What this process holds right now, read from Linux's `/proc/self`: resident memory and its
/// peak, and open descriptors. For tests that prove a transfer stays within a memory bound or
/// that nothing leaks.
///
/// Peak memory is measured, never assumed: reset the peak, run the work, read the peak.
///
/// ```swift
/// let reset = ProcessProbe.resetPeakMemory()
/// let before = try ProcessProbe.memory()
/// let destination = URL(fileURLWithPath: "/tmp/big.bin")
/// _ = try await client.download(Endpoint<Void>(.get, "big.bin"), to: destination)
/// let after = try ProcessProbe.memory()
/// let growth = after.peak - (reset ? before.resident : before.peak)
/// print("peak RSS growth: \(growth / 1024) KiB")
/// ```
public enum ProcessProbe {
  /// Resets the peak resident set (`VmHWM`) to the current one by writing `5` to
  /// `/proc/self/clear_refs` (Linux 4.0 and later); `false` where that is not possible, so a
  /// test can say its peak covers the whole process life instead.
  public static func resetPeakMemory() -> Bool {
    guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
    defer { try? handle.close() }
    return (try? handle.write(contentsOf: Data("5".utf8))) != nil
  }

  /// The resident set (`VmRSS`) and its peak (`VmHWM`), in bytes, from `/proc/self/status`.
  ///
  /// - Throws: the error reading `/proc/self/status` (not Linux, or `/proc` not mounted).
  public static func memory() throws -> (resident: Int, peak: Int) {
    let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
    func field(_ name: String) -> Int {
      for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
        return (line.split(separator: " ").compactMap { Int($0) }.first ?? 0) * 1024
      }
      return 0
    }
    return (field("VmRSS"), field("VmHWM"))
  }

  /// Each open descriptor as `"<number>→<target>"` (`socket:[…]`, `pipe:[…]`,
  /// `anon_inode:[timerfd]`, a path), sorted by number; empty where `/proc/self/fd` cannot be
  /// read.
  ///
  /// Count what your code opens (sockets, files) rather than every entry: Dispatch opens a
  /// timer descriptor on first use of a clock, and ThreadSanitizer opens pipes.
  public static func openDescriptors() -> [String] {
    descriptors().sorted { $0.key < $1.key }.map { "\($0.key)→\($0.value)" }
  }

  /// The open descriptors of this process, or of the process `pid`, each with what it refers
  /// to (`socket:[…]`, `pipe:[…]`, `anon_inode:[…]`, a path), read from `/proc/<pid>/fd`;
  /// empty where that cannot be read. A descriptor closed between listing and reading is left
  /// out.
  ///
  /// ```swift
  /// let sockets = ProcessProbe.descriptors().filter { $0.value.hasPrefix("socket:") }
  /// print("\(sockets.count) sockets open")
  /// ```
  public static func descriptors(ofProcess pid: Int32? = nil) -> [Int32: String] {
    let folder = "/proc/\(pid.map(String.init) ?? "self")/fd"
    let manager = FileManager.default
    var targets: [Int32: String] = [:]
    for entry in (try? manager.contentsOfDirectory(atPath: folder)) ?? [] {
      guard let number = Int32(entry),
        let target = try? manager.destinationOfSymbolicLink(atPath: "\(folder)/\(entry)")
      else { continue }
      targets[number] = target
    }
    return targets
  }

  /// How many sockets this process has open.
  ///
  /// Counted from `/proc/self/fd` rather than `/proc/net/tcp`, which some sandboxes (gVisor)
  /// fill with listening sockets only.
  public static func openSockets() -> Int {
    openDescriptors().filter { $0.contains("→socket:") }.count
  }
}

extension MockServer {
  /// A port on 127.0.0.1 where nothing listens (a server's, just after it shut down): the
  /// target for "connection refused" tests.
  ///
  /// Deprecated: the kernel can give the port to another server (another test's, running in
  /// parallel) before the connection is tried, which then is not refused. A ``RefusingPort``
  /// holds its port for as long as it lives.
  ///
  /// - Throws: ``MockServerError`` when no server could start to find the port.
  @available(*, deprecated, message: "use RefusingPort, which holds its port while it lives")
  public static func closedPort() throws -> Int {
    let server = try MockServer()
    let port = server.port
    server.shutdown()
    return port
  }
}
