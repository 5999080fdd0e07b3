internal import CCourierCurl
import CourierCore
internal import CourierLibcurlSupport
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One transfer in flight: its easy handle's settings and what libcurl's callbacks collect.
/// Created, used and released only under the event loop's engine lock (on the loop thread, or
/// on the caller's thread when the caller starts its own transfer); libcurl's callbacks
/// reach it through an unretained pointer while the loop's table owns it.
///
/// A request with a ``DownloadAttribute`` gets a ``DownloadWriter`` of its own, created,
/// used and closed here under the same lock: it adds `Range`/`If-Range` to the request sent,
/// decides at the final response head whether the body goes to the file (a `2xx`), takes each
/// piece libcurl hands the write callback, and is finished when the transfer completes or
/// abandoned (the partial file kept for a resume) when it fails, is cancelled or is shut down.
final class CurlTransfer {
  let ticket: CurlTicket
  /// The easy handle with its error buffer; the loop's, lent to this transfer.
  let handle: CurlEasyHandle
  let easy: UnsafeMutableRawPointer
  /// How long the request waited for its turn before this transfer began.
  private let waited: Duration

  private let limit: Int
  private var errorBuffer: UnsafeMutablePointer<CChar> { handle.errorBuffer }
  /// A copy of an in-memory request body: libcurl reads it in place (`CURLOPT_POSTFIELDS`) and
  /// rewinds it itself when it has to resend.
  private var bodyCopy: UnsafeMutableRawBufferPointer?
  /// The descriptor of a file request body, streamed by the read callback.
  private var file: Int32 = -1
  /// Why reading the file body stopped the transfer: a read error, or a file cut short while
  /// it was sent.
  private var fileFailure: String?
  /// A stream body's producer and buffer (`RequestBody.stream`), read by the read callback.
  private var bodyPump: CurlBodyPump?
  /// The read callback paused the transfer for want of stream body bytes, until
  /// ``resumeUpload()``.
  private var uploadPaused = false
  /// The read callback aborted the transfer: the stream body failed (``CurlBodyPump/failure``).
  private var bodyAborted = false

  private var body = Data()
  private var bodyStarted = false
  private var bodyTooLarge = false
  /// The request as sent: with `Range` and `If-Range` when a download resumes.
  private let sent: Request
  /// Writes a `2xx` body to the download's file; `nil` when the request is not a download.
  private let writer: DownloadWriter?
  /// The final response head chose the file: the body goes to ``writer``, not memory, and
  /// the body limit does not apply.
  private var writing = false
  /// The final response head was handled (progress, the writer's decision). A transfer that
  /// libcurl ends as a success without it got no complete head: the connection closed after
  /// the status line or a header line and before the blank line, which libcurl 7.88 reports
  /// as `CURLE_OK` (``complete(_:)`` makes it ``CourierError/Kind/connectionLost``).
  private var headHandled = false
  /// The server answered `101 Switching Protocols`: what follows is another protocol, which
  /// no Courier transport speaks; libcurl 7.88 would read it as a body until the connection
  /// closes (a WebSocket server keeps it open, so the request waited for its timeout).
  private var switchedProtocols = false
  /// Why the writer stopped the transfer (the file could not be written, a bad `206`).
  private var downloadFailure: CourierError?
  /// For a request with a ``ResponseStreamAttribute`` (and no download): how many bytes its
  /// body's stream buffers, and where its head goes when it arrives.
  private let streamBufferSize: Int?
  private let heads: CurlStreamHeads?
  /// The streamed body's writer, from a `2xx` head on: the body goes there, not to memory, and
  /// the body limit does not apply.
  private var streamWriter: ResponseBodyStream.Writer?
  /// The stream's buffer was full: libcurl was told to pause, and keeps what it has until
  /// ``resumeStream()``.
  private var streamPaused = false
  private let downloadProgress: TransferProgress?
  private let uploadProgress: TransferProgress?
  /// The transfer sends a request body: only then does its response complete an upload (a
  /// `303`'s `GET` hop sends none, and the body its first hop sent stays the upload's total).
  private var sendsBody = false
  /// The total the download progress expects, from the final response head.
  private var expectedLength: Int64?
  /// The final response's header lines, without CR LF, each followed by LF
  /// (``ReceivedHeaderLines``): only the header callback appends to it, under the engine lock.
  private var headerLines: [UInt8] = []
  /// The blank line after the final header block was seen: later header lines are chunked
  /// trailers, not headers.
  private var headersComplete = false
  /// The current response's `Content-Length` value, once one was seen.
  private var contentLength: ContentLengthValue?
  /// Why the response's `Content-Length` was refused and the transfer stopped: values that
  /// disagree, or one beyond what an `Int64` holds (``ContentLengthField``). RFC 9112 §6.3
  /// makes either an unrecoverable error, which libcurl (7.88) does not detect itself (it uses
  /// the last value, and reads a length it cannot hold as "until the close").
  private var refusedLength: String?
  /// The length of the request body, memory or file (a file's when the transfer started):
  /// what `Content-Length` says. `nil` without a body.
  private var requestBodyLength: Int64?
  /// Whether an answer that arrives whole before the request body is sent ends the transfer
  /// (``answeredEarly``): over the HTTP/2 opt-in, when libcurl does not decode the body (so
  /// the bytes received can be counted against `Content-Length`).
  private var endsOnEarlyAnswer = false
  /// The final response's `Content-Length`, when an early answer can end the transfer.
  private var earlyAnswerLength: Int64?
  /// The server sent its whole answer over HTTP/2 before the request body was sent, and the
  /// transfer was stopped then (the stream reset, the connection kept). libcurl 7.88 would
  /// otherwise wait for the rest of the upload until a timeout, and nginx, answering without
  /// reading (`return 200` to an 8 MiB `PUT`), never opens the flow-control window for it.
  /// RFC 9113 §8.1 allows such an answer; it is the response.
  private var answeredEarly = false
  /// The transport presents a client certificate, and sends over a Unix socket: what a
  /// failure's explanation says (``connectivityExplanation(code:detail:)``).
  private let presentsCertificate: Bool
  private let unixSocketPath: String?

  /// Configures `handle` (fresh, reset, or kept from a plain transfer) for `ticket`'s request.
  init(
    ticket: CurlTicket, handle: CurlEasyHandle, configuration: CurlTransport.Configuration,
    waited: Duration = .zero, heads: CurlStreamHeads? = nil
  ) throws(CourierError) {
    self.waited = waited
    self.ticket = ticket
    self.handle = handle
    self.easy = handle.easy
    self.limit = ticket.limits.maximumResponseBodySize
    presentsCertificate = configuration.tls.clientCertificate != nil
    unixSocketPath = configuration.unixSocketPath
    let writer = ticket.request.attributes[DownloadAttribute.self].map(DownloadWriter.init)
    self.writer = writer
    self.heads = heads
    streamBufferSize =
      heads == nil || writer != nil ? nil : ticket.request.attributes[ResponseStreamAttribute.self]
    sent = writer?.prepare(ticket.request) ?? ticket.request
    downloadProgress = ticket.request.attributes[DownloadProgressAttribute.self]
    uploadProgress = ticket.request.attributes[UploadProgressAttribute.self]
    do {
      try configure(configuration)
    } catch {
      release()
      throw error
    }
  }

  /// Sets every option of `sent`'s transfer on the handle: the shared ones when the handle
  /// does not hold them yet, then the URL, timeout, download settings, method, body, header
  /// lines and upload progress.
  private func configure(_ configuration: CurlTransport.Configuration) throws(CourierError) {
    let request = sent
    let context = Unmanaged.passUnretained(self).toOpaque()
    // Per transfer, not with the shared options: a kept handle skips those.
    endsOnEarlyAnswer =
      configuration.httpVersion.multiplexes && configuration.contentDecoding != .automatic
    if !handle.isConfigured {
      try configureShared(configuration)
      handle.isConfigured = true
    }
    try setURL(of: request)
    // Always set: a kept handle may hold the last request's timeout (0 is none).
    // What the request waited for a connection in the loop counts against its timeout. A
    // streamed body's limits are the loop's (``streamTimeout(at:)``): the timeout covers its
    // head, not a body that may never end.
    try set(
      CURLOPT_TIMEOUT_MS,
      streamBufferSize != nil ? 0 : request.timeout.map { Self.milliseconds($0 - waited) } ?? 0)
    if streamBufferSize != nil {
      let now = ContinuousClock.now
      headDeadline = request.timeout.map { now + ($0 - waited) }
      overallDeadline = request.attributes[DeadlineAttribute.self].map { now + $0.remaining }
      idleTimeout = request.attributes[StreamIdleTimeoutAttribute.self]
      lastByte = now
    }
    // A streamed body's connection is closed after it: with libcurl 7.88, the next transfer
    // on a connection whose transfer was paused got no socket callback for it, so the loop
    // took it for idle and dropped it under that transfer (StreamingTests).
    if let streamBufferSize {
      try set(CURLOPT_FORBID_REUSE, 1)
      // Larger reads for a large body (from libcurl's default of 16 KiB up to 100 KiB, see
      // `readSize`): fewer `recv` calls and turns of the loop per megabyte. libcurl still
      // hands them to the write callback 16 KiB at a time (`CURL_MAX_WRITE_SIZE`).
      try set(
        CURLOPT_BUFFERSIZE, ResponseBodyStream.readSize(bufferSize: streamBufferSize))
    }
    try set(CURLOPT_WRITEDATA, pointer: context)
    try set(CURLOPT_HEADERDATA, pointer: context)
    let decodesDownload = try configureDownload(configuration)
    let hasBody = try configureMethodAndBody(request, context: context)
    sendsBody = hasBody
    // A body, a method other than GET, progress: options the next transfer would not undo.
    if hasBody || request.method != .get { handle.needsReset = true }
    if let problem = RequestFraming.problem(
      in: request.headers, bodyLength: requestBodyLength,
      lengthUnknown: bodyPump != nil && requestBodyLength == nil)
    {
      throw CourierError(
        kind: .invalidRequest, debugMessage: problem, request: request, attempts: 1,
        stage: "transport")
    }
    try configureHeaders(
      request.headers, hasBody: hasBody,
      suppressesAcceptEncoding: decodesDownload && !request.headers.contains(.acceptEncoding))
    if hasBody, uploadProgress != nil { try configureUploadProgress(context: context) }
    // Last: a transfer that fails to configure reads nothing of the body's sequence.
    bodyPump?.start()
  }

  /// Sets `request`'s URL (`CURLOPT_URL`).
  private func setURL(of request: Request) throws(CourierError) {
    let urlSet = request.url.absoluteString.withCString {
      courier_curl_easy_setopt_pointer(easy, CURLOPT_URL, $0)
    }
    guard urlSet == CURLE_OK else {
      throw CurlErrorMapping.courierError(
        code: Int(urlSet), detail: "the URL was refused", request: request)
    }
  }

  /// A download's receive buffer and, unless libcurl decodes every body already, its
  /// decoding; `true` when the download is decoded here (the request then sends no
  /// `Accept-Encoding` of libcurl's unless it has its own). Nothing for other requests.
  private func configureDownload(
    _ configuration: CurlTransport.Configuration
  ) throws(CourierError) -> Bool {
    let decodesDownload = writer != nil && configuration.contentDecoding != .automatic
    if writer != nil {
      // Larger pieces for a body that goes to disk: fewer callbacks and copies per MiB.
      try set(CURLOPT_BUFFERSIZE, Self.downloadBufferSize)
      handle.needsReset = true
    }
    if decodesDownload {
      // A download never passes through GzipMiddleware's decoding in memory: libcurl decodes
      // its Content-Encoding into the file, as URLSession does, within DownloadWriter's
      // growth limit. The request's own Accept-Encoding is sent as it is; without one, none
      // (configureHeaders).
      try set(CURLOPT_HTTP_CONTENT_DECODING, 1)
      try set(CURLOPT_ACCEPT_ENCODING, string: "")
    }
    return decodesDownload
  }

  /// libcurl's progress callback, which reports the request body's bytes sent to
  /// ``sentBody(_:of:)``.
  private func configureUploadProgress(context: UnsafeMutableRawPointer) throws(CourierError) {
    try check(
      courier_curl_easy_setopt_xferinfo_callback(easy, CURLOPT_XFERINFOFUNCTION) {
        context, _, _, total, now in
        guard let context else { return 0 }
        Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
          .sentBody(now, of: total)
        return 0
      })
    try set(CURLOPT_XFERINFODATA, pointer: context)
    try set(CURLOPT_NOPROGRESS, 0)
  }

  /// The libcurl the process runs with, as `0xXXYYZZ`.
  static let libcurlVersion = courier_curl_version_num()

  /// Whether libcurl can start a transfer on an HTTP/2 connection made with prior knowledge
  /// by another transfer: from 8.0.0 (curl/curl#10634 broke it in 7.88).
  static var reusesPriorKnowledgeConnections: Bool { libcurlVersion >= 0x08_00_00 }

  /// How a transfer is kept to `http` and `https`: by name (`CURLOPT_PROTOCOLS_STR`) from
  /// libcurl 7.85, as a bitmask (`CURLOPT_PROTOCOLS`, which 7.85 deprecated) before.
  static func protocolRestriction(
    forVersion version: UInt32
  ) -> (option: CURLoption, names: String?, bits: Int) {
    version >= 0x07_55_00
      ? (CURLOPT_PROTOCOLS_STR, "http,https", 0)
      : (CURLOPT_PROTOCOLS, nil, CURLPROTO_HTTP | CURLPROTO_HTTPS)
  }

  /// The options every transfer of the transport shares; set once per easy handle and kept
  /// while the handle only runs plain transfers (``CurlEasyHandle``).
  private func configureShared(_ configuration: CurlTransport.Configuration) throws(CourierError) {
    try set(CURLOPT_ERRORBUFFER, pointer: UnsafeRawPointer(errorBuffer))
    try set(CURLOPT_NOSIGNAL, 1)
    let restriction = Self.protocolRestriction(forVersion: CurlTransfer.libcurlVersion)
    if let names = restriction.names {
      try set(restriction.option, string: names)
    } else {
      try set(restriction.option, restriction.bits)
    }
    if configuration.httpVersion == .http2PriorKnowledge, !Self.reusesPriorKnowledgeConnections {
      try set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE)
      // libcurl before 8.0 fails every transfer it starts on an h2c connection made by
      // another ("Error in the HTTP2 framing layer", curl/curl#10634): one connection per
      // request, made for it and closed after it.
      try set(CURLOPT_FRESH_CONNECT, 1)
      try set(CURLOPT_FORBID_REUSE, 1)
    } else if configuration.httpVersion.multiplexes {
      try set(
        CURLOPT_HTTP_VERSION,
        configuration.httpVersion == .http2
          ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE)
      // Requests that start together wait for the first connection's ALPN answer and then
      // share it as HTTP/2 streams, instead of each opening a TLS connection of its own, up to
      // the per-host limit.
      try set(CURLOPT_PIPEWAIT, 1)
    } else {
      try set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1)
    }
    try set(CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(configuration.connectTimeout))
    if let idle = configuration.idleTimeout {
      try set(CURLOPT_LOW_SPEED_LIMIT, 1)
      try set(CURLOPT_LOW_SPEED_TIME, max(1, (Self.milliseconds(idle) + 999) / 1_000))
    }
    if configuration.contentDecoding == .automatic {
      try set(CURLOPT_ACCEPT_ENCODING, string: "")
    } else {
      try set(CURLOPT_HTTP_CONTENT_DECODING, 0)
    }
    try configureProxy(configuration.proxy)
    if let path = configuration.tls.caBundlePath { try set(CURLOPT_CAINFO, string: path) }
    if let key = configuration.tls.pinnedPublicKey {
      try set(CURLOPT_PINNEDPUBLICKEY, string: key)
    }
    if let certificate = configuration.tls.clientCertificate {
      try configureClientCertificate(certificate)
    }
    if let path = configuration.unixSocketPath {
      try checkSocketPath(path)
      try set(CURLOPT_UNIX_SOCKET_PATH, string: path)
    }
    if !configuration.nameResolution.isSystem {
      try configureNameResolution(configuration.nameResolution)
    }
    try check(
      courier_curl_easy_setopt_write_callback(easy, CURLOPT_WRITEFUNCTION) {
        bytes, size, count, context in
        guard let bytes, let context else { return 0 }
        return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
          .receiveBody(UnsafeRawPointer(bytes), count: size * count)
      })
    try check(
      courier_curl_easy_setopt_write_callback(easy, CURLOPT_HEADERFUNCTION) {
        bytes, size, count, context in
        guard let bytes, let context else { return 0 }
        return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
          .receiveHeader(UnsafeRawPointer(bytes), count: size * count)
      })
    // A proxy's answer to CONNECT (`HTTP/1.1 200 Connection established`) is not the
    // response: kept out of the header callback, it can never be taken for the final head
    // that decides where a download's body goes.
    try set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
  }

  /// The client certificate and key, from files or memory, and the key's passphrase.
  private func configureClientCertificate(
    _ certificate: CurlTransport.TLS.ClientCertificate
  ) throws(CourierError) {
    try set(CURLOPT_SSLCERTTYPE, string: "PEM")
    switch certificate.certificate {
    case .file(let path): try set(CURLOPT_SSLCERT, string: path)
    case .memory(let pem): try setBlob(CURLOPT_SSLCERT_BLOB, pem, what: "certificate")
    }
    switch certificate.key {
    case .file(let path):
      try set(CURLOPT_SSLKEYTYPE, string: "PEM")
      try set(CURLOPT_SSLKEY, string: path)
    case .memory(let pem):
      try set(CURLOPT_SSLKEYTYPE, string: "PEM")
      try setBlob(CURLOPT_SSLKEY_BLOB, pem, what: "key")
    case nil: break
    }
    // libcurl copies the passphrase; it never reaches an error or a log of Courier's.
    if let passphrase = certificate.passphrase {
      try set(CURLOPT_KEYPASSWD, string: passphrase)
    }
  }

  /// Hands `bytes` to a `…_BLOB` option, which libcurl copies; an older libcurl than 7.71,
  /// which does not know the option, makes it ``CourierError/Kind/invalidRequest``.
  private func setBlob(_ option: CURLoption, _ bytes: Data, what: String) throws(CourierError) {
    let code = bytes.withUnsafeBytes {
      courier_curl_easy_setopt_blob(easy, option, $0.baseAddress, $0.count)
    }
    guard code != CURLE_UNKNOWN_OPTION else {
      throw CourierError(
        kind: .invalidRequest,
        debugMessage:
          "a client \(what) from memory needs libcurl 7.71 or later (CURLOPT_SSLCERT_BLOB); "
          + "this one is older: give the certificate as files",
        request: ticket.request, attempts: 1, stage: "transport")
    }
    try check(code)
  }

  /// Fixed addresses, the address family and the Happy Eyeballs delay.
  private func configureNameResolution(
    _ resolution: CurlTransport.NameResolution
  ) throws(CourierError) {
    if !resolution.overrides.isEmpty {
      let checked = handle.resolveList(for: resolution.overrides).flatMap { list in
        resolution.familyProblem().map { .failure($0) } ?? .success(list)
      }
      switch checked {
      case .success(let list): try set(CURLOPT_RESOLVE, pointer: UnsafeRawPointer(list))
      case .failure(let problem):
        throw CourierError(
          kind: .invalidRequest,
          debugMessage: "CurlTransport.NameResolution.overrides: \(problem.message)",
          request: ticket.request, attempts: 1, stage: "transport")
      }
    }
    if resolution.addressFamily != .any {
      try set(CURLOPT_IPRESOLVE, resolution.addressFamily.value)
    }
    if let delay = resolution.happyEyeballsDelay {
      try set(CURLOPT_HAPPY_EYEBALLS_TIMEOUT_MS, Self.milliseconds(delay))
    }
  }

  /// libcurl's receive buffer (`CURLOPT_BUFFERSIZE`) for downloads to a file: the most
  /// bytes one call of the write callback hands over (16 KiB by default).
  static let downloadBufferSize = 256 * 1024

  /// Sets the method and the body; `true` when a body is sent.
  private func configureMethodAndBody(
    _ request: Request, context: UnsafeMutableRawPointer
  ) throws(CourierError) -> Bool {
    let method = request.method.rawValue
    if method == "HEAD" {
      try set(CURLOPT_NOBODY, 1)
      return false
    }
    if let url = request.body.fileURL {
      try openFile(url, request: request)
      try set(CURLOPT_POST, 1)
      try check(
        courier_curl_easy_setopt_read_callback(easy, CURLOPT_READFUNCTION) {
          buffer, size, count, context in
          guard let buffer, let context else { return CURL_READFUNC_ABORT }
          return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
            .readFile(into: buffer, count: size * count)
        })
      try set(CURLOPT_READDATA, pointer: context)
      try check(
        courier_curl_easy_setopt_seek_callback(easy, CURLOPT_SEEKFUNCTION) {
          context, offset, origin in
          guard let context else { return CURL_SEEKFUNC_FAIL }
          return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
            .seekFile(to: offset, origin: origin)
        })
      try set(CURLOPT_SEEKDATA, pointer: context)
    } else if let data = request.body.data, !data.isEmpty {
      try setMemoryBody(data)
    } else if request.body.isStream {
      try setStreamBody(of: request, context: context)
    } else if method == "POST" || method == "PUT" || method == "PATCH" {
      // An empty body that is still a body: `Content-Length: 0`.
      try setMemoryBody(Data())
    } else {
      if method != "GET" { try set(CURLOPT_CUSTOMREQUEST, string: method) }
      return false
    }
    if method != "POST" { try set(CURLOPT_CUSTOMREQUEST, string: method) }
    return true
  }

  private func setMemoryBody(_ data: Data) throws(CourierError) {
    // At least one byte, so the pointer is never null: a null POSTFIELDS would make libcurl
    // read the body from stdin.
    let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, data.count), alignment: 1)
    data.copyBytes(to: copy.bindMemory(to: UInt8.self), count: data.count)
    bodyCopy = copy
    requestBodyLength = Int64(data.count)
    try set(CURLOPT_POST, 1)
    try check(
      courier_curl_easy_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(data.count)))
    try set(CURLOPT_POSTFIELDS, pointer: UnsafeRawPointer(copy.baseAddress))
  }

  /// A stream body (`RequestBody.stream`): read from its sequence while it is sent
  /// (``CurlBodyPump``), with its length as `Content-Length`, or chunked when it has none.
  /// The connection is closed after it, as after a streamed response: libcurl 7.88 lost the
  /// socket callbacks of the next transfer on a connection whose transfer had been paused.
  private func setStreamBody(
    of request: Request, context: UnsafeMutableRawPointer
  ) throws(CourierError) {
    let chunks: RequestBody.Chunks
    do {
      chunks = try request.body.makeChunks()
    } catch {
      var error = error
      error.request = request
      error.attempts = 1
      error.stage = "transport"
      throw error
    }
    guard let loop = ticket.loop else {
      throw CourierError(
        kind: .transport, debugMessage: "a stream body's transfer has no event loop",
        request: request, attempts: 1, stage: "transport")
    }
    let ticket = self.ticket
    bodyPump = CurlBodyPump(chunks: chunks) { loop.resumeUpload(ticket) }
    requestBodyLength = chunks.length
    try set(CURLOPT_POST, 1)
    // -1: no length, which libcurl sends chunked over HTTP/1.1.
    try check(
      courier_curl_easy_setopt_off_t(
        easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(chunks.length ?? -1)))
    try check(
      courier_curl_easy_setopt_read_callback(easy, CURLOPT_READFUNCTION) {
        buffer, size, count, context in
        guard let buffer, let context else { return CURL_READFUNC_ABORT }
        return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
          .readStream(into: buffer, count: size * count)
      })
    try set(CURLOPT_READDATA, pointer: context)
    try check(
      courier_curl_easy_setopt_seek_callback(easy, CURLOPT_SEEKFUNCTION) {
        context, offset, origin in
        guard let context else { return CURL_SEEKFUNC_FAIL }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
        return origin == SEEK_SET && transfer.bodyPump?.canRewind(to: Int64(offset)) == true
          ? CURL_SEEKFUNC_OK : CURL_SEEKFUNC_CANTSEEK
      })
    try set(CURLOPT_SEEKDATA, pointer: context)
    try set(CURLOPT_FORBID_REUSE, 1)
    // A fresh connection: libcurl resends a request whose reused connection turns out closed
    // (a keep-alive the server dropped as the request went out), which needs the body from
    // its start, and a sequence cannot be rewound.
    try set(CURLOPT_FRESH_CONNECT, 1)
  }

  private func openFile(_ url: URL, request: Request) throws(CourierError) {
    let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
    var info = stat()
    guard descriptor >= 0, fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG
    else {
      let reason = String(cString: strerror(errno))
      if descriptor >= 0 { close(descriptor) }
      throw CourierError(
        kind: .invalidRequest,
        debugMessage: "the file body \(url.lastPathComponent) cannot be read: "
          + ((descriptor >= 0) ? "not a regular file" : reason),
        request: request, attempts: 1, stage: "transport")
    }
    file = descriptor
    requestBodyLength = Int64(info.st_size)
    try check(
      courier_curl_easy_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(info.st_size)))
  }

  /// The request's fields as libcurl header lines. A name with several values is sent once,
  /// its values joined in order — `Cookie` with `"; "` (RFC 6265 §5.4), any other with `", "`
  /// (RFC 9110 §5.3) — as `URLSessionTransport` sends them. For bodies, libcurl's own `Expect:
  /// 100-continue` (a round trip of waiting before large bodies) and its default
  /// `Content-Type: application/x-www-form-urlencoded` are suppressed unless the request sets
  /// them.
  private func configureHeaders(
    _ headers: HTTPHeaders, hasBody: Bool, suppressesAcceptEncoding: Bool = false
  ) throws(CourierError) {
    // Straight from the fields into libcurl (which copies each line): no dictionary, no
    // intermediate strings, no copy of a field. Names repeat rarely and lists are short, so
    // a name's other values are found by scanning, and the scan compares a one-word summary
    // of each name (length, first and last byte, case folded) before it compares bytes, so
    // that fields of different names are rarely compared byte by byte.
    let fields = headers.fieldList
    // What goes in besides the fields (which decide the rest: Expect, Content-Type).
    let extras = (hasBody ? 1 : 0) | (suppressesAcceptEncoding ? 2 : 0)
    if let head = handle.headerList.reusable(for: fields, extras: extras) {
      try set(CURLOPT_HTTPHEADER, pointer: UnsafeRawPointer(head))
      return
    }
    handle.headerList.begin()
    try fields.withUnsafeBufferPointer { fields throws(CourierError) in
      try withUnsafeTemporaryAllocation(of: Int.self, capacity: fields.count) {
        keys throws(CourierError) in
        for index in fields.indices { keys[index] = Self.nameKey(fields[index].name.rawName) }
        for index in fields.indices {
          try appendFieldLine(index, of: fields, keys: UnsafeBufferPointer(keys))
        }
      }
    }
    if hasBody, headers["Expect"] == nil { try appendHeaderLine("Expect:") }
    if hasBody, !headers.contains(.contentType) { try appendHeaderLine("Content-Type:") }
    // "Name:" removes libcurl's own field: the one CURLOPT_ACCEPT_ENCODING would add.
    if suppressesAcceptEncoding { try appendHeaderLine("Accept-Encoding:") }
    if let head = handle.headerList.finish(from: fields, extras: extras) {
      try set(CURLOPT_HTTPHEADER, pointer: UnsafeRawPointer(head))
    }
  }

  /// Adds the header line of field `index` of `fields`, its value followed by those of the
  /// later fields of its name; nothing when an earlier field has its name (that field's line
  /// holds every value). `keys` holds each field's ``nameKey(_:)``.
  private func appendFieldLine(
    _ index: Int, of fields: UnsafeBufferPointer<HTTPHeaders.Field>,
    keys: UnsafeBufferPointer<Int>
  ) throws(CourierError) {
    /// Whether field `other` has this field's name.
    func sameName(_ other: Int) -> Bool {
      keys[other] == keys[index] && fields[other].name == fields[index].name
    }
    // A name seen earlier was sent with all its values already.
    if (0..<index).contains(where: sameName) { return }
    let name = fields[index].name
    let separator = name == .cookie ? "; " : ", "
    var repeats = false
    var length = name.rawName.utf8.count + 2 + fields[index].value.utf8.count
    for later in (index + 1)..<fields.count where sameName(later) {
      repeats = true
      length += separator.utf8.count + fields[later].value.utf8.count
    }
    // "Name:" would remove libcurl's own header of that name; "Name;" sends it empty.
    let empty = !repeats && fields[index].value.isEmpty
    try withUnsafeTemporaryAllocation(of: CChar.self, capacity: length + 1) {
      line throws(CourierError) in
      var end = Self.write(name.rawName, into: line, at: 0)
      end = Self.write(empty ? ";" : ": ", into: line, at: end)
      end = Self.write(fields[index].value, into: line, at: end)
      if repeats {
        for later in (index + 1)..<fields.count where sameName(later) {
          end = Self.write(separator, into: line, at: end)
          end = Self.write(fields[later].value, into: line, at: end)
        }
      }
      line[end] = 0
      try appendHeaderLine(UnsafePointer(line.baseAddress))
    }
  }

  /// A summary of a header name that equal names (ignoring case) share: its length and its
  /// first and last bytes, case folded. Different summaries mean different names.
  private static func nameKey(_ name: String) -> Int {
    // From the bytes in place when the string has them: `last` on the UTF-8 view is a call
    // into Foundation's generic copy of it.
    name.utf8.withContiguousStorageIfAvailable(nameKey) ?? nameKey(name.utf8)
  }

  /// ``nameKey(_:)`` of a name's UTF-8 bytes.
  private static func nameKey<Bytes: BidirectionalCollection<UInt8>>(_ bytes: Bytes) -> Int {
    guard let first = bytes.first, let last = bytes.last else { return 0 }
    return bytes.count << 16 | Int(ASCII.lowercased(first)) << 8 | Int(ASCII.lowercased(last))
  }

  /// Copies `text`'s UTF-8 bytes into `buffer` from `offset`; returns the offset after them.
  private static func write(
    _ text: String, into buffer: UnsafeMutableBufferPointer<CChar>, at offset: Int
  ) -> Int {
    let count = text.utf8.count
    let copied = text.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
      guard let source = bytes.baseAddress, let target = buffer.baseAddress else { return true }
      UnsafeMutableRawPointer(target + offset).copyMemory(from: source, byteCount: count)
      return true
    }
    if copied == nil {
      var end = offset
      for byte in text.utf8 {
        buffer[end] = CChar(bitPattern: byte)
        end += 1
      }
    }
    return offset + count
  }

  /// Adds one line to the transfer's header list (the handle's, ``CurlHeaderList``).
  private func appendHeaderLine(_ line: UnsafePointer<CChar>?) throws(CourierError) {
    guard let line, handle.headerList.append(line) else {
      throw CourierError(
        kind: .transport, debugMessage: "curl_slist_append failed", request: ticket.request,
        attempts: 1, stage: "transport")
    }
  }

  // MARK: Callbacks (under the engine lock, mostly on the loop thread)

  private func receiveBody(_ bytes: UnsafeRawPointer, count: Int) -> Int {
    if writing, let writer {
      // A download: to the file, never memory, and not limited by the body limit.
      do throws(CourierError) {
        try writer.write(UnsafeRawBufferPointer(start: bytes, count: count))
      } catch {
        // Any count but the one given aborts the transfer.
        downloadFailure = error
        return 0
      }
      downloadProgress?.update(completed: writer.written, expected: writer.expected)
      return count
    }
    if let streamWriter { return stream(bytes, count: count, to: streamWriter) }
    if !bodyStarted {
      bodyStarted = true
      var length: curl_off_t = -1
      if courier_curl_easy_getinfo_off_t(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length)
        == CURLE_OK, length > 0, length <= limit
      {
        body.reserveCapacity(Int(length))
      }
    }
    guard body.count + count <= limit else {
      // Any count but the one given aborts the transfer (CURLE_WRITE_ERROR): memory never
      // grows past the limit, however large or compressed the body is.
      bodyTooLarge = true
      return 0
    }
    body.append(bytes.assumingMemoryBound(to: UInt8.self), count: count)
    downloadProgress?.update(completed: Int64(body.count), expected: expectedLength)
    if let earlyAnswerLength, Int64(body.count) >= earlyAnswerLength, uploadUnfinished() {
      // Any count but the one given stops the transfer; ``complete(_:)`` answers with the
      // response, whole.
      answeredEarly = true
      return 0
    }
    return count
  }

  /// Hands a piece of a streamed body to its reader; pauses the transfer (libcurl keeps the
  /// piece and hands it again on ``resumeStream()``) while the stream's buffer is full, and
  /// aborts it when the reader has stopped.
  private func stream(
    _ bytes: UnsafeRawPointer, count: Int, to streamWriter: ResponseBodyStream.Writer
  ) -> Int {
    if streamPaused { return CURL_WRITEFUNC_PAUSE }
    // Any count but the one given aborts the transfer; the reader's stop also removes it.
    guard !streamWriter.isTerminated else { return 0 }
    let (room, needsFlush) = streamWriter.append(UnsafeRawBufferPointer(start: bytes, count: count))
    if !room { streamPaused = true }
    if needsFlush { heads?.flushes.append(streamWriter) }
    received += Int64(count)
    lastByte = .now
    downloadProgress?.update(completed: received, expected: expectedLength)
    return count
  }

  /// Whether the transfer's body went to a stream.
  var streamed: Bool { streamBufferSize != nil }

  /// The bytes of a streamed body handed to its reader.
  private var received: Int64 = 0
  /// A streamed body's limits, kept by the loop instead of libcurl: when its head must have
  /// arrived (the request's timeout), when the whole transfer must have ended (its overall
  /// deadline), and how long the server may stay silent once the head is in.
  private var headDeadline: ContinuousClock.Instant?
  private var overallDeadline: ContinuousClock.Instant?
  private var idleTimeout: Duration?
  /// When the streamed body last received a byte (or its head, or went on after a pause).
  private var lastByte = ContinuousClock.now

  /// Whether the streamed transfer has a limit the loop must check.
  var hasStreamLimits: Bool { headDeadline != nil || overallDeadline != nil || idleTimeout != nil }

  /// The error for a streamed transfer past one of its limits at `now`, or `nil`.
  func streamTimeout(at now: ContinuousClock.Instant) -> CourierError? {
    guard streamBufferSize != nil else { return nil }
    return streamLimitPassed(at: now).map { withTimings($0) }
  }

  /// The limit of a streamed transfer that passed at `now`, or `nil`.
  private func streamLimitPassed(at now: ContinuousClock.Instant) -> CourierError? {
    let request = ticket.request
    func timedOut(_ message: String) -> CourierError {
      CourierError(
        kind: .timedOut, debugMessage: message, request: request, attempts: 1,
        stage: "transport")
    }
    if let overallDeadline, now >= overallDeadline {
      return .streamDeadlinePassed(request: request)
    }
    if !headHandled, let headDeadline, now >= headDeadline {
      return timedOut(
        "no response head within the request's timeout (\(request.timeout ?? .zero))")
    }
    if headHandled, !streamPaused, let idleTimeout, now - lastByte >= idleTimeout {
      return .streamIdle(idleTimeout, request: request)
    }
    return nil
  }

  /// Lets a transfer paused by its full stream go on: libcurl hands the piece it kept to the
  /// write callback again, from this call.
  func resumeStream() {
    guard streamPaused else { return }
    streamPaused = false
    // The server's silence counts from here: the pause was the reader's.
    lastByte = .now
    _ = courier_curl_easy_pause(easy, uploadPaused ? CURLPAUSE_SEND : CURLPAUSE_CONT)
  }

  /// Ends a streamed body with the transfer's outcome: the reader gets the end, or the error
  /// (a connection lost in mid-body, a cancellation, the shutdown). Not here, under the
  /// engine lock, but when the loop finishes the ticket, once the lock is released
  /// (``CurlTicket/endStreamAtFinish(_:failure:)``).
  func endStream(with result: borrowing Result<Response, CourierError>) {
    guard let streamWriter else { return }
    switch result {
    case .success:
      // Before the stream ends: its end is what completes the request's progress.
      downloadProgress?.completeAttempt(total: received)
      ticket.endStreamAtFinish(streamWriter, failure: nil)
    case .failure(let error): ticket.endStreamAtFinish(streamWriter, failure: error)
    }
    self.streamWriter = nil
  }

  /// Whether less of the request body has gone out than it holds.
  private func uploadUnfinished() -> Bool {
    guard let requestBodyLength else { return false }
    var sent: curl_off_t = 0
    _ = courier_curl_easy_getinfo_off_t(easy, CURLINFO_SIZE_UPLOAD_T, &sent)
    return Int64(sent) < requestBodyLength
  }

  /// At the final response head, with a request body still going out over HTTP/2: the
  /// answer's length, so that ``receiveBody(_:count:)`` can end the transfer when it has all
  /// arrived; or `false` (stop now) when the answer has no body to wait for.
  private func watchForEarlyAnswer(status: Int) -> Bool {
    guard endsOnEarlyAnswer, writer == nil, uploadUnfinished() else { return true }
    var version = 0
    _ = courier_curl_easy_getinfo_long(easy, CURLINFO_HTTP_VERSION, &version)
    guard version == CURL_HTTP_VERSION_2_0 else { return true }
    var length: curl_off_t = -1
    guard
      courier_curl_easy_getinfo_off_t(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length)
        == CURLE_OK, length >= 0
    else { return true }
    if length == 0 || status == 204 || status == 304 {
      answeredEarly = true
      return false
    }
    earlyAnswerLength = Int64(length)
    return true
  }

  /// The blank line after a header block: when it ends the final response's head (a status
  /// of 200 or more, not an interim `1xx`), the upload is complete, and a download's writer
  /// decides whether the body goes to its file. `false` aborts the transfer.
  private func receivedHead() -> Bool {
    guard !headHandled else { return true }
    var status = 0
    _ = courier_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
    if status == 101 {
      switchedProtocols = true
      return false
    }
    guard status >= 200 else { return true }
    headHandled = true
    // libcurl 7.88 stops sending at a final answer of 300 or more but keeps the transfer
    // paused, so one paused for want of stream body bytes would never end: let it go on.
    if uploadPaused, let loop = ticket.loop { loop.resumeUpload(ticket) }
    if let uploadProgress, sendsBody {
      var sent: curl_off_t = 0
      _ = courier_curl_easy_getinfo_off_t(easy, CURLINFO_SIZE_UPLOAD_T, &sent)
      uploadProgress.completeAttempt(total: bodyBytes(sent: sent))
    }
    guard watchForEarlyAnswer(status: status) else { return false }
    if let streamBufferSize, (200..<300).contains(status) { beginStream(status, streamBufferSize) }
    guard writer != nil || downloadProgress != nil else { return true }
    let lines = headerLines
    let headers = HTTPHeaders(receivedLines: lines)
    if let writer {
      do throws(CourierError) {
        writing = try writer.begin(status: status, headers: headers, request: ticket.request)
      } catch {
        downloadFailure = error
        return false
      }
    }
    if let downloadProgress {
      if writing {
        expectedLength = writer?.expected
      } else {
        // The decoded length, when the body is not encoded (libcurl may decode it).
        let encoded = headers["Content-Encoding"].map { $0.lowercased() != "identity" } ?? false
        var length: curl_off_t = -1
        if !encoded,
          courier_curl_easy_getinfo_off_t(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length)
            == CURLE_OK, length >= 0
        {
          expectedLength = Int64(length)
        }
      }
      downloadProgress.update(completed: writer?.written ?? 0, expected: expectedLength)
    }
    return true
  }

  /// At a `2xx` head of a streamed request: makes the body's stream and hands the head, with
  /// it, to the caller (through ``heads``, when libcurl's call returns).
  private func beginStream(_ status: Int, _ bufferSize: Int) {
    guard let heads, let loop = ticket.loop else { return }
    let ticket = ticket
    let (stream, writer) = ResponseBodyStream.makeStream(
      bufferSize: bufferSize,
      onDemand: { loop.resumeStream(ticket) },
      onTermination: { if !ticket.isCancelled { loop.cancel(ticket) } })
    streamWriter = writer
    lastByte = .now
    // The body is complete, for the timings, once its head is in: it goes on as the stream.
    var head = Response(
      status: status, headers: HTTPHeaders(receivedLines: headerLines), request: ticket.request,
      timings: timings(complete: true))
    head.bodyStream = stream
    heads.arrived.append((ticket, head))
  }

  /// libcurl's progress callback, set only for a request body with upload progress.
  private func sentBody(_ now: curl_off_t, of total: curl_off_t) {
    guard !headHandled, let uploadProgress else { return }
    uploadProgress.update(completed: bodyBytes(sent: now), expected: total > 0 ? Int64(total) : nil)
  }

  /// The request body's bytes among the `sent` bytes libcurl counts: for a stream body sent
  /// chunked these include the chunks' framing, so no more than its sequence produced.
  private func bodyBytes(sent: curl_off_t) -> Int64 {
    guard let bodyPump else { return Int64(sent) }
    return min(Int64(sent), bodyPump.delivered)
  }

  private func receiveHeader(_ bytes: UnsafeRawPointer, count: Int) -> Int {
    let line = UnsafeRawBufferPointer(start: bytes, count: count)
    if count >= 5, line[0] == UInt8(ascii: "H"), line[1] == UInt8(ascii: "T"),
      line[2] == UInt8(ascii: "T"), line[3] == UInt8(ascii: "P"), line[4] == UInt8(ascii: "/")
    {
      // A new response: an interim 1xx (or an earlier hop) is forgotten.
      headerLines.removeAll(keepingCapacity: true)
      headersComplete = false
      contentLength = nil
      return count
    }
    var end = line.count
    while end > 0, line[end - 1] == 0x0A || line[end - 1] == 0x0D { end -= 1 }
    if end == 0 {
      guard !headersComplete else { return count }
      headersComplete = true
      return receivedHead() ? count : 0
    }
    guard !headersComplete else { return count }
    if let refusal = refusedContentLength(UnsafeRawBufferPointer(rebasing: line[0..<end])) {
      // Any count but the one given aborts the transfer (CURLE_WRITE_ERROR).
      refusedLength = refusal
      return 0
    }
    // Room for a usual head at once, rather than growing it line by line (a `malloc` each
    // time the array doubles).
    if headerLines.capacity == 0 { headerLines.reserveCapacity(Self.headCapacity) }
    headerLines.append(contentsOf: line[0..<end])
    headerLines.append(0x0A)
    return count
  }

  /// The bytes first set aside for the response's header lines: most heads fit.
  static let headCapacity = 512

  /// Why `line`, if it is a `Content-Length` field, is refused, or `nil`: a value other than
  /// the one seen so far (a list such as `5, 5` counts as its values) is a conflict, and so
  /// is a value beyond `Int64`. Read byte by byte: it runs for every header line, under the
  /// engine lock.
  private func refusedContentLength(_ line: UnsafeRawBufferPointer) -> String? {
    guard let valueStart = ReceivedHeaderLines.valueStart(in: line, named: "Content-Length")
    else { return nil }
    // The items between commas, walked in place (`split` built an array for every response).
    var itemStart = valueStart
    while itemStart <= line.endIndex {
      let itemEnd = line[itemStart...].firstIndex(of: UInt8(ascii: ",")) ?? line.endIndex
      if let value = ContentLengthValue(line[itemStart..<itemEnd]) {
        if case .text = value, ContentLengthField.exceedsInt64(line[itemStart..<itemEnd]) {
          return ContentLengthField.beyondInt64Message
        }
        if let contentLength, contentLength != value {
          return "the response has Content-Length fields that disagree (RFC 9112 §6.3)"
        }
        contentLength = value
      }
      itemStart = itemEnd + 1
    }
    return nil
  }

  private func readFile(into buffer: UnsafeMutablePointer<CChar>, count: Int) -> Int {
    let read = read(file, buffer, count)
    guard read >= 0 else {
      fileFailure = "the file body could not be read: \(String(cString: strerror(errno)))"
      return CURL_READFUNC_ABORT
    }
    // libcurl stops asking once it has the length it sent as `Content-Length`, so an end of
    // file before that means the file was cut short while it was sent. Left to libcurl, the
    // upload would end there and the server would wait for the rest until a timeout.
    if read == 0, let length = requestBodyLength,
      case let offset = Int64(lseek(file, 0, SEEK_CUR)), offset < length
    {
      fileFailure =
        "the file body was cut short while it was sent: it had \(length) bytes when the "
        + "request started (its Content-Length), and it ended after \(max(0, offset))"
      return CURL_READFUNC_ABORT
    }
    return read
  }

  /// The read callback of a stream body: what the pump has, a pause when it has nothing yet,
  /// or an abort when the body failed.
  private func readStream(into buffer: UnsafeMutablePointer<CChar>, count: Int) -> Int {
    guard let bodyPump else { return CURL_READFUNC_ABORT }
    switch bodyPump.read(into: UnsafeMutableRawPointer(buffer), count: count) {
    case .bytes(let count): return count
    case .pause:
      uploadPaused = true
      return CURL_READFUNC_PAUSE
    case .abort:
      bodyAborted = true
      return CURL_READFUNC_ABORT
    }
  }

  /// Lets a transfer paused for want of stream body bytes go on (its pump has some now, or
  /// the body ended): libcurl calls the read callback again. A response stream that is
  /// paused stays paused.
  func resumeUpload() {
    guard uploadPaused else { return }
    uploadPaused = false
    _ = courier_curl_easy_pause(easy, streamPaused ? CURLPAUSE_RECV : CURLPAUSE_CONT)
  }

  private func seekFile(to offset: curl_off_t, origin: Int32) -> Int32 {
    lseek(file, off_t(offset), origin) < 0 ? CURL_SEEKFUNC_FAIL : CURL_SEEKFUNC_OK
  }

  // MARK: Completion

  /// The response, or the error, for libcurl's result `code`.
  ///
  /// Either carries the transfer's ``Response/Timings``: the body's completion only with the
  /// response.
  func complete(_ code: CURLcode) -> Result<Response, CourierError> {
    if code == CURLE_OK && !headHandled && !answeredEarly {
      return .failure(
        withTimings(
          CourierError(
            kind: .connectionLost,
            debugMessage:
              "the connection closed before the response head ended (\(headerLines.count) "
              + "bytes of header lines after the status line, no blank line)",
            request: ticket.request, attempts: 1, stage: "transport")))
    }
    if code == CURLE_OK || answeredEarly { return receivedResponse() }
    return .failure(withTimings(stopFailure() ?? libcurlFailure(code)))
  }

  /// The connections libcurl opened for this transfer, once read (``connectionsOpened()``).
  private var openedConnections: Int?

  /// The transfer's phases so far (``CurlTimes``); `complete` when its body is in.
  func timings(complete: Bool) -> Response.Timings {
    CurlTimes(of: handle, connectionsOpened: connectionsOpened())
      .timings(secure: ticket.isSecure, complete: complete, unixSocketPath: unixSocketPath)
  }

  /// `error` with the phases the transfer reached (``timings(complete:)``).
  func withTimings(_ error: consuming CourierError) -> CourierError {
    var error = error
    error.timings = timings(complete: false)
    return error
  }

  /// The response received, with a download's file finished; the error when finishing the
  /// file failed.
  private func receivedResponse() -> Result<Response, CourierError> {
    let request = ticket.request
    var status = 0
    _ = courier_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
    let lines = headerLines
    var response = Response(
      status: status,
      headers: HTTPHeaders(receivedLines: lines),
      body: body, request: request, timings: timings(complete: true))
    if writing, let writer {
      do throws(CourierError) {
        response.downloadedFile = try writer.finish()
      } catch {
        var error = error
        error.request = request
        error.timings = response.timings
        return .failure(error)
      }
    }
    return .success(response)
  }

  /// Why a callback stopped the transfer (the download's writer, a switch of protocols, a
  /// refused `Content-Length`, the body limit), or `nil` when none did.
  private func stopFailure() -> CourierError? {
    let request = ticket.request
    if var downloadFailure {
      downloadFailure.request = request
      return downloadFailure
    }
    if switchedProtocols {
      return CourierError(
        kind: .badResponse,
        debugMessage:
          "the server switched protocols (101 Switching Protocols); CurlTransport speaks "
          + "only HTTP, so the transfer was aborted",
        request: request, attempts: 1, stage: "transport")
    }
    if let refusedLength {
      return CourierError(
        kind: .badResponse, debugMessage: refusedLength + "; the transfer was aborted",
        request: request, attempts: 1, stage: "transport")
    }
    if bodyTooLarge {
      return CourierError(
        kind: .bodyTooLarge,
        debugMessage: "the response body passed CurlTransport's limit of "
          + "\(DescriptionText.bytes(limit)); the transfer was aborted",
        request: request, attempts: 1, stage: "transport")
    }
    return nil
  }

  /// libcurl's error `code` with the detail of the handle's error buffer; a failure of the
  /// file body's read callback makes it ``CourierError/Kind/invalidRequest``, and a stream
  /// body's failure (its sequence threw, or did not keep its length) is the error.
  private func libcurlFailure(_ code: CURLcode) -> CourierError {
    let detail = String(cString: errorBuffer)
    var error = CurlErrorMapping.courierError(
      code: Int(code), detail: detail, request: ticket.request)
    if let fileFailure {
      error.kind = .invalidRequest
      error.debugMessage = fileFailure + "; the transfer was aborted (\(error.debugMessage))"
    } else if let explanation = connectivityExplanation(code: Int(code), detail: detail) {
      error.debugMessage = explanation + " (\(error.debugMessage))"
    }
    if bodyAborted, var failure = bodyPump?.failure {
      failure.request = ticket.request
      failure.attempts = 1
      failure.stage = "transport"
      failure.debugMessage += "; the transfer was aborted (\(error.debugMessage))"
      return failure
    }
    return error
  }

  /// Words for a developer when a failure comes from the transport's connectivity settings:
  /// the client certificate (missing, refused, or not loadable) or the Unix socket (missing,
  /// or nobody listening); `nil` otherwise. Only ever runs for a failed transfer.
  private func connectivityExplanation(code: Int, detail: String) -> String? {
    switch code {
    case 35, 56:
      return LibcurlDetail.clientCertificateRefusal(detail, presented: presentsCertificate)
    case 58 where presentsCertificate:
      return "the client certificate or its key could not be used: a file that cannot be read, "
        + "not PEM, a key that does not decrypt with the passphrase given (or needs one), or a "
        + "key that does not belong to the certificate"
    case 7:
      guard let path = unixSocketPath else { return nil }
      var info = stat()
      if stat(path, &info) != 0 {
        return "the Unix socket \(path) does not exist: \(String(cString: strerror(errno)))"
      }
      if (info.st_mode & S_IFMT) != S_IFSOCK { return "\(path) is not a Unix socket" }
      return "nobody accepts connections on the Unix socket \(path)"
    default:
      return nil
    }
  }

  /// How many connections libcurl opened for this transfer.
  func connectionsOpened() -> Int {
    if let openedConnections { return openedConnections }
    var count = 0
    _ = courier_curl_easy_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &count)
    openedConnections = count
    return count
  }

  /// Frees what the transfer allocated and closes its files; the easy handle is the loop's.
  ///
  /// A download's file is still open here only when the transfer did not complete (an
  /// error, a cancellation, the transport's shutdown): it is abandoned, kept with its
  /// validator in the temporary place for a resume. After ``complete(_:)`` finished it, this
  /// does nothing.
  func release() {
    writer?.abandon()
    bodyPump?.stop()
    bodyCopy?.deallocate()
    bodyCopy = nil
    if file >= 0 {
      close(file)
      file = -1
    }
  }

  deinit {
    release()
  }

  // MARK: Options

  /// The proxy options. Nothing for the environment's proxy: libcurl reads the variables
  /// itself when no proxy is set. An empty `CURLOPT_PROXY` turns them off; a named proxy's
  /// bypass list always replaces `NO_PROXY` (an empty list bypasses nothing).
  private func configureProxy(_ policy: CurlTransport.ProxyPolicy) throws(CourierError) {
    switch policy.choice {
    case .environment: return
    case .direct: try set(CURLOPT_PROXY, string: "")
    case .proxy(let proxy):
      // libcurl reads a bad port as a proxy it cannot resolve, and a host with `@` or `/`
      // as another proxy URL: refused here, as the caller's mistake.
      if let problem = proxy.addressProblem {
        throw CourierError(
          kind: .invalidRequest, debugMessage: problem, request: ticket.request, attempts: 1,
          stage: "transport")
      }
      try set(CURLOPT_PROXY, string: proxy.curlAddress)
      try set(CURLOPT_PROXYTYPE, proxy.kind.curlType)
      try set(CURLOPT_NOPROXY, string: proxy.curlBypass)
      if let username = proxy.username { try set(CURLOPT_PROXYUSERNAME, string: username) }
      if let password = proxy.password { try set(CURLOPT_PROXYPASSWORD, string: password) }
    }
  }

  private func set(_ option: CURLoption, _ value: Int) throws(CourierError) {
    try check(courier_curl_easy_setopt_long(easy, option, value))
  }

  private func set(_ option: CURLoption, pointer: UnsafeRawPointer?) throws(CourierError) {
    try check(courier_curl_easy_setopt_pointer(easy, option, pointer))
  }

  /// libcurl copies string options (since 7.17), so a temporary C string is enough. A value
  /// holding a NUL byte is refused: libcurl would read only the part before it, a password or
  /// a path cut short without a word. The value is not repeated (it may be a secret).
  private func set(_ option: CURLoption, string: String) throws(CourierError) {
    guard !string.utf8.contains(0) else {
      throw CourierError(
        kind: .invalidRequest,
        debugMessage: "\(Self.settingName(option)) holds a NUL byte; libcurl would read only the "
          + "part before it, so the request was not sent (the value is not shown)",
        request: ticket.request, attempts: 1, stage: "transport")
    }
    try check(string.withCString { courier_curl_easy_setopt_pointer(easy, option, $0) })
  }

  /// The setting of ``CurlTransport/Configuration`` (or of the request) a string option
  /// comes from, for an error that names it.
  private static func settingName(_ option: CURLoption) -> String {
    switch option {
    case CURLOPT_PROXYUSERNAME: "the proxy's username"
    case CURLOPT_PROXYPASSWORD: "the proxy's password"
    case CURLOPT_NOPROXY: "the proxy's bypass list"
    case CURLOPT_UNIX_SOCKET_PATH: "unixSocketPath"
    case CURLOPT_CAINFO: "tls.caBundlePath"
    case CURLOPT_PINNEDPUBLICKEY: "tls.pinnedPublicKey"
    case CURLOPT_KEYPASSWD: "the client key's passphrase"
    case CURLOPT_SSLCERT, CURLOPT_SSLKEY: "a client certificate or key path"
    default: "a setting given to libcurl (option \(option))"
    }
  }

  /// Refuses a Unix socket path the kernel cannot hold: empty, or longer than a socket
  /// address's 107 bytes (libcurl would fail it as a host it cannot resolve).
  private func checkSocketPath(_ path: String) throws(CourierError) {
    let length = path.utf8.count
    guard length == 0 || length > 107 else { return }
    throw CourierError(
      kind: .invalidRequest,
      debugMessage: length == 0
        ? "unixSocketPath is empty; set nil to connect over TCP"
        : "unixSocketPath is \(length) bytes long; a Unix socket address holds at most 107",
      request: ticket.request, attempts: 1, stage: "transport")
  }

  private func check(_ code: CURLcode) throws(CourierError) {
    guard code == CURLE_OK else {
      throw CurlErrorMapping.courierError(
        code: Int(code), detail: "curl_easy_setopt failed", request: ticket.request)
    }
  }

  private static func milliseconds(_ duration: Duration) -> Int {
    let nanoseconds = duration.clampedNanoseconds
    let whole = nanoseconds / 1_000_000 + (nanoseconds % 1_000_000 > 0 ? 1 : 0)
    return Int(min(max(whole, 1), Int64(Int32.max)))
  }
}
