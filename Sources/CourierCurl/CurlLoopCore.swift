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

  init(
    multi: UnsafeMutableRawPointer, configuration: CurlTransport.Configuration,
    sockets: CurlSocketInterest
  ) {
    self.multi = multi
    self.configuration = configuration
    self.sockets = sockets
  }

  /// How many transfers are in flight.
  var count: Int { byTicket.count }

  /// Configures an easy handle for `ticket` and adds it to the multi handle, or fails the
  /// ticket.
  func start(_ ticket: CurlTicket, completions: inout [Completion]) {
    if ticket.isCancelled {
      completions.append((ticket, .failure(CurlEventLoop.cancelledError(ticket.request))))
      return
    }
    guard let handle = spareHandles.popLast() ?? CurlEasyHandle() else {
      completions.append((ticket, .failure(failure("curl_easy_init failed", ticket))))
      return
    }
    // With the options every transfer shares: a connection keeps the callback of the handle
    // that opened it.
    if !handle.isConfigured, sockets.installCloseCallback(on: handle.easy) != CURLE_OK {
      handle.needsReset = true
      recycle(handle)
      completions.append(
        (ticket, .failure(failure("CURLOPT_CLOSESOCKETFUNCTION was refused", ticket))))
      return
    }
    let transfer: CurlTransfer
    do {
      transfer = try CurlTransfer(ticket: ticket, handle: handle, configuration: configuration)
    } catch {
      handle.needsReset = true
      recycle(handle)
      completions.append((ticket, .failure(error)))
      return
    }
    let easy = handle.easy
    let added = courier_curl_multi_add_handle(multi, easy)
    guard added == CURLM_OK else {
      transfer.release()
      handle.needsReset = true
      recycle(handle)
      completions.append(
        (ticket, .failure(failure("curl_multi_add_handle failed: \(added)", ticket))))
      return
    }
    byTicket[ObjectIdentifier(ticket)] = transfer
    byHandle[easy] = transfer
  }

  /// Removes a cancelled transfer at once (libcurl closes the connection of a transfer removed
  /// before it completed) and fails its caller with ``CourierError/Kind/cancelled``.
  func cancel(_ ticket: CurlTicket, completions: inout [Completion]) {
    guard let transfer = byTicket.removeValue(forKey: ObjectIdentifier(ticket)) else { return }
    end(transfer, with: .failure(CurlEventLoop.cancelledError(ticket.request)), &completions)
  }

  /// Finishes every transfer libcurl reports done.
  func collectFinished(into completions: inout [Completion]) {
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

  /// Fails every transfer in flight with the shutdown error and frees every easy handle.
  func shutDown(completions: inout [Completion]) {
    for transfer in byTicket.values {
      end(
        transfer, with: .failure(CurlEventLoop.shutdownError(transfer.ticket.request)),
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
    connections.add(transfer.connectionsOpened())
    transfer.release()
    if case .failure = result { transfer.handle.needsReset = true }
    recycle(transfer.handle)
    completions.append((transfer.ticket, consume result))
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
