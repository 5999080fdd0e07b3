internal import CCourierCurl

extension CurlEventLoop {
  /// What is used under the engine lock: see the type's documentation.
  struct Engine {
    let multi: UnsafeMutableRawPointer
    let core: CurlLoopCore
    let interest: CurlSocketInterest
    /// The loop thread is in (or about to enter) a `poll` on the set built from
    /// ``CurlSocketInterest/watched``, which ends by itself at ``pollEnds``.
    var loopIsPolling = false
    /// The monotonic millisecond at which the loop's `poll` returns by itself.
    var pollEnds: Int64 = 0
    /// Callers to resume once the lock is released: the finished transfers' results.
    var completions: [CurlLoopCore.Completion] = []

    /// Runs libcurl's timeout when it is due (a transfer just added asks for it at once: that
    /// starts it) and collects what finished. Idle connections with input are dropped first:
    /// this is where libcurl picks a connection for a new transfer.
    mutating func runDueTimeout() {
      guard interest.takeDueTimeout() else { return }
      interest.dropIdleWithInput()
      var running: Int32 = 0
      _ = courier_curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running)
      core.collectFinished(into: &completions)
    }
  }
}
