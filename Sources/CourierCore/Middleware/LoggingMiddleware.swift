import Foundation

/// Logs each attempt as it goes to the wire, with credentials hidden by default.
///
/// Levels, each including the one before:
/// - ``Level/none``: nothing (and no cost beyond one comparison);
/// - ``Level/basic``: one line per attempt when it ends: method, URL, status or error kind,
///   duration, attempt, sizes, request id, and the phases the transport measured
///   (``Response/Timings``) in short: `dns 0.2ms connect 0.4ms tls 3.1ms ttfb 5.0ms total
///   6.2ms reused HTTP/1.1`, only those present (``timingsText(_:)``);
/// - ``Level/headers``: a line when the attempt starts, request and response headers, and the
///   address the attempt connected to (`remote_address`);
/// - ``Level/body``: JSON, form and multipart bodies up to ``maximumBodyBytes`` (default
///   4,096 bytes, enough for a typical JSON payload without flooding a log), redacted; binary
///   ones as `<N bytes binary>`, multipart request bodies as
///   `<multipart/form-data, N bytes, not logged>`, and other text (prose, HTML, a bare token)
///   as `<N bytes text/plain, not logged: not JSON, a form or multipart>`. A request body
///   read from a sequence (`RequestBody.stream`) is never read here, as its bytes are made
///   for the transport alone: `<stream, N bytes, not logged>` (the length when it was given).
///
/// ``Redaction/standard`` is on unless you pass another: `Authorization`, cookies, API keys,
/// `token`-like query parameters (in the URL and in URL-valued headers such as `Location`)
/// and JSON, form or multipart body keys such as `password` are written as `***` at every
/// level. The redaction finds secrets by name, so a body it cannot read as JSON, a form or
/// multipart is summarised, never written (with ``Redaction/none`` every text body is).
///
/// ```swift
/// let client = Client(
///   baseURL: base, transport: URLSessionTransport(),
///   middleware: [LoggingMiddleware(level: .headers, sink: StandardErrorLogSink())])
/// ```
///
/// Place it inside retry (the standard order does) to see every attempt, outside to see each
/// logical request once.
public struct LoggingMiddleware: Middleware {
  /// How much is logged.
  public enum Level: Int, Sendable, Comparable, CustomStringConvertible {
    /// Nothing.
    case none
    /// One line per attempt.
    case basic
    /// Also a line when the attempt starts, and headers.
    case headers
    /// Also text bodies.
    case body

    /// Orders by detail.
    public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The lower-case name.
    public var description: String {
      switch self {
      case .none: "none"
      case .basic: "basic"
      case .headers: "headers"
      case .body: "body"
      }
    }
  }

  /// How much is logged.
  public var level: Level
  /// Where events go.
  public var sink: any LogSink
  /// What is hidden.
  public var redaction: Redaction
  /// The most body bytes written per body at ``Level/body``.
  public var maximumBodyBytes: Int

  /// Creates the middleware.
  ///
  /// - Parameters:
  ///   - level: Default ``Level/basic``.
  ///   - sink: Default ``StandardErrorLogSink``.
  ///   - redaction: Default ``Redaction/standard``.
  ///   - maximumBodyBytes: Default 4,096.
  public init(
    level: Level = .basic, sink: any LogSink = StandardErrorLogSink(),
    redaction: Redaction = .standard, maximumBodyBytes: Int = 4096
  ) {
    self.level = level
    self.sink = sink
    self.redaction = redaction
    self.maximumBodyBytes = max(0, maximumBodyBytes)
  }

  /// Sends the request on and logs the attempt.
  nonisolated(nonsending) public func intercept(
    _ request: Request, next: Next
  ) async throws
    -> Response
  {
    guard level > .none else { return try await next(request) }
    // The work before and after the answer is in synchronous functions: what they build
    // (messages, fields, copies of the response) stays on the thread's stack instead of in
    // this async function's frame, which a request holds for as long as it is in flight.
    let fields = loggedStart(of: request)
    let started = ContinuousClock.now
    let response: Response
    do {
      response = try await next(request)
    } catch {
      throw logged(error, of: request, fields: fields, started: started)
    }
    return logged(response, of: request, fields: fields, started: started)
  }

  /// The fields every line of `request` carries; logs the request's start at the levels that
  /// log headers.
  @inline(never)
  private func loggedStart(of request: Request) -> [String: String] {
    let fields = baseFields(request)
    if level >= .headers, sink.logLevel <= .debug {
      var start = fields
      start["request_headers"] = headers(request.headers, of: request)
      if level >= .body, let body = requestBody(request) { start["request_body"] = body }
      emit(
        LogEvent(
          severity: .debug, message: "\(request.method) \(fields["url"] ?? "")", metadata: start))
    }
    return fields
  }

  /// Logs `response` and returns it; a streamed body logs its end when its reader has it.
  @inline(never)
  private func logged(
    _ response: Response, of request: Request, fields: [String: String],
    started: ContinuousClock.Instant
  ) -> Response {
    var response = response
    var fields = fields
    let url = fields["url"] ?? ""
    let elapsed = ContinuousClock.now - started
    let severity: LogSeverity = response.status >= 400 ? .warning : .info
    guard severity >= sink.logLevel else { return response }
    fields["duration_ms"] = Self.milliseconds(elapsed)
    addResponse(response, to: &fields)
    if let stream = response.bodyStream {
      // The head now; the size and the whole duration once the reader has the last byte.
      response.bodyStream = stream.transformed(
        by: StreamEnd(
          sink: sink, fields: fields, started: started,
          message: "\(request.method) \(url) → \(response.status) stream ended"))
    }
    emit(
      LogEvent(
        severity: severity,
        message:
          "\(request.method) \(url) → \(response.status) (\(fields["duration_ms"] ?? "") ms)"
          + Self.suffix(fields["timings"]),
        metadata: fields))
    return response
  }

  /// Logs the failure `error` and returns it, to be thrown as it is.
  @inline(never)
  private func logged(
    _ error: any Error, of request: Request, fields: [String: String],
    started: ContinuousClock.Instant
  ) -> any Error {
    var fields = fields
    let url = fields["url"] ?? ""
    let elapsed = ContinuousClock.now - started
    let failure = error as? CourierError
    let kind = failure?.kind.name ?? (error is CancellationError ? "cancelled" : "error")
    // A response the pipeline rejected (a 503, a business code) is a warning with its
    // status; a failure without a response is an error.
    let severity: LogSeverity = failure?.response == nil ? .error : .warning
    guard severity >= sink.logLevel else { return error }
    fields["error_kind"] = kind
    fields["duration_ms"] = Self.milliseconds(elapsed)
    var outcome = "failed: \(kind)"
    if let response = failure?.response {
      addResponse(response, to: &fields)
      outcome = "→ \(response.status) \(kind)"
    } else if let timings = failure?.timings {
      // The phases the failed attempt reached (a connect timeout has no ttfb).
      addTimings(timings, to: &fields)
    }
    emit(
      LogEvent(
        severity: severity,
        message: "\(request.method) \(url) \(outcome) (\(fields["duration_ms"] ?? "") ms)"
          + Self.suffix(fields["timings"]),
        metadata: fields))
    return error
  }

  private func emit(_ event: LogEvent) {
    guard event.severity >= sink.logLevel else { return }
    sink.log(event)
  }

  private func baseFields(_ request: Request) -> [String: String] {
    var fields: [String: String] = [
      "method": request.method.rawValue,
      "url": redaction.url(request.url),
      "attempt": String(request.attributes[AttemptAttribute.self]),
    ]
    if let id = request.attributes[RequestIDAttribute.self] { fields["request_id"] = id.traceID }
    if let data = request.body.data, !data.isEmpty {
      fields["request_bytes"] = String(data.count)
    } else if request.body.isStream {
      fields["request_bytes"] = request.body.streamLength.map { String($0) } ?? "streamed"
    }
    return fields
  }

  /// The response's status and size, and its headers and body at the levels that log them.
  private func addResponse(_ response: Response, to fields: inout [String: String]) {
    fields["status"] = String(response.status)
    // A download's body is in a file: log its size, never its bytes. A streamed body's size
    // is logged when it ends.
    fields["response_bytes"] =
      response.bodyStream != nil
      ? "streamed"
      : String(response.downloadedFile?.byteCount ?? Int64(response.body.count))
    if level >= .headers { fields["response_headers"] = headers(response.headers, of: nil) }
    if level >= .body, let body = responseBody(response) { fields["response_body"] = body }
    addTimings(response.timings, to: &fields)
  }

  /// The attempt's phases (`timings`), and at ``Level/headers`` the address it connected to.
  /// The address is not on the basic line: the URL names the host already, and which of its
  /// addresses answered matters when debugging connections, which is what headers are for.
  private func addTimings(_ timings: Response.Timings, to fields: inout [String: String]) {
    if let text = Self.timingsText(timings) { fields["timings"] = text }
    if level >= .headers, let address = timings.remoteAddress { fields["remote_address"] = address }
  }

  /// `" " + text`, or nothing.
  private static func suffix(_ text: String?) -> String {
    guard let text else { return "" }
    return " " + text
  }

  /// The phases of `timings` in short, as the basic line shows them: `dns 0.2ms connect 0.4ms
  /// tls 3.1ms ttfb 5.0ms total 6.2ms reused HTTP/1.1`, with only the fields present. `total`
  /// is the attempt's (``Response/Timings/bodyComplete``); over a reused connection the
  /// lookup, connect and handshake (zero) are left out and `reused` says why. `nil` when the
  /// transport measured nothing.
  public static func timingsText(_ timings: Response.Timings) -> String? {
    var parts: [String] = []
    func add(_ label: String, _ phase: Duration?) {
      if let phase { parts.append(label + " " + shortMilliseconds(phase)) }
    }
    let reused = timings.connectionReused == true
    if !reused {
      add("dns", timings.nameLookup)
      add("connect", timings.connect)
      add("tls", timings.tlsHandshake)
    }
    add("ttfb", timings.firstByte)
    add("total", timings.bodyComplete)
    if reused { parts.append("reused") }
    if let version = timings.httpVersion { parts.append(version) }
    return parts.isEmpty ? nil : parts.joined(separator: " ")
  }

  /// `12.3ms`: tenths of a millisecond, rounded, without `String(format:)`.
  package static func shortMilliseconds(_ duration: Duration) -> String {
    let nanoseconds = min(max(duration, .zero).clampedNanoseconds, Int64.max - 50_000)
    let tenths = (nanoseconds + 50_000) / 100_000
    return "\(tenths / 10).\(tenths % 10)ms"
  }

  /// Header lines as they may be logged; a request's own credential headers
  /// (``CredentialHeadersAttribute``) are hidden too.
  private func headers(_ headers: HTTPHeaders, of request: Request?) -> String {
    headers.map { field in
      let value = request.map { redaction.header(field, of: $0) } ?? redaction.header(field)
      return "\(field.name.rawName): \(value)"
    }.joined(separator: "\n")
  }

  private func requestBody(_ request: Request) -> String? {
    // A multipart body is summarised, never written: its fields may hold anything (passwords
    // included) and its files are binary or large.
    if let type = request.headers[.contentType],
      type.utf8.count >= 10, type.prefix(10).lowercased() == "multipart/"
    {
      let media = type.split(separator: ";", maxSplits: 1).first.map(String.init) ?? type
      let size =
        request.headers[.contentLength] ?? request.body.data.map { String($0.count) } ?? "?"
      return "<\(media.trimmingCharacters(in: .whitespaces)), \(size) bytes, not logged>"
    }
    if let file = request.body.fileURL { return "<file \(file.lastPathComponent)>" }
    // A stream is never read here: its bytes are produced once, for the transport.
    if request.body.isStream {
      return "<stream" + (request.body.streamLength.map { ", \($0) bytes" } ?? "")
        + ", not logged>"
    }
    guard let data = request.body.data, !data.isEmpty else { return nil }
    return body(data, contentType: request.headers[.contentType])
  }

  private func responseBody(_ response: Response) -> String? {
    if response.bodyStream != nil { return "<streamed, not logged>" }
    if let file = response.downloadedFile {
      return "<file \(file.url.lastPathComponent), \(file.byteCount) bytes>"
    }
    guard !response.body.isEmpty else { return nil }
    return body(response.body, contentType: response.headers[.contentType])
  }

  /// A body as it may be logged: redacted text cut to the limit, or a size for binary data.
  private func body(_ data: Data, contentType: String?) -> String {
    // Bodies much larger than the limit are not scanned: only their size is logged.
    guard data.count <= max(maximumBodyBytes * 16, 65_536) else {
      return "<\(data.count) bytes, not logged>"
    }
    guard let text = String(data: data, encoding: .utf8),
      !text.unicodeScalars.contains(where: {
        $0.value < 0x20 && $0 != "\n" && $0 != "\r" && $0 != "\t"
      })
    else { return "<\(data.count) bytes binary>" }
    // A body whose shape the redaction cannot see into is not written: a secret in it could
    // not be found by name.
    guard let redacted = redaction.redactedBody(text, contentType: contentType) else {
      let media =
        contentType.flatMap { $0.split(separator: ";").first }
        .map { " " + $0.trimmingCharacters(in: .whitespaces) } ?? ""
      return "<\(data.count) bytes\(media), not logged: not JSON, a form or multipart>"
    }
    guard redacted.utf8.count > maximumBodyBytes else { return redacted }
    let cut = String(decoding: redacted.utf8.prefix(maximumBodyBytes), as: UTF8.self)
    return cut + "… (\(data.count) bytes)"
  }

  static func milliseconds(_ duration: Duration) -> String {
    String(format: "%.1f", duration.inSeconds * 1000)
  }
}

extension LoggingMiddleware: CustomStringConvertible {
  /// `LoggingMiddleware(basic; sink StandardErrorLogSink; redaction: 6 headers, 11 query
  /// parameters, 7 body keys; text bodies up to 4 KiB)`.
  public var description: String {
    let redacted =
      "\(redaction.headers.count) headers, \(redaction.queryParameters.count) query "
      + "parameters, \(redaction.bodyKeys.count) body keys"
    return "LoggingMiddleware(\(level); sink \(DescriptionText.typeName(of: sink)); redaction: "
      + "\(redacted); text bodies up to \(DescriptionText.bytes(maximumBodyBytes)))"
  }
}

/// Counts a streamed body's bytes as the reader takes them and logs the total and the whole
/// duration, from the request's start, when the body ends. Never logs the bytes.
private struct StreamEnd: ResponseBodyTransform {
  let sink: any LogSink
  var fields: [String: String]
  let started: ContinuousClock.Instant
  let message: String
  var bytes = 0

  init(
    sink: any LogSink, fields: [String: String], started: ContinuousClock.Instant, message: String
  ) {
    self.sink = sink
    self.fields = fields
    self.started = started
    self.message = message
  }

  mutating func transform(_ chunk: Data) throws(CourierError) -> Data {
    bytes += chunk.count
    return chunk
  }

  mutating func finish() throws(CourierError) -> Data {
    let elapsed = LoggingMiddleware.milliseconds(ContinuousClock.now - started)
    fields["response_bytes"] = String(bytes)
    fields["duration_ms"] = elapsed
    fields.removeValue(forKey: "response_body")
    let event = LogEvent(
      severity: .info, message: "\(message): \(bytes) bytes (\(elapsed) ms)", metadata: fields)
    if event.severity >= sink.logLevel { sink.log(event) }
    return Data()
  }
}
