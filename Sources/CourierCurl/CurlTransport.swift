import CourierCore
import Foundation
import Synchronization

/// A ``Transport`` that sends each attempt with libcurl's multi interface, driven by event-loop
/// threads of its own — several times faster than `URLSessionTransport` on Linux.
///
/// On Linux, `URLSession` is libcurl wrapped in Foundation glue, and the glue costs most of the
/// CPU. `CurlTransport` drives libcurl directly: each of its event loops
/// (``Configuration/eventLoops``, two where the machine has two cores or more) runs its
/// transfers in one `CURLM` through libcurl's socket interface, reusing keep-alive
/// connections. A request goes to the first loop when that one has nothing else in progress,
/// else to the loop with the most of its share of the host's connections left (on a tie, the
/// one with the fewest requests in progress), so that a host below its limit never waits
/// for a connection. A caller that is the only one in progress on its loop
/// adds its transfer and sends the request from its own thread; otherwise it hands the
/// transfer to the loop thread through a locked queue and an `eventfd`. Requests beyond a
/// loop's share of ``Configuration/maximumConnectionsPerHost`` wait in the loop, in order.
/// The loop thread waits for the responses and resumes each caller exactly once — with the
/// response, an error, a cancellation or the transport's shutdown. Call ``shutdown()`` when you
/// are done with it (dropping the last reference does it too).
///
/// ```swift
/// let transport = CurlTransport()
/// defer { transport.shutdown() }
/// let client = Client(baseURL: URL(string: "https://api.example.com/")!, transport: transport)
/// ```
///
/// ## Behaviour
/// - Redirects follow the request's ``RedirectPolicyAttribute``, else ``redirectPolicy``
///   (default ``RedirectPolicy/standard``: at most 10 hops), hop by hop with CourierCore's
///   shared rule (``Redirect/nextRequest(after:status:location:)``): credentials
///   (``Redirect/credentialHeaders`` and the request's ``CredentialHeadersAttribute``) are
///   dropped when the scheme, host or port changes,
///   301/302 `POST` and 303 become `GET`, 307/308 keep the method and body; a loop or too many
///   hops is ``CourierError/Kind/tooManyRedirects``. libcurl's own following
///   (`CURLOPT_FOLLOWLOCATION`) is never used. The response's headers are those of the final
///   response only, never of an interim `1xx` or an earlier hop. A hop that fails is reported
///   with the caller's request, as URLSession reports it, and the hop in the message.
/// - Request bodies in memory are handed to libcurl as they are; file bodies
///   (`RequestBody.file`) are streamed from disk in libcurl's buffer size and never loaded
///   whole. A body from a sequence (`RequestBody.stream`) is sent while it is produced,
///   through a 256 KiB buffer that makes the sequence wait when it is full, with its length
///   as `Content-Length` or, without one, chunked; the connection is closed after it.
/// - The response body is limited to the request's ``ResponseBodyLimitAttribute``
///   (`Endpoint.maximumResponseBodySize(_:)`), else ``Configuration/maximumResponseBodySize``: a transfer
///   that passes it is aborted from libcurl's write callback (so memory never grows past the
///   limit) and fails with ``CourierError/Kind/bodyTooLarge``.
/// - Downloads to a file (`Client.download(_:to:resume:maximumSize:)`, ``DownloadAttribute``): a `2xx`
///   body goes from libcurl's write callback to CourierCore's ``DownloadWriter`` on the loop
///   thread, never whole into memory and not limited by the body limit; any other status is
///   kept in memory within the limit. A resumed download sends `Range`/`If-Range`, and
///   appends on a `206` or starts again from zero on a `200`. A transfer that fails, is
///   cancelled or is shut down leaves its partial file in the temporary place for a resume,
///   never a file at the destination. Downloads use a 256 KiB receive buffer
///   (`CURLOPT_BUFFERSIZE`) instead of 16 KiB. libcurl decodes a download's
///   `Content-Encoding` into the file whatever ``Configuration/contentDecoding`` says (a
///   download never passes through `GzipMiddleware`), within `DownloadWriter`'s growth
///   limit, and adds no `Accept-Encoding` of its own for it.
/// - Progress goes to the request's ``UploadProgressAttribute`` (libcurl's progress callback,
///   each attempt's body complete at the response head) and ``DownloadProgressAttribute``
///   (each piece of body, the attempt complete with the final response after redirects); the
///   client sends the final event once no retry follows.
/// - Content decoding is off by default (``ContentDecoding/none``): no
///   `Accept-Encoding` is added and compressed bodies arrive as sent, for `GzipMiddleware` to
///   decode within its size and ratio limits. See ``ContentDecoding``.
/// - ``Request/timeout`` is applied by libcurl as a total limit for the attempt
///   (`CURLOPT_TIMEOUT_MS`, to the millisecond), in addition to `TimeoutMiddleware`. It covers
///   every redirect hop of the attempt together: each hop is a transfer of its own, given what
///   is left of the limit, and one that would start with nothing left fails with
///   ``CourierError/Kind/timedOut``.
/// - An idle HTTP/1 connection on which bytes arrive — a response nobody asked for, the tail
///   of a body longer than its `Content-Length`, a body after a `HEAD` or `204` answer — is
///   dropped, never reused: libcurl 7.88 would hand those bytes to the next request sent
///   there as its answer, and every later answer on that connection would be one behind.
///   Every idle connection is checked just before libcurl may pick one for a new transfer
///   (one `poll` with no wait), and the event loop drops one as soon as its `poll` sees the
///   socket readable while it watches it. What
///   arrives in the same read as the end of a response libcurl handles itself: it closes the
///   connection after a body longer than its `Content-Length`, and discards what follows the
///   head of a `HEAD` or `204` answer or the last chunk of a chunked body. Bytes that arrive
///   once a request is being sent cannot be told from its answer by any HTTP/1 client.
///   HTTP/2 connections are left alone: their frames carry stream numbers.
/// - Cancelling the calling `Task`, cancelling the request (`Client.cancelAll()`,
///   `TimeoutMiddleware`) or shutting the transport down removes the transfer from libcurl at
///   once and closes its connection (over HTTP/2, resets its stream).
/// - Proxies follow ``Configuration/proxy``: by default the environment as libcurl reads it
///   (`http_proxy`, `HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`), as with `URLSessionTransport` on
///   Linux; ``ProxyPolicy/direct`` for none, ``ProxyPolicy/through(_:)`` for one of your own.
/// - Every libcurl error becomes a ``CourierError`` with a kind from ``CurlErrorMapping``;
///   libcurl's own message is in the error's `debugDescription`, never in its reason.
/// - A peer that closes a socket never kills the process: libcurl runs with
///   `CURLOPT_NOSIGNAL`, `SIGPIPE` is blocked on the loop thread, and callers send from their
///   own threads only with libcurl 7.88 or later, whose socket writes (OpenSSL's included) all
///   use `MSG_NOSIGNAL`.
/// - A process the application spawns (`posix_spawn`, `Process`) inherits none of its
///   connections: they are opened with `SOCK_CLOEXEC` (`CURLOPT_OPENSOCKETFUNCTION`), and its
///   wake-up descriptor with `EFD_CLOEXEC`. Download partial files and multipart temporary
///   files are opened with `O_CLOEXEC` by Courier for every transport. One pair is left:
///   `curl_multi_init` in libcurl 7.88 opens a Unix socket pair for `curl_multi_wakeup`
///   (which Courier does not use) without close-on-exec, so a child inherits those two
///   descriptors of each transport; they reach no server and hold no file.
///
/// ## Choosing a transport
/// Prefer `CurlTransport` for services on Linux: the same request costs a fraction of the CPU
/// it costs through `URLSession` (Docs/Benchmarks.md has the figures). Prefer `URLSessionTransport` on Apple platforms (where
/// libcurl is not Foundation's engine), when you need URLSession's cookie storage or its
/// configuration objects.
///
/// ## libcurl
/// The transport loads libcurl when the first one starts (`libcurl.so.4`, the runtime library
/// FoundationNetworking also links on Linux, or the one library the environment variable
/// `COURIER_LIBCURL` names: a path or a soname such as `libcurl-gnutls.so.4`), so building
/// Courier needs no libcurl development files. A set-user-ID, set-group-ID or file-capability
/// process ignores `COURIER_LIBCURL`, as the dynamic loader ignores `LD_PRELOAD` there.
/// libcurl 7.68 or newer is required (CI runs 7.88). Where it cannot be loaded, or is older, every request
/// fails with ``CourierError/Kind/transport`` and a `debugDescription` that names the library
/// and why the loader refused it.
public final class CurlTransport: Transport, CustomStringConvertible {
  /// The settings this transport was created with.
  public let configuration: Configuration
  /// What happens to redirects unless a request sets ``RedirectPolicyAttribute``; default
  /// ``RedirectPolicy/standard`` (follow at most 10 hops), as ``URLSessionTransport``.
  public let redirectPolicy: RedirectPolicy

  /// The event loops; the first takes every request while it has nothing else in progress.
  private let loops: [CurlEventLoop]
  /// Each loop's share of ``Configuration/maximumConnectionsPerHost``, by index.
  private let shares: [Int]
  /// With more than one loop, the callers inside ``perform(_:)`` per origin (the key of
  /// ``CurlOriginQueue/originAndScheme(of:)``) and loop: what ``pickLoop(for:)`` reads so that a host
  /// below its limit in total is never sent to a loop whose share for it is taken.
  private let originCallers = Mutex<[String: [Int]]>([:])

  /// Runs one hop of a request on the loop ``pickLoop(for:)`` chooses.
  private func perform(_ request: Request) async throws -> Response {
    if request.body.streamLength == 0 { return try await performEmptyStream(request) }
    let origin = CurlOriginQueue.originAndScheme(of: request.url)
    guard loops.count > 1 else {
      return try await loops[0].perform(request, limits: limits(for: request), origin: origin)
    }
    let loop = originCallers.withLock { table in
      // An origin's entry stays when its counts drop to zero (no allocation per request one
      // at a time); idle entries go once the table holds more than `keptOrigins`.
      if let entry = table.index(forKey: origin.origin) {
        let loop = pickLoop(for: table.values[entry])
        table.values[entry][loop] += 1
        return loop
      }
      let loop = pickLoop(for: nil)
      var counts = Array(repeating: 0, count: loops.count)
      counts[loop] = 1
      table[origin.origin] = counts
      return loop
    }
    defer {
      originCallers.withLock { table in
        guard let entry = table.index(forKey: origin.origin) else { return }
        table.values[entry][loop] -= 1
        if table.count > Self.keptOrigins {
          table = table.filter { $0.value.contains { $0 > 0 } }
        }
      }
    }
    return try await loops[loop].perform(request, limits: limits(for: request), origin: origin)
  }

  /// Sends `request`, whose stream body is declared empty (`RequestBody.stream(length: 0)`).
  /// libcurl sends `Content-Length: 0` without reading the body, so no last byte waits for
  /// the sequence's end as with any other length: the sequence is read to its end first (a
  /// byte from it fails the attempt, as for a body longer than its length), and the request
  /// goes out with no body.
  private func performEmptyStream(_ request: Request) async throws -> Response {
    do throws(CourierError) {
      for try await _ in try request.body.makeChunks() {}
    } catch {
      var error = error
      error.request = request
      error.attempts = 1
      error.stage = "transport"
      throw error
    }
    var sent = request
    sent.body = .data(Data())
    do {
      var response = try await perform(sent)
      response.request = request
      return response
    } catch var error as CourierError {
      error.request = request
      throw error
    }
  }

  /// How many transfers the loops have in libcurl: what tests read to see a transfer removed.
  var transfersInFlight: Int { loops.reduce(0) { $0 + $1.transfersInFlight } }

  /// How often streamed bodies' readers resumed paused transfers, over all loops.
  var streamResumes: Int { loops.reduce(0) { $0 + $1.streamResumes.load(ordering: .relaxed) } }

  /// How many origins ``originCallers`` keeps with nothing in flight.
  private static let keptOrigins = 64

  /// The loop for the next request to an origin with `callers` inside each loop: the one with
  /// the most of its share left for the origin, so that the host's limit is the host's over
  /// all loops; among those, the one with the fewest callers, the first on a tie. The first
  /// loop, when it has no caller, has its whole share left, the largest: one request at a
  /// time always goes there.
  private func pickLoop(for callers: [Int]?) -> Int {
    var best = 0
    var bestRoom = shares[0] - (callers?[0] ?? 0)
    var bestBusy = loops[0].callersInside
    for index in loops.indices.dropFirst() {
      let room = shares[index] - (callers?[index] ?? 0)
      guard room >= bestRoom else { continue }
      let busy = loops[index].callersInside
      if room > bestRoom || busy < bestBusy {
        best = index
        bestRoom = room
        bestBusy = busy
      }
    }
    return best
  }

  /// Creates a transport and starts its event-loop threads.
  ///
  /// - Parameters:
  ///   - configuration: Default ``Configuration/standard``: HTTP/1.1, 16 connections per host,
  ///     10 s to connect, 60 s idle limit, 32 MiB response bodies, no content decoding, the
  ///     system's trust store.
  ///   - redirectPolicy: Default ``RedirectPolicy/standard`` (at most 10 hops).
  public init(configuration: Configuration = .standard, redirectPolicy: RedirectPolicy = .standard)
  {
    self.configuration = configuration
    self.redirectPolicy = redirectPolicy
    // The per-host limit shared out: 8 over 2 loops is 4 each, 3 is 2 and 1.
    let connections = configuration.connectionLimit
    // Over HTTP/2 one loop: requests to one host share one connection as streams, which two
    // multi handles could not.
    let loopsWanted = configuration.httpVersion == .http1 ? configuration.eventLoops : 1
    // A loop never blocks, so loops past the machine's cores only take turns on them.
    let count = min(max(1, loopsWanted), connections, Self.coreCount)
    let shares = (0..<count).map { connections / count + ($0 < connections % count ? 1 : 0) }
    self.shares = shares
    self.loops = shares.map { share in
      var loopConfiguration = configuration
      loopConfiguration.maximumConnectionsPerHost = share
      return CurlEventLoop(
        configuration: loopConfiguration, hostLimit: count > 1 ? connections : nil)
    }
  }

  deinit {
    for loop in loops { loop.shutdown() }
  }

  /// The machine's active cores, at least 1: the most event loops a transport runs.
  static var coreCount: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

  /// Sends `request` once; a request with a ``DownloadAttribute`` gets a `2xx` body in its
  /// file (``Response/downloadedFile``) instead of memory.
  ///
  /// - Throws: ``CourierError`` with a kind from ``CurlErrorMapping`` (for example
  ///   ``CourierError/Kind/cannotConnect`` or ``CourierError/Kind/timedOut``),
  ///   ``CourierError/Kind/bodyTooLarge`` past ``Configuration/maximumResponseBodySize``,
  ///   ``CourierError/Kind/cancelled`` when the calling task or the request was cancelled or the
  ///   transport was shut down while the request was in flight, and
  ///   ``CourierError/Kind/invalidRequest`` after ``shutdown()``.
  public func send(_ request: Request) async throws -> Response {
    // `Request.timeout` covers the attempt with all its redirect hops: each hop gets what is
    // left of it (one clock read per request with a timeout).
    let deadline = request.timeout.map { Deadline(after: $0) }
    var response = try await perform(request)
    // Only a 3xx may be followed: the rest skip the redirect bookkeeping (a copy of the
    // request, an array of the hops and the policy), per request.
    if (300..<400).contains(response.status) {
      response = try await follow(response, of: request, deadline: deadline)
    }
    Self.reportCompletion(of: response, to: request)
    return response
  }

  /// Follows the redirects that `first` (a 3xx answer to `request`) and its successors ask
  /// for, as the request's ``RedirectPolicy`` allows, each hop within what is left of
  /// `deadline` (the request's timeout, counted from the first hop); returns the final
  /// response.
  private func follow(
    _ first: Response, of request: Request, deadline: Deadline?
  ) async throws -> Response {
    let policy = request.attributes[RedirectPolicyAttribute.self] ?? redirectPolicy
    var current = request
    var visited: [(method: HTTPMethod, url: URL)] = [(request.method, request.url)]
    var response = first
    while true {
      guard (300..<400).contains(response.status),
        let location = response.headers[.location]
      else { return response }
      guard let target = Redirect.target(ofLocation: location, from: current.url) else {
        // As URLSession answers one that does not parse (NSURLErrorBadServerResponse): the
        // server is broken. Another scheme leaves the 3xx as the response.
        guard URL(string: location, relativeTo: current.url) != nil else {
          throw CourierError(
            kind: .badResponse,
            debugMessage: "the \(response.status) redirect's Location does not parse as a URL",
            request: request, attempts: 1, stage: "transport")
        }
        return response
      }
      guard
        let next = try policy.decide(
          original: request, previous: current, status: response.status, location: target,
          visited: visited)
      else { return response }
      visited.append((next.method, next.url))
      current = next
      if let deadline, let limit = request.timeout {
        let left = deadline.remaining
        guard left > .zero else {
          throw CourierError(
            kind: .timedOut,
            debugMessage: CourierError.redactingURLs(
              in: "Request.timeout of \(DescriptionText.duration(limit)) passed before redirect "
                + "hop \(visited.count - 1), to \(current.url.absoluteString)"),
            request: request, attempts: 1, stage: "transport")
        }
        current.timeout = left
      }
      do {
        response = try await perform(current)
      } catch var error as CourierError {
        // The caller's request, as URLSession reports it; the hop goes in the message.
        error.request = request
        error.debugMessage += CourierError.redactingURLs(
          in: "; on redirect hop \(visited.count - 1), to \(current.url.absoluteString)")
        throw error
      }
    }
  }

  /// Reports the final response's body complete for this attempt (the client sends the final
  /// event once no retry follows). It returns nothing: a function that took the response and
  /// returned it copied it, a dozen retains.
  private static func reportCompletion(of response: Response, to request: Request) {
    // A streamed body is complete at its end (CurlTransfer.endStream), not at its head.
    guard response.bodyStream == nil else { return }
    request.attributes[DownloadProgressAttribute.self]?.completeAttempt(
      total: response.downloadedFile?.byteCount ?? Int64(response.body.count))
  }

  /// The limits for one request: its ``ResponseBodyLimitAttribute``, else
  /// ``Configuration/maximumResponseBodySize``.
  func limits(for request: Request) -> CurlTransferLimits {
    CurlTransferLimits(
      maximumResponseBodySize: max(
        0,
        request.attributes[ResponseBodyLimitAttribute.self]
          ?? configuration.maximumResponseBodySize))
  }

  /// `true`: `Client.cancelAll()` and `TimeoutMiddleware` reach a transfer through
  /// `RequestCancellation.current`, without a task per request.
  public var observesRequestCancellation: Bool { true }

  /// Fails every request in flight with kind ``CourierError/Kind/cancelled`` (its debug
  /// description says the transport was shut down), closes every connection, and joins the
  /// event-loop threads before returning. Every later ``send(_:)`` fails with kind
  /// ``CourierError/Kind/invalidRequest`` without touching the network. Calling it again does
  /// nothing.
  public func shutdown() {
    for loop in loops { loop.shutdown() }
  }

  /// Whether ``shutdown()`` was called.
  public var isShutDown: Bool { loops[0].isShutDown }

  /// How many connections the transport has opened so far (libcurl's `CURLINFO_NUM_CONNECTS`
  /// summed over every transfer): with keep-alive, far fewer than the requests sent.
  public var openedConnections: Int { loops.reduce(0) { $0 + $1.openedConnections } }

  /// How the transport's connections stand now, over all its event loops: the sockets
  /// libcurl has open for connections (not counting those the loop found closed by the
  /// server while idle), those of them kept idle between HTTP/1 requests, the
  /// rest in use (an HTTP/2 connection counts as in use while it is open), and the requests
  /// waiting for a connection at the ``Configuration/maximumConnectionsPerHost``
  /// limit. Each loop publishes its figures as they change; reading them takes no lock, so
  /// an observer may read them on any thread, the loop's own included.
  ///
  /// With ``HTTPVersion/http2`` an `https` host gets up to 100 requests per connection
  /// before any waits here: when it answers in HTTP/1.1 instead, the requests past its
  /// connections wait inside libcurl, where `waiting` does not see them (they count nowhere
  /// until they have a connection).
  public var connectionPool: ConnectionPoolFigures? {
    var total = ConnectionPoolFigures(open: 0, idle: 0, inUse: 0, waiting: 0)
    for loop in loops {
      let figures = loop.poolFigures
      total.open += figures.open
      total.idle += figures.idle
      total.inUse += figures.inUse
      total.waiting += figures.waiting
    }
    return total
  }

  /// How many event loops the transport runs (for tests).
  var eventLoopCount: Int { loops.count }

  /// How often callers woke the event-loop threads, and how many turns they made (for tests).
  var loopActivity: (wakeUps: Int, turns: Int) {
    loops.reduce((0, 0)) {
      ($0.0 + $1.wakeUps.load(ordering: .relaxed), $0.1 + $1.turns.load(ordering: .relaxed))
    }
  }

  /// The settings that change what goes on the wire:
  /// `CurlTransport(HTTP/1.1; 16 connections per host; body limit 32 MiB; decoding: none)`,
  /// and the proxy when it is not the environment's (never its password):
  /// `…; proxy: http proxy egress.internal:3128 as svc (password set))`.
  public var description: String {
    let proxy = configuration.proxy == .environment ? "" : "; proxy: \(configuration.proxy)"
    return "CurlTransport(\(configuration.httpVersion); "
      + "\(configuration.maximumConnectionsPerHost) connections per host; "
      + "body limit \(DescriptionText.bytes(configuration.maximumResponseBodySize)); "
      + "decoding: \(configuration.contentDecoding)\(proxy))"
  }
}
