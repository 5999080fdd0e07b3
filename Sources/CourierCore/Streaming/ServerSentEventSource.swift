import Foundation

/// How a ``ServerSentEventSource`` reconnects when its stream ends or breaks.
///
/// The wait before a reconnection is the server's `retry:` field when it sent one, else
/// ``delay``; after a reconnection that fails (no `2xx` event stream came back) it doubles each
/// time, up to ``maximumDelay``, and a stream that delivered resets it.
public struct EventStreamReconnection: Sendable {
  /// The wait before reconnecting until the server sets one with `retry:`; default
  /// ``defaultDelay``.
  public var delay: Duration
  /// The longest wait between two reconnections; default ``defaultMaximumDelay``.
  public var maximumDelay: Duration
  /// How many reconnections in a row may fail before the source gives up and throws the
  /// last failure; default ``defaultMaximumConsecutiveFailures``.
  public var maximumConsecutiveFailures: Int
  /// The failures worth reconnecting after: a transport failure of these kinds; default
  /// ``RetryPolicy/defaultRetryableKinds``.
  public var retryableKinds: Set<CourierError.Kind>
  /// The statuses worth reconnecting after; default ``RetryPolicy/defaultRetryableStatuses``.
  /// Any other non-`2xx` status ends the source with its ``CourierError``; `204 No Content`
  /// ends it without one (the server asks the client to stop).
  public var retryableStatuses: Set<Int>
  /// A budget every reconnection draws on, shared with ``RetryMiddleware`` when it is the same
  /// one: a reconnection it refuses ends the source with the failure. `nil` (the default): no
  /// budget.
  public var budget: RetryBudget?

  /// A few seconds, as browsers wait.
  public static let defaultDelay = Duration.seconds(3)
  /// A minute.
  public static let defaultMaximumDelay = Duration.seconds(60)
  /// Five: a server down for longer than the backoff covers is reported, not waited for.
  public static let defaultMaximumConsecutiveFailures = 5

  /// Creates a reconnection setting; every parameter defaults to the constant named after it.
  public init(
    delay: Duration = defaultDelay, maximumDelay: Duration = defaultMaximumDelay,
    maximumConsecutiveFailures: Int = defaultMaximumConsecutiveFailures,
    retryableKinds: Set<CourierError.Kind> = RetryPolicy.defaultRetryableKinds,
    retryableStatuses: Set<Int> = RetryPolicy.defaultRetryableStatuses,
    budget: RetryBudget? = nil
  ) {
    self.delay = Swift.max(.zero, delay)
    self.maximumDelay = Swift.max(.zero, maximumDelay)
    self.maximumConsecutiveFailures = Swift.max(0, maximumConsecutiveFailures)
    self.retryableKinds = retryableKinds
    self.retryableStatuses = retryableStatuses
    self.budget = budget
  }

  /// The defaults.
  public static let standard = EventStreamReconnection()

  /// Never reconnects: the source ends with its first stream.
  public static let disabled = EventStreamReconnection(maximumConsecutiveFailures: 0)
}

extension Client {
  /// The Server-Sent Events of the endpoint, reconnecting by themselves: when the stream ends
  /// or breaks, the source waits the server's `retry:` interval (or `reconnection`'s delay),
  /// sends the request again with `Last-Event-ID` set to the last event's id, and goes on with
  /// the events the server sends from there.
  ///
  /// Each connection goes through the whole chain as `Client.stream(_:bufferSize:)`
  /// does, with `Accept: text/event-stream` and `Cache-Control: no-cache`. The source ends
  /// when the reading task stops (break, cancellation), when the server answers
  /// `204 No Content`, or with an error: a status or failure `reconnection` does not retry, an
  /// answer that is not `text/event-stream`, too many failed reconnections in a row, the
  /// request's ``DeadlineAttribute`` passed.
  ///
  /// ```swift
  /// for try await event in client.events(Endpoint<Void>(.get, "updates")) {
  ///   print(event.event, event.data)
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - lastEventID: The id to resume after on the first connection; default none.
  ///   - reconnection: When and how often to reconnect; default
  ///     ``EventStreamReconnection/standard``.
  ///   - clock: What the waits between connections sleep on; inject a test clock in tests.
  public func events<Value>(
    _ endpoint: Endpoint<Value>, lastEventID: String? = nil,
    reconnection: EventStreamReconnection = .standard,
    clock: any Clock<Duration> = ContinuousClock()
  ) -> ServerSentEventSource {
    var endpoint = endpoint.attribute(
      ResponseStreamAttribute.self, ResponseBodyStream.defaultBufferSize)
    endpoint.overrides.envelope = .some(nil)
    let built = Result { () throws(CourierError) -> Request in try request(for: endpoint) }
    return ServerSentEventSource(
      client: self, request: built, lastEventID: lastEventID ?? "",
      reconnection: reconnection, clock: clock)
  }
}

/// The events of a Server-Sent Events endpoint across reconnections: what
/// ``Client/events(_:lastEventID:reconnection:clock:)`` returns. Iterate it once.
public struct ServerSentEventSource: AsyncSequence, Sendable {
  /// One event, in the order the server sent them.
  public typealias Element = ServerSentEvent
  /// What the iterator throws.
  public typealias Failure = CourierError

  let client: Client
  let request: Result<Request, CourierError>
  let lastEventID: String
  let reconnection: EventStreamReconnection
  let clock: any Clock<Duration>

  /// Starts the first connection when first asked for an event.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(source: self)
  }

  /// Reads the events of a ``ServerSentEventSource``, connecting and reconnecting as needed.
  public struct AsyncIterator: AsyncIteratorProtocol {
    private let source: ServerSentEventSource
    /// The id sent as `Last-Event-ID` on the next connection.
    private var lastEventID: String
    private var body: ResponseBodyStream.AsyncIterator?
    private var parser = ServerSentEventParser()
    private var pending: [ServerSentEvent] = []
    private var next = 0
    /// The server's `retry:`, kept across connections.
    private var serverDelay: Duration?
    /// Reconnections in a row that got no event stream.
    private var failures = 0
    private var connections = 0
    private var ended = false

    init(source: ServerSentEventSource) {
      self.source = source
      lastEventID = source.lastEventID
    }

    /// The next event, or `nil` when the source ended.
    public mutating func next() async throws(CourierError) -> ServerSentEvent? {
      while !ended {
        if next < pending.count {
          let event = pending[next]
          next += 1
          lastEventID = event.id ?? ""
          return event
        }
        pending.removeAll(keepingCapacity: true)
        next = 0
        if body == nil {
          try await connect()
          continue
        }
        do {
          guard let chunk = try await body?.next() else {
            // The server ended the stream: reconnect, as an EventSource does.
            body = nil
            continue
          }
          try parser.feed(chunk, into: &pending)
        } catch {
          body = nil
          try reconnectable(error)
        }
      }
      return nil
    }

    /// Opens the next connection (after the wait, for a reconnection), or ends the source.
    private mutating func connect() async throws(CourierError) {
      var request = try source.request.get()
      if connections > 0 {
        try await wait(before: request)
      }
      connections += 1
      if let deadline = request.attributes[DeadlineAttribute.self], deadline.hasPassed {
        ended = true
        throw CourierError(
          kind: .timedOut,
          debugMessage: "the event stream's deadline (\(deadline.limit)) passed",
          request: request, stage: "client")
      }
      do {
        try request.headers.set(.accept, "text/event-stream")
        try request.headers.set("Cache-Control", "no-cache")
        request.headers.remove("Last-Event-ID")
        if !lastEventID.isEmpty { try request.headers.set("Last-Event-ID", lastEventID) }
      } catch {
        // Only the server's id can be refused: it cannot go into a header field.
        ended = true
        throw source.client.localized(
          CourierError(error, request: request, stage: "transport", otherwise: .badResponse))
      }
      source.reconnection.budget?.recordRequest()
      let streamed: StreamedResponse
      do {
        streamed = try await source.client.stream(
          request, bufferSize: ResponseBodyStream.defaultBufferSize)
      } catch {
        try reconnectable(error)
        return
      }
      let head = streamed.head
      if head.status == 204 {
        ended = true
        return
      }
      guard head.isSuccess else {
        let error = CourierError(
          kind: .httpStatus,
          debugMessage: "the event stream answered \(head.status)", request: request,
          response: head, attempts: head.attempts, stage: "status")
        guard source.reconnection.retryableStatuses.contains(head.status) else {
          ended = true
          throw source.client.localized(error)
        }
        try reconnectable(error)
        return
      }
      let type = head.headers[.contentType]?.split(separator: ";").first.map {
        $0.trimmingCharacters(in: .whitespaces).lowercased()
      }
      guard type == "text/event-stream" else {
        ended = true
        throw source.client.localized(
          CourierError(
            kind: .badResponse,
            debugMessage: "the event stream's Content-Type is \(type ?? "missing"), not "
              + "text/event-stream",
            request: request, response: head, attempts: head.attempts, stage: "transport"))
      }
      failures = 0
      // A new connection is a new stream: its parser starts afresh (a partial event of the
      // old one is dropped, as the spec says), the server's retry is kept.
      if let time = parser.reconnectionTime { serverDelay = time }
      parser = ServerSentEventParser()
      body = streamed.body.makeAsyncIterator()
    }

    /// Counts `error` as a failed connection when `reconnection` retries it; throws it (and
    /// ends the source) when it does not, or when too many failed in a row.
    private mutating func reconnectable(_ error: CourierError) throws(CourierError) {
      if let time = parser.reconnectionTime { serverDelay = time }
      let retried =
        error.kind == .httpStatus || source.reconnection.retryableKinds.contains(error.kind)
      guard retried, error.kind != .cancelled,
        failures < source.reconnection.maximumConsecutiveFailures
      else {
        ended = true
        throw error
      }
      if error.kind == .httpStatus, let status = error.status,
        !source.reconnection.retryableStatuses.contains(status)
      {
        ended = true
        throw error
      }
      failures += 1
      if let budget = source.reconnection.budget, !budget.tryRetry() {
        ended = true
        var refused = error
        refused.debugMessage += "; the retry budget refused a reconnection"
        throw refused
      }
    }

    /// Waits before a reconnection: the server's `retry:` or the configured delay, doubled
    /// for each failure in a row, at most the maximum; a cancelled task ends the source.
    private mutating func wait(before request: Request) async throws(CourierError) {
      let base = serverDelay ?? source.reconnection.delay
      var wait = base
      if failures > 1 {
        for _ in 1..<failures where wait < source.reconnection.maximumDelay { wait = wait * 2 }
      }
      wait = Swift.min(wait, Swift.max(base, source.reconnection.maximumDelay))
      do {
        try await source.clock.sleep(for: wait)
      } catch {
        ended = true
        throw source.client.localized(
          CourierError(
            kind: .cancelled, debugMessage: "the task reading the event stream was cancelled",
            request: request, stage: "client"))
      }
    }
  }
}
