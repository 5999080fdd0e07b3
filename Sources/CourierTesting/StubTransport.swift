import CourierCore
import Foundation
import Synchronization

/// A ``Transport`` for tests that answers from scripted responses and records every request.
///
/// It runs behind the whole middleware chain and response pipeline like any transport, so a
/// stubbed `500` fails exactly the way a real one does.
///
/// Responses are chosen in this order: the first route whose method and path pattern match,
/// then the next queued response, then the fallback (`404` with an empty body by default).
///
/// ```swift
/// let stub = StubTransport()
/// stub.on(.get, "user/{id}", .json(#"{"code":0,"data":{"name":"Li"}}"#))
/// stub.enqueue(.status(503), .json("{}"))     // first call 503, second 200
/// stub.enqueue(.failure(.timedOut))              // fail as a transport would
///
/// let client = Client(baseURL: URL(string: "https://api.test/")!, transport: stub)
/// _ = try await client.send(Endpoint<User>(.get, "user/{id}").parameter("id", 7))
/// #expect(stub.requests.last?.url.path == "/user/7")
/// ```
///
/// Time passes only in a scripted ``StubResponse/delay`` or ``StubResponse/chunkInterval``,
/// on the stub's clock. A ``Request/timeout`` (`Endpoint.timeout(_:)`) is applied as the wire
/// transports apply it, with or without a `TimeoutMiddleware`: a total limit for the attempt
/// and its redirect hops, past which it fails with ``CourierError/Kind/timedOut``.
///
/// Before it answers, it checks a request as the wire transports do: a file body must be a
/// readable regular file, and a `Content-Length` set by the caller must be the body's length
/// (a `Transfer-Encoding` is refused). Such a request fails with
/// ``CourierError/Kind/invalidRequest`` and is not recorded.
///
/// It hands back an answer as a transport receives it from a server: no body for a `HEAD`
/// request (whose answer keeps the `Content-Length` of the body it stands for) or a `1xx`,
/// `204` or `304` status, a `Content-Length` on every other answer unless the script sets one
/// or a `Transfer-Encoding`, and a scripted `Content-Length` that is not the body's length
/// framing the body as on the wire: past the body's end it fails with
/// ``CourierError/Kind/connectionLost``, short of it the body is cut there, and one that is
/// not a number is ``CourierError/Kind/badResponse``. An answer with a `Content-Encoding` is
/// handed back as scripted, body and `Content-Length` alike, as a transport that decodes the
/// coding itself (URLSession) hands it: the length of the coded body over the decoded one.
/// A body limit applies when the request sets one (`maximumResponseBodySize(_:)`), failing
/// with ``CourierError/Kind/bodyTooLarge``; the wire transports' own default limit (32 MiB)
/// is a setting of theirs, which the stub does not have.
///
/// A body read from a sequence (`RequestBody.stream`) is read whole, up to
/// ``maximumStreamBodySize``, before the answer is chosen, so its producer runs to its end as
/// on the wire: handlers, ``requests`` and the response's request hold it as `.data` of the
/// bytes it produced, and it fails as a wire transport fails it (a sequence that throws, a
/// declared length it does not keep, a one-shot stream sent a second time).
///
/// A `301`, `302`, `303`, `307` or `308` answer with a `Location` is followed as the wire
/// transports follow it: by the request's ``RedirectPolicyAttribute``, else
/// ``redirectPolicy`` (default ``RedirectPolicy/standard``), each hop built by
/// ``Redirect/nextRequest(after:status:location:)`` and answered from the script like any
/// request (and recorded in ``requests``), whatever its host; a loop or too many hops is
/// ``CourierError/Kind/tooManyRedirects``, and a `Location` of another scheme leaves the `3xx`
/// as the response. A test of how code handles a `3xx` itself scripts it on a stub made with
/// `redirectPolicy: .doNotFollow`, or sends with `.redirects(.doNotFollow)`.
///
/// Path patterns compare slash-separated segments of the URL path as the wire transports send
/// it and a server routes it: the dot segments `.` and `..` removed (RFC 3986 §5.2.4; `%2E%2E`
/// stays a name), then each segment percent-decoded after the path is split, so a parameter
/// whose value holds a `/` (sent as `%2F`) is one segment. A pattern's segments are decoded
/// the same way, so a route may be written as the wire path reads (`files/a%2Fb`,
/// `caf%C3%A9`) or decoded (`café`). Empty segments (`a//b`) are skipped. `*` or `{name}`
/// matches any one segment and a trailing `**` matches the rest. ``requests`` holds each
/// request as the client handed it over, its URL unchanged; the fields a transport adds on
/// the wire (`Host`, `Content-Length`, `User-Agent`) are not in it.
public final class StubTransport: Transport {
  private struct Route {
    let method: HTTPMethod?
    let pattern: [Substring]
    let respond: @Sendable (Request) throws -> StubResponse
  }

  private struct State {
    var routes: [Route] = []
    var queue: [StubResponse] = []
    var requests: [Request] = []
  }

  private let state = Mutex(State())
  private let received = CountEvent()
  private let fallback: StubResponse
  private let clock: any Clock<Duration>

  /// What happens to redirects unless a request sets ``RedirectPolicyAttribute``; default
  /// ``RedirectPolicy/standard`` (follow at most 10 hops), as the wire transports.
  public let redirectPolicy: RedirectPolicy

  /// Creates a stub.
  ///
  /// - Parameters:
  ///   - responses: Queued responses, used in order.
  ///   - fallback: The answer when no route matches and the queue is empty; default `404`.
  ///   - clock: The clock that ``StubResponse/delay`` sleeps on; inject a test clock to
  ///     control time.
  ///   - redirectPolicy: Default ``RedirectPolicy/standard`` (at most 10 hops); pass
  ///     ``RedirectPolicy/doNotFollow`` to get every scripted `3xx` back as the response.
  public init(
    _ responses: [StubResponse] = [], fallback: StubResponse = .status(404),
    clock: any Clock<Duration> = ContinuousClock(), redirectPolicy: RedirectPolicy = .standard
  ) {
    self.fallback = fallback
    self.clock = clock
    self.redirectPolicy = redirectPolicy
    state.withLock { $0.queue = responses }
  }

  /// Queues responses for the next requests that match no route.
  public func enqueue(_ responses: StubResponse...) {
    state.withLock { $0.queue += responses }
  }

  /// Answers requests whose method (any when `nil`) and path match with `response`.
  public func on(_ method: HTTPMethod?, _ pattern: String, _ response: StubResponse) {
    on(method, pattern) { _ in response }
  }

  /// Answers requests whose method (any when `nil`) and path match by calling `respond`.
  public func on(
    _ method: HTTPMethod?, _ pattern: String,
    respond: @escaping @Sendable (Request) throws -> StubResponse
  ) {
    let route = Route(method: method, pattern: Self.decodedSegments(pattern), respond: respond)
    state.withLock { $0.routes.append(route) }
  }

  /// Every request this transport received, in order, redirect hops included. A temporary
  /// file body (`RequestBody.temporaryFile`: a multipart form with file parts, whose file the
  /// client deletes once the call returns) is kept as the bytes it held when it arrived, so a
  /// test can read what was sent after the call, as it reads a `MockServer` request.
  public var requests: [Request] { state.withLock { $0.requests } }

  /// Returns once this transport has received at least `count` requests in all: the event to
  /// wait on before cancelling or inspecting requests in flight, instead of polling
  /// ``requests``. Cancelling the waiting task ends the wait early: give the test a time
  /// limit (`.timeLimit`) so a request that never comes fails the test instead of hanging it.
  ///
  /// ```swift
  /// let task = Task { try await client.send(Endpoint<Void>(.get, "slow")) }
  /// await stub.waitForRequests(1)
  /// client.cancelAll()
  /// ```
  public func waitForRequests(_ count: Int) async {
    await received.wait(until: count)
  }

  /// Sends `request` by answering from the script, following redirects as the wire
  /// transports do.
  public func send(_ request: Request) async throws -> Response {
    try RequestCancellation.checkCancellation()
    // The wire transports' checks before anything is sent: a file body that is not a readable
    // regular file, or a caller's Content-Length or Transfer-Encoding that does not frame the
    // body, is invalidRequest and is not recorded.
    try RequestFraming.check(request)
    let policy = request.attributes[RedirectPolicyAttribute.self] ?? redirectPolicy
    var current = request
    var visited: [(method: HTTPMethod, url: URL)] = [(request.method, request.url)]
    // What is left of the request's timeout, which covers every hop, as on the wire.
    var left = request.timeout
    while true {
      let (answer, sent) = try await self.answer(
        current, original: request, hop: visited.count - 1, left: &left)
      // The wire transports' redirect rule, hop by hop (CurlTransport's `follow`).
      guard (300..<400).contains(answer.status), let location = answer.headers[.location] else {
        return try await deliver(answer, headers: answer.headers, for: sent, left: &left)
      }
      guard let target = Redirect.target(ofLocation: location, from: current.url) else {
        guard URL(string: location, relativeTo: current.url) != nil else {
          throw CourierError(
            kind: .badResponse,
            debugMessage: "the \(answer.status) redirect's Location does not parse as a URL",
            request: request, attempts: 1, stage: "transport")
        }
        return try await deliver(answer, headers: answer.headers, for: sent, left: &left)
      }
      guard
        let next = try policy.decide(
          original: request, previous: current, status: answer.status, location: target,
          visited: visited)
      else {
        return try await deliver(answer, headers: answer.headers, for: sent, left: &left)
      }
      visited.append((next.method, next.url))
      current = next
    }
  }

  /// The most bytes of a stream body (`RequestBody.stream`) the stub reads into memory.
  public static let maximumStreamBodySize = 64 << 20

  /// The scripted answer to `request`, redirect hop `hop` (0: the first request) of
  /// `original`, recorded and framed: the first matching route, the next queued answer or the
  /// fallback, after its delay within `left` of the request's timeout. With it, the request
  /// as the stub received it: a stream body read whole into memory (a one-shot stream sent
  /// again fails as on the wire).
  private func answer(
    _ request: Request, original: Request, hop: Int, left: inout Duration?
  ) async throws -> (StubResponse, Request) {
    let path = Self.decodedSegments(
      request.url.path(percentEncoded: true), removingDotSegments: true)
    var kept = request
    if request.body.isTemporaryFile, let file = request.body.fileURL,
      let bytes = try? Data(contentsOf: file)
    {
      kept.body = .data(bytes)
    }
    if request.body.isStream {
      do {
        kept.body = .data(try await collect(request.body, within: left, of: original))
      } catch {
        var error = error as? CourierError ?? CourierError(error, request: original)
        error.request = original
        error.attempts = 1
        error.stage = "transport"
        throw error
      }
    }
    // Handlers read a stream body as the bytes it produced; any other as it was sent.
    let handed = request.body.isStream ? kept : request
    typealias Responder = @Sendable (Request) throws -> StubResponse
    let chosen = state.withLock { state -> Responder? in
      state.requests.append(kept)
      if let route = state.routes.first(where: {
        ($0.method == nil || $0.method == request.method) && Self.matches($0.pattern, path)
      }) {
        return route.respond
      }
      if !state.queue.isEmpty {
        let next = state.queue.removeFirst()
        return { _ in next }
      }
      return nil
    }
    received.increment()
    let stub = try chosen?(handed) ?? fallback
    try await sleep(stub.delay, within: &left, of: original)
    if let error = stub.error {
      guard var failure = error as? CourierError else { throw error }
      // The caller's request, as the wire transports report a hop that fails.
      if failure.request == nil || hop > 0 { failure.request = original }
      // Scripted, not the network's: middleware that tells the two apart (the reachability
      // middleware's inform mode relabels only a network stack's failures) see it so.
      failure.stage = "stub"
      throw failure
    }
    return (try Self.framed(stub, for: request), handed)
  }

  /// `stub` as a transport receives it from a server that frames it: no body for a `HEAD`
  /// request or a `1xx`, `204` or `304` status; else a `Content-Length` of the body's length
  /// unless the script sets one (or a `Transfer-Encoding`). A scripted `Content-Length` frames
  /// the body as on the wire: one that is not a number (or two that disagree) is
  /// ``CourierError/Kind/badResponse``, one past the body's end is
  /// ``CourierError/Kind/connectionLost`` (the connection ends first), one short of it cuts
  /// the body there; with a `Content-Encoding` it is left as scripted.
  private static func framed(_ stub: StubResponse, for request: Request) throws -> StubResponse {
    var framed = stub
    let status = stub.status
    guard !(100..<200).contains(status), status != 204, status != 304 else {
      framed.body = Data()
      return framed
    }
    let lengths = stub.headers.values(for: .contentLength)
    // A transport that decodes a coding itself (URLSession) keeps the coded length over the
    // decoded body: with a Content-Encoding, the scripted length is not the body's.
    let coded = stub.headers.values(for: .contentEncoding).contains {
      !$0.trimmingCharacters(in: .whitespaces).isEmpty && $0.lowercased() != "identity"
    }
    if lengths.isEmpty {
      if !stub.headers.contains(.transferEncoding) {
        try framed.headers.add(.contentLength, String(stub.body.count))
      }
    } else if !coded {
      let items = Set(
        lengths.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
          .map { $0.trimmingCharacters(in: .whitespaces) })
      guard items.count == 1, let item = items.first, let length = Int(item), length >= 0,
        item.utf8.allSatisfy(ASCII.isDigit)
      else {
        throw CourierError(
          kind: .badResponse,
          debugMessage: "StubTransport: the scripted Content-Length \(lengths) does not frame "
            + "a body; a transport refuses such a response",
          request: request, attempts: 1, stage: "transport")
      }
      if request.method != .head, length > stub.body.count {
        throw CourierError(
          kind: .connectionLost,
          debugMessage: "StubTransport: the scripted body has \(stub.body.count) bytes and its "
            + "Content-Length says \(length); on the wire the connection ends before the body",
          request: request, attempts: 1, stage: "transport")
      }
      framed.body = stub.body.prefix(length)
    }
    if request.method == .head { framed.body = Data() }
    return framed
  }

  /// Delivers the body as a transport does: in ``StubResponse/chunkSize`` pieces (one piece
  /// when unset), each after ``StubResponse/chunkInterval`` on the stub's clock, reporting
  /// progress, honouring an explicit ``ResponseBodyLimitAttribute``, and writing a `2xx` body
  /// of a download (``DownloadAttribute``) to its file with ``DownloadWriter``.
  private func deliver(
    _ stub: StubResponse, headers: HTTPHeaders, for request: Request, left: inout Duration?
  )
    async throws -> Response
  {
    if let upload = request.attributes[UploadProgressAttribute.self] {
      let size: Int64
      if let file = request.body.fileURL {
        let attributes = try? FileManager.default.attributesOfItem(atPath: file.path)
        size = (attributes?[.size] as? NSNumber)?.int64Value ?? 0
      } else {
        size = Int64(request.body.data?.count ?? 0)
      }
      upload.completeAttempt(total: size)
    }
    let progress = request.attributes[DownloadProgressAttribute.self]
    let limit = request.attributes[ResponseBodyLimitAttribute.self]
    let destination = request.attributes[DownloadAttribute.self]
    if let bufferSize = request.attributes[ResponseStreamAttribute.self], destination == nil,
      (200..<300).contains(stub.status), request.method != .head
    {
      var response = Response(status: stub.status, headers: headers, request: request)
      response.bodyStream = stream(stub, bufferSize: bufferSize, for: request)
      return response
    }
    if progress == nil, limit == nil, destination == nil, stub.chunkInterval == .zero {
      return Response(status: stub.status, headers: headers, body: stub.body, request: request)
    }
    let writer = destination.map(DownloadWriter.init)
    let sent = writer?.prepare(request) ?? request
    let writing =
      try writer?.begin(status: stub.status, headers: headers, request: sent) ?? false
    let body = stub.body
    let size = max(1, stub.chunkSize ?? body.count)
    var delivered = 0
    var kept = Data()
    repeat {
      try await sleep(stub.chunkInterval, within: &left, of: request)
      try RequestCancellation.checkCancellation()
      let end = min(body.count, delivered + size)
      let piece = body[(body.startIndex + delivered)..<(body.startIndex + end)]
      delivered = end
      if writing, let writer {
        try writer.write(Data(piece))
      } else {
        if let limit, delivered > limit {
          throw CourierError.bodyTooLarge(limit: limit, request: request)
        }
        kept.append(piece)
      }
      progress?.update(
        completed: writing ? (writer?.written ?? 0) : Int64(delivered),
        expected: Int64(body.count))
    } while delivered < body.count
    var response = Response(status: stub.status, headers: headers, body: kept, request: request)
    if writing, let writer {
      response.downloadedFile = try writer.finish()
    }
    progress?.completeAttempt(total: response.downloadedFile?.byteCount ?? Int64(kept.count))
    return response
  }

  /// A streamed `2xx` body: the pieces of ``StubResponse/chunkSize`` (the whole body when
  /// unset), each after ``StubResponse/chunkInterval`` on the stub's clock, written by a task
  /// that waits while the reader's buffer is full and stops when the reader does; then the end,
  /// or ``StubResponse/streamFailure``.
  private func stream(
    _ stub: StubResponse, bufferSize: Int, for request: Request
  ) -> ResponseBodyStream {
    let demand = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    let task = Mutex<Task<Void, Never>?>(nil)
    let (stream, writer) = ResponseBodyStream.makeStream(
      bufferSize: bufferSize, onDemand: { demand.continuation.yield() },
      onTermination: { task.withLock { $0?.cancel() } })
    let body = stub.body
    let size = max(1, stub.chunkSize ?? body.count)
    let clock = self.clock
    let progress = request.attributes[DownloadProgressAttribute.self]
    task.withLock { running in
      running = Task {
        var delivered = 0
        var demands = demand.stream.makeAsyncIterator()
        while delivered < body.count {
          if stub.chunkInterval > .zero {
            guard (try? await clock.sleep(for: stub.chunkInterval)) != nil else { return }
          }
          let end = min(body.count, delivered + size)
          let piece = Data(body[(body.startIndex + delivered)..<(body.startIndex + end)])
          delivered = end
          progress?.update(completed: Int64(delivered), expected: Int64(body.count))
          if !writer.write(piece) {
            // Full: wait until the reader took half, or stop with it.
            guard await demands.next() != nil, !Task.isCancelled else { return }
          }
          if Task.isCancelled || writer.isTerminated { return }
        }
        if let failure = stub.streamFailure {
          writer.fail(CourierError(failure, request: request, stage: "transport"))
        } else {
          progress?.completeAttempt(total: Int64(delivered))
          writer.finish()
        }
      }
    }
    return stream
  }

  /// A stream body read whole, within `left` of `request`'s timeout on the stub's clock, as
  /// a wire transport ends an attempt whose producer does not finish in time. The time the
  /// reading took is not taken from `left` (an injected clock's instants cannot be compared
  /// through `any Clock`): the scripted delay that follows may use all of it.
  private func collect(
    _ body: RequestBody, within left: Duration?, of request: Request
  ) async throws -> Data {
    guard let remaining = left else {
      return try await body.collect(upTo: Self.maximumStreamBodySize)
    }
    let clock = self.clock
    return try await {
      try await withThrowingTaskGroup(of: Data?.self) { group in
        group.addTask { try await body.collect(upTo: Self.maximumStreamBodySize) }
        group.addTask {
          try await RequestCancellation.sleep(for: remaining, clock: clock)
          return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let data = first else {
          let limit = request.timeout.map(DescriptionText.duration) ?? "its limit"
          throw CourierError(
            kind: .timedOut,
            debugMessage: "StubTransport: the request's timeout of \(limit) passed while its "
              + "stream body was read",
            request: request, attempts: 1, stage: "transport")
        }
        return data
      }
    }()
  }

  /// Waits `duration` on the stub's clock, within `left` of `request`'s timeout (`nil`: no
  /// limit): a wait that reaches the limit waits what is left and fails with
  /// ``CourierError/Kind/timedOut``, as a wire transport ends an attempt at its
  /// ``Request/timeout``.
  private func sleep(
    _ duration: Duration, within left: inout Duration?, of request: Request
  ) async throws {
    guard duration > .zero else { return }
    guard let remaining = left else {
      return try await RequestCancellation.sleep(for: duration, clock: clock)
    }
    guard duration < remaining else {
      if remaining > .zero { try await RequestCancellation.sleep(for: remaining, clock: clock) }
      let limit = request.timeout.map(DescriptionText.duration) ?? "its limit"
      throw CourierError(
        kind: .timedOut,
        debugMessage: "StubTransport: the request's timeout of \(limit) passed before the "
          + "scripted answer",
        request: request, attempts: 1, stage: "transport")
    }
    try await RequestCancellation.sleep(for: duration, clock: clock)
    left = remaining - duration
  }

  /// `true`: delays end at once when the request is cancelled.
  public var observesRequestCancellation: Bool { true }

  /// The slash-separated segments of `path`, each percent-decoded after the split (one that
  /// holds no valid escape stays as written): an escaped slash stays inside its segment.
  private static func decodedSegments(
    _ path: String, removingDotSegments: Bool = false
  ) -> [Substring] {
    var segments = path.split(separator: "/", omittingEmptySubsequences: true)
    // Before decoding: `%2E%2E` is a name, not a dot segment.
    if removingDotSegments { segments = Self.removingDotSegments(segments) }
    return segments.map {
      $0.contains("%") ? Substring($0.removingPercentEncoding ?? String($0)) : $0
    }
  }

  /// `segments` without the dot segments a transport removes from a path before sending it
  /// (RFC 3986 §5.2.4: `.` goes, `..` takes the segment before it along); `%2E%2E` is a name,
  /// not a dot segment, and stays.
  private static func removingDotSegments(_ segments: [Substring]) -> [Substring] {
    var kept: [Substring] = []
    for segment in segments {
      switch segment {
      case ".": continue
      case "..": _ = kept.popLast()
      default: kept.append(segment)
      }
    }
    return kept
  }

  private static func matches(_ pattern: [Substring], _ path: [Substring]) -> Bool {
    var index = 0
    for (position, segment) in pattern.enumerated() {
      if segment == "**" && position == pattern.count - 1 { return true }
      guard index < path.count else { return false }
      let wildcard = segment == "*" || (segment.first == "{" && segment.last == "}")
      if !wildcard && segment != path[index] { return false }
      index += 1
    }
    return index == path.count
  }
}

/// A scripted answer of a ``StubTransport``: a response, or an error to throw, optionally
/// after a delay.
public struct StubResponse: Sendable {
  /// The status.
  public var status: Int
  /// The headers.
  public var headers: HTTPHeaders
  /// The body.
  public var body: Data
  /// How long to wait before answering (on the stub's clock); cancellation ends the wait.
  public var delay: Duration = .zero
  /// An error to throw instead of answering.
  public var error: (any Error)?

  /// Deliver the body in pieces of this many bytes (progress events, a download written
  /// piece by piece); `nil` delivers it whole.
  public var chunkSize: Int?
  /// The wait before each piece, on the stub's clock.
  public var chunkInterval: Duration = .zero
  /// For a streamed body (``ResponseStreamAttribute``): the error the reader gets after the
  /// last piece instead of the end, as a connection lost in mid-body; `nil` ends the body
  /// normally.
  public var streamFailure: (any Error)?

  /// A copy delivered in pieces of `size` bytes, each after `interval`, as a network
  /// would: for progress and download tests.
  public func chunked(_ size: Int, every interval: Duration = .zero) -> StubResponse {
    var copy = self
    copy.chunkSize = size
    copy.chunkInterval = interval
    return copy
  }

  /// Creates a response.
  public init(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), body: Data = Data()) {
    self.status = status
    self.headers = headers
    self.body = body
  }

  /// A JSON body with `Content-Type: application/json`.
  public static func json(_ json: String, status: Int = 200) -> StubResponse {
    var headers = HTTPHeaders()
    try? headers.add(.contentType, "application/json")
    return StubResponse(status: status, headers: headers, body: Data(json.utf8))
  }

  /// A plain-text body.
  public static func text(_ text: String, status: Int = 200) -> StubResponse {
    var headers = HTTPHeaders()
    try? headers.add(.contentType, "text/plain; charset=utf-8")
    return StubResponse(status: status, headers: headers, body: Data(text.utf8))
  }

  /// A body of raw bytes.
  public static func data(_ data: Data, status: Int = 200) -> StubResponse {
    StubResponse(status: status, body: data)
  }

  /// An empty body with `status`.
  public static func status(_ status: Int) -> StubResponse {
    StubResponse(status: status)
  }

  /// Fails the attempt the way a transport does, with a ``CourierError`` of `kind` (for
  /// example ``CourierError/Kind/timedOut`` or ``CourierError/Kind/connectionLost``).
  ///
  /// The stub does not know any production transport: to replay the exact error a transport
  /// produces, build it there (for example with `URLErrorMapping.courierError(for:request:)`
  /// from `CourierURLSession`) and pass it to ``failure(_:)``.
  public static func failure(
    _ kind: CourierError.Kind, _ debugMessage: String = ""
  )
    -> StubResponse
  {
    failure(
      CourierError(
        kind: kind, debugMessage: debugMessage.isEmpty ? "stubbed failure" : debugMessage,
        attempts: 1, stage: "transport"))
  }

  /// Throws `error` instead of answering: a ``CourierError`` is thrown as it is, with the
  /// request filled in and its ``CourierError/stage`` `"stub"` (so a middleware that tells
  /// the network's failures from scripted ones, as the reachability middleware does, is not
  /// fooled in tests); any other error reaches the client as that error.
  public static func failure(_ error: any Error) -> StubResponse {
    var response = StubResponse(status: 0)
    response.error = error
    return response
  }

  /// Never answers; the request ends only when it is cancelled or times out.
  public static var never: StubResponse {
    StubResponse(status: 0).delayed(by: .seconds(365 * 24 * 3600))
  }

  /// The same answer after `delay`.
  public func delayed(by delay: Duration) -> StubResponse {
    var copy = self
    copy.delay = delay
    return copy
  }
}

extension StubTransport: CustomStringConvertible {
  /// `StubTransport(2 routes; 1 queued response; fallback 404)`.
  public var description: String {
    let (routes, queued) = state.withLock { ($0.routes.count, $0.queue.count) }
    return "StubTransport(\(routes) route\(routes == 1 ? "" : "s"); \(queued) queued "
      + "response\(queued == 1 ? "" : "s"); fallback \(fallback.status))"
  }
}
