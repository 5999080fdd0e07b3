internal import CCourierCurl
import CourierCore

/// The transfers in flight, owned by this table (never reachable only through
/// `CURLOPT_PRIVATE`, so none can be forgotten with its caller waiting), and the easy handles
/// kept for reuse. Used only under the ``CurlEventLoop``'s engine lock, by the loop thread or a
/// caller starting its own transfer; the callers it finishes go into `completions`, to be
/// resumed once the lock is released.
final class CurlLoopCore {
  /// A caller to resume and what with.
  typealias Completion = (CurlTicket, Result<Response, CourierError>)
  /// The most easy handles kept for reuse after their transfer ended.
  static let spareHandleLimit = 64

  private let multi: UnsafeMutableRawPointer
  private let configuration: CurlTransport.Configuration
  /// The loop's sockets: told of every socket libcurl closes, and of every HTTP/1 connection
  /// kept idle after a transfer.
  private let sockets: CurlSocketInterest
  /// The connections the transfers opened, readable from any thread.
  let connections = CurlConnectionCounter()
  private var byTicket: [ObjectIdentifier: CurlTransfer] = [:]
  private var byHandle: [UnsafeMutableRawPointer: CurlTransfer] = [:]
  private var spareHandles: [CurlEasyHandle] = []
  /// The transfers each origin has in libcurl, and the requests waiting their turn.
  private var queue: CurlOriginQueue
  /// The transport's whole ``CurlTransport/Configuration/maximumConnectionsPerHost`` when this
  /// loop has a share of it only (the configuration holds the share); `nil` with one loop.
  private let hostLimit: Int?
  /// The heads of streamed responses that arrived during libcurl's last calls: their callers
  /// are resumed with them, while their transfers go on.
  private let heads = CurlStreamHeads()
  /// When ``expireWaiting(completions:)`` last looked.
  private var lastExpiry = ContinuousClock.now

  init(
    multi: UnsafeMutableRawPointer, configuration: CurlTransport.Configuration,
    sockets: CurlSocketInterest, hostLimit: Int? = nil
  ) {
    self.multi = multi
    self.hostLimit = hostLimit
    self.configuration = configuration
    self.sockets = sockets
    // One transfer per connection over HTTP/1.1; over HTTP/2, which libcurl negotiates for
    // `https` only (and for `http` too with prior knowledge), up to libcurl's 100 streams
    // each. An `https` server that answers in HTTP/1.1 then has the excess wait in libcurl's
    // own list.
    let perHost = configuration.connectionLimit
    let version = configuration.httpVersion
    queue = CurlOriginQueue(
      gauge: sockets.gauge,
      limit: version == .http2PriorKnowledge && CurlTransfer.reusesPriorKnowledgeConnections
        ? perHost * 100 : perHost,
      secureLimit: version.multiplexes ? perHost * 100 : perHost)
  }

  /// How many transfers are in libcurl (not counting those waiting in ``queue``).
  var count: Int { byTicket.count }

  /// Adds `ticket`'s transfer to the multi handle, or, when its origin has ``queue``'s limit of
  /// transfers in flight already, puts it in the origin's line until one of them ends.
  func start(_ ticket: CurlTicket, completions: inout [Completion]) {
    guard queue.admit(ticket.origin, secure: ticket.isSecure) else {
      // A ticket cancelled before it got here (its cancellation reached the loop in an
      // earlier turn, when there was nothing to remove) must not wait for a turn it will
      // never use: nothing else would fail it before then.
      if ticket.isCancelled {
        completions.append((ticket, .failure(CurlEventLoop.cancelledError(ticket.request))))
        return
      }
      queue.wait(ticket, for: ticket.origin, since: .now)
      return
    }
    launch(ticket, waited: .zero, completions: &completions)
  }

  /// Launches `ticket`, counted in for its origin already; when it fails before reaching
  /// libcurl, launches the next request waiting for that origin in its place, and so on.
  private func launch(_ ticket: CurlTicket, waited: Duration, completions: inout [Completion]) {
    var current = (ticket: ticket, waited: waited)
    while !add(current.ticket, waited: current.waited, completions: &completions) {
      guard let next = queue.finished(ticket.origin) else { return }
      current = (next.ticket, .now - next.since)
    }
  }

  /// Configures an easy handle for `ticket` and adds it to the multi handle (`true`), or fails
  /// the ticket (`false`). `waited` is how long it waited in ``queue``: its timeout counts it.
  private func add(
    _ ticket: CurlTicket, waited: Duration, completions: inout [Completion]
  ) -> Bool {
    if ticket.isCancelled {
      completions.append((ticket, .failure(CurlEventLoop.cancelledError(ticket.request))))
      return false
    }
    // Only a request that did wait: a timeout of zero (or less) without waiting is libcurl's
    // to enforce (its shortest, 1 ms), and not the line's fault.
    if let timeout = ticket.request.timeout, waited > .zero, waited >= timeout {
      completions.append((ticket, .failure(waitedTooLong(ticket))))
      return false
    }
    guard let handle = spareHandles.popLast() ?? CurlEasyHandle() else {
      completions.append((ticket, .failure(failure("curl_easy_init failed", ticket))))
      return false
    }
    // With the options every transfer shares: a connection keeps the callback of the handle
    // that opened it.
    if !handle.isConfigured, sockets.installSocketCallbacks(on: handle.easy) != CURLE_OK {
      handle.needsReset = true
      recycle(handle)
      completions.append(
        (
          ticket,
          .failure(
            failure(
              "CURLOPT_OPENSOCKETFUNCTION or CURLOPT_CLOSESOCKETFUNCTION was refused", ticket))
        ))
      return false
    }
    let transfer: CurlTransfer
    do {
      transfer = try CurlTransfer(
        ticket: ticket, handle: handle, configuration: configuration, waited: waited,
        heads: ticket.loop == nil ? nil : heads)
    } catch {
      handle.needsReset = true
      recycle(handle)
      completions.append((ticket, .failure(error)))
      return false
    }
    let easy = handle.easy
    let added = courier_curl_multi_add_handle(multi, easy)
    guard added == CURLM_OK else {
      transfer.release()
      handle.needsReset = true
      recycle(handle)
      completions.append(
        (ticket, .failure(failure("curl_multi_add_handle failed: \(added)", ticket))))
      return false
    }
    byTicket[ObjectIdentifier(ticket)] = transfer
    byHandle[easy] = transfer
    if transfer.hasStreamLimits { limitedStreams.insert(ObjectIdentifier(ticket)) }
    return true
  }

  /// Fails the waiting requests whose timeout passed in ``queue``, at most every 100 ms
  /// (``waitLimit`` wakes the loop that often while any waits).
  func expireWaiting(completions: inout [Completion]) {
    guard queue.waitingCount > 0 || !limitedStreams.isEmpty else { return }
    let now = ContinuousClock.now
    guard now - lastExpiry >= .milliseconds(100) else { return }
    lastExpiry = now
    for waiting in queue.removeExpired(at: now) {
      completions.append((waiting.ticket, .failure(waitedTooLong(waiting.ticket))))
    }
    guard !limitedStreams.isEmpty else { return }
    for key in Array(limitedStreams) {
      guard let transfer = byTicket[key] else {
        limitedStreams.remove(key)
        continue
      }
      guard let error = transfer.streamTimeout(at: now) else { continue }
      byTicket[key] = nil
      limitedStreams.remove(key)
      end(transfer, with: .failure(error), &completions)
    }
  }

  /// The longest the loop may sleep, in milliseconds: 100 while requests wait in ``queue`` or
  /// a streamed body has a limit (their timeouts are checked that often), else a second.
  var waitLimit: Int32 { queue.waitingCount > 0 || !limitedStreams.isEmpty ? 100 : 1_000 }

  /// The streamed transfers with a limit the loop checks (``CurlTransfer/streamTimeout(at:)``).
  private var limitedStreams: Set<ObjectIdentifier> = []

  private func waitedTooLong(_ ticket: CurlTicket) -> CourierError {
    let timeout = ticket.request.timeout ?? .zero
    return CourierError(
      kind: .timedOut,
      debugMessage: "the request's timeout (\(timeout)) passed while it waited for a "
        + "connection: \(ticket.origin) had \(queue.limit(secure: ticket.isSecure)) transfers in flight "
        + (hostLimit.map {
          "on its event loop, its share of "
            + "CurlTransport.Configuration.maximumConnectionsPerHost (\($0))"
        } ?? "(CurlTransport.Configuration.maximumConnectionsPerHost)"),
      request: ticket.request, attempts: 1, stage: "transport")
  }

  /// Removes a cancelled transfer at once (libcurl closes the connection of a transfer removed
  /// before it completed) and fails its caller with ``CourierError/Kind/cancelled``.
  func cancel(_ ticket: CurlTicket, completions: inout [Completion]) {
    guard let transfer = byTicket.removeValue(forKey: ObjectIdentifier(ticket)) else {
      // Still waiting for its turn: out of the line.
      if queue.remove(ticket, from: ticket.origin) {
        completions.append((ticket, .failure(CurlEventLoop.cancelledError(ticket.request))))
      }
      return
    }
    end(
      transfer, with: .failure(transfer.withTimings(CurlEventLoop.cancelledError(ticket.request))),
      &completions)
  }

  /// Lets `ticket`'s transfer go on if its streamed body paused it (it may have ended since).
  func resume(_ ticket: CurlTicket) {
    byTicket[ObjectIdentifier(ticket)]?.resumeStream()
  }

  /// Lets `ticket`'s transfer go on if it paused for want of stream body bytes (it may have
  /// ended since).
  func resumeUpload(_ ticket: CurlTicket) {
    byTicket[ObjectIdentifier(ticket)]?.resumeUpload()
  }

  /// Hands over the streamed heads that arrived, then finishes every transfer libcurl reports
  /// done.
  func collectFinished(into completions: inout [Completion]) {
    if !heads.flushes.isEmpty {
      for writer in heads.flushes { writer.flush() }
      heads.flushes.removeAll(keepingCapacity: true)
    }
    if !heads.arrived.isEmpty {
      for (ticket, head) in heads.arrived { completions.append((ticket, .success(head))) }
      heads.arrived.removeAll(keepingCapacity: true)
    }
    var left: Int32 = 0
    while let message = courier_curl_multi_info_read(multi, &left) {
      guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else {
        continue
      }
      let code = message.pointee.data.result
      guard let transfer = byHandle[easy] else {
        // Not ours (cannot happen): never leave a handle in the multi.
        courier_curl_multi_remove_handle(multi, easy)
        continue
      }
      byTicket[ObjectIdentifier(transfer.ticket)] = nil
      noteIdleConnection(of: easy)
      end(transfer, with: transfer.complete(code), &completions)
    }
  }

  /// Tells ``sockets`` of the HTTP/1 connection libcurl kept after `easy`'s transfer, if it
  /// kept one (`CURLINFO_ACTIVESOCKET`, which names it only until the handle leaves the multi).
  /// Any version but HTTP/2 and HTTP/3 counts: a transfer that failed before its response
  /// reports none, and dropping a multiplexed connection by mistake only costs a new one.
  private func noteIdleConnection(of easy: UnsafeMutableRawPointer) {
    var socket: curl_socket_t = -1
    guard courier_curl_easy_getinfo_socket(easy, CURLINFO_ACTIVESOCKET, &socket) == CURLE_OK,
      socket >= 0
    else { return }
    var version = 0
    _ = courier_curl_easy_getinfo_long(easy, CURLINFO_HTTP_VERSION, &version)
    guard version != CURL_HTTP_VERSION_2_0, version != CURL_HTTP_VERSION_3 else { return }
    sockets.becameIdle(socket)
  }

  /// Fails every transfer in flight and every waiting request with the shutdown error and
  /// frees every easy handle.
  func shutDown(completions: inout [Completion]) {
    for waiting in queue.removeAllWaiting() {
      completions.append(
        (waiting.ticket, .failure(CurlEventLoop.shutdownError(waiting.ticket.request))))
    }
    for transfer in byTicket.values {
      end(
        transfer,
        with: .failure(transfer.withTimings(CurlEventLoop.shutdownError(transfer.ticket.request))),
        &completions)
    }
    byTicket.removeAll()
    spareHandles.removeAll()
  }

  private func end(
    _ transfer: CurlTransfer, with result: consuming Result<Response, CourierError>,
    _ completions: inout [Completion]
  ) {
    byHandle[transfer.easy] = nil
    courier_curl_multi_remove_handle(multi, transfer.easy)
    transfer.endStream(with: result)
    connections.add(transfer.connectionsOpened())
    transfer.release()
    // A streamed transfer's handle forbids reuse of its connection: reset, for the next.
    if case .failure = result { transfer.handle.needsReset = true }
    if transfer.streamed { transfer.handle.needsReset = true }
    recycle(transfer.handle)
    completions.append((transfer.ticket, consume result))
    if let next = queue.finished(transfer.ticket.origin) {
      launch(next.ticket, waited: .now - next.since, completions: &completions)
    }
  }

  /// Keeps `handle` for another transfer, or frees it (its `deinit`) past the limit.
  private func recycle(_ handle: CurlEasyHandle) {
    guard spareHandles.count < Self.spareHandleLimit else { return }
    handle.prepareForReuse()
    spareHandles.append(handle)
  }

  private func failure(_ message: String, _ ticket: CurlTicket) -> CourierError {
    CourierError(
      kind: .transport, debugMessage: message, request: ticket.request, attempts: 1,
      stage: "transport")
  }
}

/// The heads of streamed responses that arrived in libcurl's callbacks, waiting to be handed
/// to their callers (``CurlLoopCore/collectFinished(into:)``). Used under the engine lock.
final class CurlStreamHeads {
  var arrived: [(CurlTicket, Response)] = []
  /// Streamed bodies that received pieces while their reader waited: woken once each, after
  /// libcurl's call.
  var flushes: [ResponseBodyStream.Writer] = []
}
