import Foundation

#if canImport(Glibc)
  import Glibc

  /// Runs programs for Courier's own tests (`gzip`, `ip`, `sha256sum`, a child that should
  /// inherit nothing) with `posix_spawn`, instead of Foundation's `Process`.
  ///
  /// Foundation's `Pipe` is not close-on-exec, so any other process the test process starts
  /// meanwhile (Swift Testing's exit-test children, another test's `gzip`) inherits its write
  /// end, and a blocking read of it does not end until that unrelated process exits. Here
  /// standard input, output and error are socket pairs opened with `SOCK_CLOEXEC`, given to
  /// the child with `dup2` (which clears the flag on the copy only), read with `poll` on the
  /// calling thread, and the child is reaped with `waitpid` as soon as its output ends.
  package enum ChildProcess {
    /// What a finished program did: its exit status (or 128 + the signal that ended it) and
    /// everything it wrote.
    package struct Result: Sendable {
      /// The exit status, or 128 + the signal number when a signal ended it.
      package var status: Int32
      /// Everything written to standard output.
      package var output: Data
      /// Everything written to standard error.
      package var error: Data
    }

    /// A spawn that failed, with the call and its `errno`.
    package struct Failure: Error, CustomStringConvertible {
      /// What failed and why.
      package let description: String
    }

    /// Runs `path` with `arguments`, writes `input` to its standard input, and returns once it
    /// has exited.
    package static func run(
      _ path: String, _ arguments: [String], input: Data = Data()
    ) throws(Failure) -> Result {
      // Standard input, output and error: this process's end, the child's end.
      var pairs: [(ours: Int32, theirs: Int32)] = []
      let pid: pid_t
      do throws(Failure) {
        for _ in 0..<3 { pairs.append(try socketPair()) }
        pid = try spawn(
          path, arguments, standardStreams: (pairs[0].theirs, pairs[1].theirs, pairs[2].theirs))
      } catch {
        // Whatever was opened before the failure, not only the pairs of a failed spawn.
        for pair in pairs {
          close(pair.ours)
          close(pair.theirs)
        }
        throw error
      }
      for pair in pairs { close(pair.theirs) }
      var streams = Streams(
        input: pairs[0].ours, output: pairs[1].ours, error: pairs[2].ours, pending: input)
      streams.pump()
      return Result(status: wait(pid), output: streams.outputData, error: streams.errorData)
    }

    /// Starts `path` with `arguments`, sharing this process's standard streams and inheriting
    /// every descriptor that is not close-on-exec, as a plain `posix_spawn` in an application
    /// would. The caller ends it with ``stop(_:)``.
    package static func start(_ path: String, _ arguments: [String]) throws(Failure) -> pid_t {
      try spawn(path, arguments, standardStreams: nil)
    }

    /// Kills a child started with ``start(_:_:)`` and reaps it.
    package static func stop(_ pid: pid_t) {
      kill(pid, SIGKILL)
      _ = wait(pid)
    }

    // MARK: - Spawning

    private static func socketPair() throws(Failure) -> (Int32, Int32) {
      var fds: [Int32] = [-1, -1]
      let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
      guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { throw failure("socketpair") }
      return (fds[0], fds[1])
    }

    private static func spawn(
      _ path: String, _ arguments: [String], standardStreams: (Int32, Int32, Int32)?
    ) throws(Failure) -> pid_t {
      var actions = posix_spawn_file_actions_t()
      posix_spawn_file_actions_init(&actions)
      defer { posix_spawn_file_actions_destroy(&actions) }
      if let (input, output, error) = standardStreams {
        posix_spawn_file_actions_adddup2(&actions, input, 0)
        posix_spawn_file_actions_adddup2(&actions, output, 1)
        posix_spawn_file_actions_adddup2(&actions, error, 2)
      }
      let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
      defer { for argument in argv { free(argument) } }
      var pid: pid_t = 0
      let code = posix_spawn(&pid, path, &actions, nil, argv, environ)
      guard code == 0 else {
        throw Failure(description: "posix_spawn \(path): \(String(cString: strerror(code)))")
      }
      return pid
    }

    /// Reaps `pid`: its exit status, or 128 + the signal that ended it.
    private static func wait(_ pid: pid_t) -> Int32 {
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0 {
        guard errno == EINTR else { return -1 }
      }
      let signal = status & 0x7f
      return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    private static func failure(_ call: String) -> Failure {
      Failure(description: "\(call): \(String(cString: strerror(errno)))")
    }

    // MARK: - Moving the bytes

    /// The parent's ends of the three streams, pumped with `poll` until the child has closed
    /// its output and error and taken all of its input.
    private struct Streams {
      var input: Int32
      var output: Int32
      var error: Int32
      var pending: Data
      var written = 0
      var outputData = Data()
      var errorData = Data()

      mutating func pump() {
        for fd in [input, output, error] { _ = fcntl(fd, F_SETFL, O_NONBLOCK) }
        if pending.isEmpty { closeInput() }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while output >= 0 || error >= 0 {
          var polled = [
            pollfd(fd: input, events: Int16(POLLOUT), revents: 0),
            pollfd(fd: output, events: Int16(POLLIN), revents: 0),
            pollfd(fd: error, events: Int16(POLLIN), revents: 0),
          ]
          guard poll(&polled, 3, -1) >= 0 || errno == EINTR else { break }
          if polled[0].revents != 0 { writeInput() }
          if polled[1].revents != 0 { Self.read(&output, into: &outputData, buffer: &buffer) }
          if polled[2].revents != 0 { Self.read(&error, into: &errorData, buffer: &buffer) }
        }
        closeInput()
      }

      private mutating func writeInput() {
        // `send` with MSG_NOSIGNAL: a child that exits without reading all of its input
        // must not end this process with SIGPIPE.
        let count = pending.withUnsafeBytes { bytes in
          send(
            input, bytes.baseAddress.map { $0 + written }, bytes.count - written,
            Int32(MSG_NOSIGNAL))
        }
        if count > 0 { written += count }
        if written == pending.count || (count < 0 && errno != EAGAIN && errno != EINTR) {
          closeInput()
        }
      }

      private mutating func closeInput() {
        if input >= 0 { close(input) }
        input = -1
      }

      private static func read(_ fd: inout Int32, into data: inout Data, buffer: inout [UInt8]) {
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        if count > 0 {
          data.append(contentsOf: buffer[0..<count])
        } else if count == 0 || (errno != EAGAIN && errno != EINTR) {
          close(fd)
          fd = -1
        }
      }
    }
  }
#endif
