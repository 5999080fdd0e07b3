import Foundation

/// The one object an app or service talks to for all its endpoints: a base URL, an ordered
/// middleware chain, a transport, a response pipeline and the texts for errors.
///
/// A client is a value you build and pass around — there is no shared instance and no global
/// configuration. Its chain is composed once, in `init`.
///
/// ```swift
/// let client = Client(
///   baseURL: URL(string: "https://api.example.com/v1/")!,
///   transport: URLSessionTransport(),
///   pipeline: .envelope(.codeZero))
///
/// let user: User = try await client.send(
///   Endpoint<User>(.get, "user/check/{phone}").parameter("phone", phone))
/// ```
///
/// Every error that leaves ``send(_:)-(Request)`` or ``send(_:)-(Endpoint<Value>)`` is a
/// ``CourierError`` whose ``CourierError/reason`` is in ``locale``.
public final class Client: Sendable {
  /// The URL that relative endpoint paths are joined to; `nil` when every endpoint is
  /// absolute.
  public let baseURL: URL?
  /// The transport that sends each attempt.
  public let transport: any Transport
  /// The middleware, outermost first.
  public let middleware: [any Middleware]
  /// The stages every endpoint response passes (an endpoint may override it).
  public let pipeline: ResponsePipeline
  /// Encodes JSON request bodies unless an endpoint brings its own encoder.
  public let encoder: JSONEncoder
  /// Decodes JSON responses unless an endpoint brings its own decoder.
  public let decoder: JSONDecoder
  /// Where error reasons come from.
  public let reasons: ReasonCatalog
  /// The language of error reasons, a locale of ``reasons`` such as `"en"` or `"zh-Hans"`.
  public let locale: String
  /// What hears this client's requests' events (see ``ClientObserver``).
  public let observers: [any ClientObserver]
  /// What records this client's requests as spans (see ``RequestTracer``); `nil` for none.
  public let tracer: (any RequestTracer)?

  private let chain: Next
  /// The observers and the tracer; `nil` when there are neither, so that sending does none
  /// of their work.
  private let instrumentation: Instrumentation?
  private let base: URLBuilder.Base?
  let inFlight = InFlightRequests()

  /// Creates a client and composes its middleware chain.
  ///
  /// - Parameters:
  ///   - baseURL: The URL relative endpoint paths are joined to.
  ///   - transport: Sends each attempt.
  ///   - middleware: Outermost first.
  ///   - pipeline: Response stages; default ``ResponsePipeline/standard`` (accept 2xx).
  ///   - encoder: For JSON request bodies; default `JSONEncoder()`.
  ///   - decoder: For JSON responses; default `JSONDecoder()`.
  ///   - reasons: Error texts; default ``ReasonCatalog/standard`` (`en`, `zh-Hans`).
  ///   - locale: The language of reasons; default: the best match in `reasons` for the
  ///     process's preferred languages, else `"en"`.
  ///   - observers: Hear every request's events (``ClientObserver``); default none.
  ///   - tracer: Records a span per request and one per attempt, and sends each attempt's
  ///     `traceparent` (``RequestTracer``); default none.
  public init(
    baseURL: URL? = nil,
    transport: any Transport,
    middleware: [any Middleware] = [],
    pipeline: ResponsePipeline = .standard,
    encoder: JSONEncoder = JSONEncoder(),
    decoder: JSONDecoder = JSONDecoder(),
    reasons: ReasonCatalog = .standard,
    locale: String? = nil,
    observers: [any ClientObserver] = [],
    tracer: (any RequestTracer)? = nil
  ) {
    self.baseURL = baseURL
    self.transport = transport
    self.middleware = middleware
    self.pipeline = pipeline
    self.encoder = encoder
    self.decoder = decoder
    self.reasons = reasons
    self.locale = locale ?? reasons.bestLocale(for: ReasonCatalog.processPreferredLanguages)
    self.observers = observers
    self.tracer = tracer
    let instrumentation = Instrumentation(observers: observers, tracer: tracer)
    self.instrumentation = instrumentation
    self.chain = Chain.compose(
      Self.withValidation(middleware), around: transport, observed: instrumentation != nil)
    self.base = baseURL.map { URLBuilder.Base($0, keepingResolvedURLs: true) }
  }

  /// The layers the chain runs: `middleware`, with a ``ResponseValidation`` where the
  /// response pipeline's checks belong unless the caller placed one — innermost, or just
  /// outside the first middleware that decodes response bodies
  /// (``Middleware/decodesResponseBodies``), so the checks read decoded bytes.
  static func withValidation(_ middleware: [any Middleware]) -> [any Middleware] {
    guard !middleware.contains(where: { $0 is ResponseValidation }) else { return middleware }
    var layers = middleware
    let position = middleware.firstIndex { $0.decodesResponseBodies } ?? middleware.count
    layers.insert(ResponseValidation(), at: position)
    return layers
  }

  /// Sends a request through the middleware and the transport and returns the response,
  /// whatever its status (no response pipeline runs here).
  ///
  /// Cancelling the calling `Task`, or calling ``cancelAll()``, cancels the request; it then
  /// fails with kind ``CourierError/Kind/cancelled``. A response whose body is streamed
  /// (``Response/bodyStream``) stays in flight until its body ends: ``cancelAll()`` then
  /// ends the body, and its download progress ends with it. Once ``shutdown(gracePeriod:)``
  /// has started, it fails at once with kind ``CourierError/Kind/shutDown``.
  public func send(_ given: Request) async throws(CourierError) -> Response {
    let start = ContinuousClock.now
    // Without observers the request goes on as given, never copied into a variable.
    let request: Request
    let observation: Observation?
    if let instrumentation {
      var observed = given
      observation = instrumentation.start(&observed, at: start)
      request = observed
    } else {
      request = given
      observation = nil
    }
    if Task.isCancelled {
      throw refused(
        CourierError(CancellationError(), request: request, stage: "client"), observation)
    }
    let token = RequestCancellation(parent: RequestCancellation.current)
    guard let ticket = inFlight.insert(token) else {
      token.detachFromParent()
      if !request.attributes.isEmpty { Self.endProgress(of: request, succeeded: false) }
      throw refused(.refusedAtShutdown(request), observation)
    }
    var succeeded = false
    var streamed: StreamCore?
    defer {
      if let streamed {
        holdUntilEnded(
          streamed, request: request, token: token, ticket: ticket, observation: observation)
      } else {
        inFlight.remove(ticket)
        token.detachFromParent()
        if !request.attributes.isEmpty { Self.endProgress(of: request, succeeded: succeeded) }
      }
    }
    do {
      // The chain runs inline in the caller's task: no extra task, no thread hop.
      var response = try await RequestCancellation.$current.withValue(token) {
        try await chain(request)
      }
      response.timings.total = ContinuousClock.now - start
      succeeded = true
      streamed = response.bodyStream?.core
      observation?.responded(response, streamed: streamed != nil)
      return response
    } catch {
      throw failure(
        error, of: request, cancelled: token.isCancelled || Task.isCancelled, ticket: ticket,
        start: start, observation: observation)
    }
  }

  // The two functions below build what `send(_:)` throws. Synchronous and out of line, so
  // that the errors they build stay on the thread's stack instead of in `send(_:)`'s frame,
  // which every request in flight holds.

  /// `failure` in the client's language, reported to the observers: a request refused before
  /// it was sent.
  @inline(never)
  private func refused(_ failure: CourierError, _ observation: Observation?) -> CourierError {
    let failure = localized(failure)
    observation?.failed(failure)
    return failure
  }

  /// What a request that failed with `error` throws: a ``CourierError`` that says whether it
  /// was cancelled and why, with its total time, in the client's language.
  @inline(never)
  private func failure(
    _ error: any Error, of request: Request, cancelled: Bool, ticket: UInt64,
    start: ContinuousClock.Instant, observation: Observation?
  ) -> CourierError {
    var failure = CourierError(error, request: request)
    if cancelled, failure.kind != .cancelled {
      failure.debugMessage += failure.debugMessage.isEmpty ? "" : "; "
      failure.debugMessage += "cancelled while failing as \(failure.kind)"
      failure.kind = .cancelled
    }
    if let grace = inFlight.shutdownCancellation(of: ticket) { failure.noteShutdown(grace) }
    var timings = failure.timings ?? Response.Timings()
    timings.total = ContinuousClock.now - start
    failure.timings = timings
    failure = localized(failure)
    observation?.failed(failure)
    return failure
  }

  /// Builds the endpoint's request, sends it, runs the response pipeline and decodes the
  /// value.
  ///
  /// The pipeline's checks (status, envelope, your stages) run inside the middleware chain,
  /// at ``ResponseValidation``, so middleware see their failures; decoding runs after the
  /// chain.
  ///
  /// - Throws: ``CourierError``: ``CourierError/Kind/invalidRequest`` when the request cannot
  ///   be built, a transport kind when sending fails, ``CourierError/Kind/httpStatus``,
  ///   ``CourierError/Kind/business`` or ``CourierError/Kind/decoding`` from the pipeline.
  public func send<Value>(_ endpoint: Endpoint<Value>) async throws(CourierError) -> Value {
    let (request, plan) = try plannedRequest(for: endpoint)
    let response = try await sendBuilt(request)
    return try decode(response, for: endpoint, checkedUnder: plan)
  }

  /// Sends a request this client built from an endpoint, then deletes its temporary body file
  /// (a multipart form with file parts) at once, whatever the outcome: nobody else can send
  /// that request again.
  private func sendBuilt(_ request: Request) async throws(CourierError) -> Response {
    defer { request.body.temporaryFile?.remove() }
    return try await send(request)
  }

  /// Like ``send(_:)-(Endpoint<Value>)``, but also returns the response the value came from.
  public func response<Value>(
    for endpoint: Endpoint<Value>
  ) async throws(CourierError) -> Decoded<Value> {
    let (request, plan) = try plannedRequest(for: endpoint)
    let response = try await sendBuilt(request)
    return Decoded(
      value: try decode(response, for: endpoint, checkedUnder: plan), response: response)
  }

  /// The request an endpoint describes, against this client's base URL and encoder, carrying
  /// the endpoint's response pipeline (``ResponseValidationAttribute``) so that sending it
  /// with ``send(_:)-(Request)`` checks the response inside the chain as an endpoint does.
  ///
  /// - Throws: ``CourierError`` of kind ``CourierError/Kind/invalidRequest``.
  public func request<Value>(for endpoint: Endpoint<Value>) throws(CourierError) -> Request {
    try plannedRequest(for: endpoint).request
  }

  /// ``request(for:)``, with the identity of the plan it carries: what the endpoint call that
  /// sends it compares with the plan of the verdict on the response.
  private func plannedRequest<Value>(
    for endpoint: Endpoint<Value>
  ) throws(CourierError) -> (request: Request, plan: UInt64) {
    do {
      var request = try endpoint.makeRequest(base: base, encoder: encoder)
      let plan = ResponseValidationPlan(
        pipeline: endpoint.pipeline ?? pipeline, overrides: endpoint.overrides)
      request.attributes[ResponseValidationAttribute.self] = plan
      return (request, plan.identity)
    } catch {
      throw localized(CourierError(error, stage: "request", otherwise: .invalidRequest))
    }
  }

  /// Runs the endpoint's response pipeline (or the client's) on a response you already have
  /// and decodes its value, exactly as ``send(_:)-(Endpoint<Value>)`` does after sending.
  ///
  /// The pipeline's checks run here in full, whatever ran on the response inside the chain:
  /// what ``ResponseValidation`` found there was found for the request's own endpoint, so one
  /// response decoded for several endpoints gets each one's statuses, envelope and stages.
  public func decode<Value>(
    _ response: Response, for endpoint: Endpoint<Value>
  ) throws(CourierError) -> Value {
    try decode(response, for: endpoint, checkedUnder: nil)
  }

  /// ``decode(_:for:)``, reusing what ``ResponseValidation`` found inside the chain when it
  /// found it under `plan`: the plan this client put on the request it sent for this very
  /// call (see ``ResponsePipeline``, "The three places a pipeline acts").
  private func decode<Value>(
    _ response: Response, for endpoint: Endpoint<Value>, checkedUnder plan: UInt64?
  ) throws(CourierError) -> Value {
    do {
      return try (endpoint.pipeline ?? pipeline).value(
        of: response, overrides: endpoint.overrides, decoding: endpoint.decoding,
        decoder: endpoint.decoder ?? decoder, checkedUnder: plan)
    } catch {
      var failure = CourierError(error, request: response.request)
      if failure.response == nil { failure.response = response }
      failure.attempts = max(failure.attempts, response.attempts)
      throw localized(failure)
    }
  }

  /// Cancels every request this client has in flight. Each fails with kind
  /// ``CourierError/Kind/cancelled``. Requests started afterwards are not affected.
  ///
  /// - Returns: How many requests were cancelled.
  @discardableResult
  public func cancelAll() -> Int {
    inFlight.cancelAll()
  }

  /// How many requests this client has in flight.
  public var inFlightCount: Int { inFlight.count }

  /// Keeps a request whose response body is streamed in flight until the body ends: its
  /// token's cancellation (``cancelAll()``) ends the body, and the body's end ends the
  /// download progress (the upload's ended with the head).
  private func holdUntilEnded(
    _ core: StreamCore, request: Request, token: RequestCancellation, ticket: UInt64,
    observation: Observation?
  ) {
    if !request.attributes.isEmpty {
      Self.endProgress(of: request, succeeded: true, download: false)
    }
    let inFlight = inFlight
    let handler = token.addHandler {
      var error = CourierError(
        kind: .cancelled,
        debugMessage: "the request was cancelled (Client.cancelAll()) while its streamed body "
          + "was read; the transfer ended",
        request: request, stage: "client")
      if let grace = inFlight.shutdownCancellation(of: ticket) {
        error.debugMessage = "its streamed body was being read; the transfer ended"
        error.noteShutdown(grace)
      }
      core.terminate(with: error)
    }
    core.whenEnded { finished in
      token.removeHandler(handler)
      inFlight.remove(ticket)
      token.detachFromParent()
      if !request.attributes.isEmpty {
        Self.endProgress(of: request, succeeded: finished, upload: false)
      }
      observation?.streamEnded(
        bytes: core.bytesReceived, completed: finished, failure: finished ? nil : core.endError)
    }
  }

  /// Ends the progress streams of a request that is over: with the final event (the last
  /// attempt's body) when it ended with a response, without one after a failure. Only here,
  /// after every retry, is it known which attempt's body was the last.
  private static func endProgress(
    of request: Request, succeeded: Bool, upload: Bool = true, download: Bool = true
  ) {
    for progress in [
      upload ? request.attributes[UploadProgressAttribute.self] : nil,
      download ? request.attributes[DownloadProgressAttribute.self] : nil,
    ] {
      guard let progress else { continue }
      if succeeded { progress.complete() } else { progress.finish() }
    }
  }

  /// Gives `error` this client's reason text.
  func localized(_ error: CourierError) -> CourierError {
    var error = error
    error.reason = reasons.reason(for: error, locale: locale)
    return error
  }
}
