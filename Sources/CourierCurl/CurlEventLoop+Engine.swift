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

    /// Starts the transfers of `submitted` (fails them with the shutdown error instead when
    /// `stopping`), removes those of `cancelled` and lets the paused ones of `resumed`
    /// (response streams) and `uploads` (stream request bodies) go on.
    mutating func take(
      submitted: [CurlTicket], cancelled: [CurlTicket], resumed: [CurlTicket],
      uploads: [CurlTicket], stopping: Bool
    ) {
      for ticket in submitted {
        if stopping {
          completions.append((ticket, .failure(CurlEventLoop.shutdownError(ticket.request))))
        } else {
          core.start(ticket, completions: &completions)
        }
      }
      for ticket in cancelled { core.cancel(ticket, completions: &completions) }
      // libcurl hands a resumed response stream its kept piece from within the call; a
      // resumed upload runs at its next timeout, which the unpause sets to now.
      for ticket in uploads { core.resumeUpload(ticket) }
      guard !resumed.isEmpty else { return }
      for ticket in resumed { core.resume(ticket) }
      core.collectFinished(into: &completions)
    }

    /// Fails every transfer in flight with the shutdown error and cleans up the multi handle;
    /// the engine is not used after this.
    mutating func stop() {
      core.shutDown(completions: &completions)
      // libcurl's last socket callbacks, during the cleanup, still reach the interest.
      courier_curl_multi_cleanup(multi)
      withExtendedLifetime(interest) {}
    }

    /// Runs libcurl's due timeout, brings `pollSet` up to date with what libcurl wants
    /// watched, and returns how long the loop may sleep in it (at most ``CurlLoopCore/waitLimit``,
    /// as a safety net; libcurl's own timeout shortens it). From here the loop counts as polling.
    mutating func prepareWait(in pollSet: PollSet) -> Int32 {
      runDueTimeout()
      core.expireWaiting(completions: &completions)
      if interest.isDirty {
        pollSet.rebuild(from: interest.watched)
        interest.markBuilt()
      }
      let (timeout, ends) = interest.waitTime(limit: core.waitLimit)
      loopIsPolling = true
      pollEnds = ends
      return timeout
    }

    /// Hands libcurl the sockets `poll` found ready (those it still wants) and collects what
    /// finished. The loop no longer counts as polling.
    mutating func handReadySockets(_ ready: [(socket: Int32, revents: Int16)]) {
      loopIsPolling = false
      var running: Int32 = 0
      for (socket, revents) in ready {
        guard let events = interest.readiness(socket, revents: revents) else { continue }
        _ = courier_curl_multi_socket_action(multi, socket, events, &running)
      }
      if !ready.isEmpty { core.collectFinished(into: &completions) }
    }
  }
}
