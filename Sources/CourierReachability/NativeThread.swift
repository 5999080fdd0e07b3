#if os(Linux)
  import Glibc

  /// A joinable POSIX thread running a Swift closure.
  ///
  /// Foundation's `Thread` cannot be joined, and ``NetlinkPathMonitor/stop()`` must prove that
  /// its thread has exited before it closes the descriptors that thread polls, so it uses
  /// pthreads directly (as `CourierTesting`'s `MockServer` does).
  struct NativeThread {
    /// The underlying pthread handle.
    let handle: pthread_t

    /// Starts a thread named `name` running `body`, or returns `nil` if the system refused.
    static func spawn(name: String, _ body: @escaping @Sendable () -> Void) -> NativeThread? {
      let context = Unmanaged.passRetained(ThreadContext(name: name, body: body)).toOpaque()
      var handle = pthread_t()
      guard pthread_create(&handle, nil, nativeThreadEntry, context) == 0 else {
        Unmanaged<ThreadContext>.fromOpaque(context).release()
        return nil
      }
      return NativeThread(handle: handle)
    }

    /// Whether this is the thread currently executing.
    var isCurrent: Bool { pthread_equal(handle, pthread_self()) != 0 }

    /// Waits for the thread to exit and releases its resources.
    func join() { _ = pthread_join(handle, nil) }

    /// Lets the thread release its own resources when it exits; it must not be joined then.
    func detach() { _ = pthread_detach(handle) }
  }

  /// Heap box carrying the closure across `pthread_create`.
  private final class ThreadContext {
    let name: String
    let body: @Sendable () -> Void

    init(name: String, body: @escaping @Sendable () -> Void) {
      self.name = name
      self.body = body
    }

    func run() {
      // pthread_setname_np is not exported by the Glibc module; the kernel interface is.
      // Linux truncates names to 15 bytes. Best effort.
      let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
      if fd >= 0 {
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        _ = close(fd)
      }
      body()
    }
  }

  private func nativeThreadEntry(_ raw: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let raw else { return nil }
    Unmanaged<ThreadContext>.fromOpaque(raw).takeRetainedValue().run()
    return nil
  }
#endif
