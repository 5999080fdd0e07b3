#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A joinable POSIX thread running a Swift closure, for the package's own threads: the
/// timeout timer, the netlink path monitor, `CurlTransport`'s event loop, `MockServer`.
///
/// Foundation's `Thread` cannot be joined, and a monitor or server must be able to prove at
/// shutdown that every thread it started has exited, so they use pthreads directly.
package struct NativeThread {
  /// The underlying pthread handle.
  package let handle: pthread_t

  /// Starts a thread named `name` (at most 15 bytes show on Linux) running `body`, or returns
  /// `nil` if the system refused to create one.
  package static func spawn(name: String, _ body: @escaping @Sendable () -> Void) -> NativeThread? {
    let context = Unmanaged.passRetained(ThreadContext(name: name, body: body)).toOpaque()
    #if canImport(Glibc)
      var handle = pthread_t()
      guard pthread_create(&handle, nil, nativeThreadEntry, context) == 0 else {
        Unmanaged<ThreadContext>.fromOpaque(context).release()
        return nil
      }
      return NativeThread(handle: handle)
    #else
      var handle: pthread_t?
      guard pthread_create(&handle, nil, nativeThreadEntry, context) == 0, let handle else {
        Unmanaged<ThreadContext>.fromOpaque(context).release()
        return nil
      }
      return NativeThread(handle: handle)
    #endif
  }

  /// Whether this is the thread currently executing.
  package var isCurrent: Bool { pthread_equal(handle, pthread_self()) != 0 }

  /// Waits for the thread to exit and releases its resources.
  package func join() {
    _ = pthread_join(handle, nil)
  }

  /// Lets the thread release its own resources when it exits; it must not be joined afterwards.
  package func detach() {
    _ = pthread_detach(handle)
  }
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
    setCurrentThreadName(name)
    body()
  }
}

/// Names the calling thread, for debuggers and `/proc/self/task/*/comm`. Best effort.
private func setCurrentThreadName(_ name: String) {
  #if canImport(Glibc)
    // pthread_setname_np is not exported by the Glibc module; the kernel interface is.
    // Linux truncates names to 15 bytes.
    let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard fd >= 0 else { return }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    _ = close(fd)
  #else
    _ = pthread_setname_np(name)
  #endif
}

#if canImport(Glibc)
  private func nativeThreadEntry(_ raw: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let raw else { return nil }
    Unmanaged<ThreadContext>.fromOpaque(raw).takeRetainedValue().run()
    return nil
  }
#else
  private func nativeThreadEntry(_ raw: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? {
    Unmanaged<ThreadContext>.fromOpaque(raw).takeRetainedValue().run()
    return nil
  }
#endif
