import CourierCore
import Foundation

/// Compresses request bodies and decodes gzip and deflate responses, next to the wire.
///
/// ## Requests
/// Request compression is opt-in (``RequestCompression/disabled`` by default, since many
/// servers reject compressed bodies): turn it on for the client with
/// ``RequestCompression/enabled(threshold:level:)`` or per endpoint with
/// `Endpoint.compressRequestBody()`. A body is compressed with gzip only when it is held in
/// memory, is at least the threshold (1 KiB by default), has no `Content-Encoding` yet, is not
/// an already-compressed format (by `Content-Type`: images, audio, video, archives; and by
/// signature: gzip, zip, PNG, JPEG, GIF, WebP, zstd, xz, bzip2, 7z, RAR) and gets smaller.
/// The request then carries `Content-Encoding: gzip` and the compressed `Content-Length`.
/// File bodies (`RequestBody.file`) are sent as they are: compressing them would mean reading
/// the whole file into memory, which is what a file body exists to avoid.
///
/// A request without `Accept-Encoding` gets `Accept-Encoding: gzip, deflate`, unless
/// ``addsAcceptEncoding`` is off (to leave the header to a transport that sets its own).
///
/// ## Responses
/// A response is decoded only when its `Content-Encoding` is `gzip`, `x-gzip` or `deflate`
/// **and** its bytes are still encoded — the gzip magic `1f 8b 08`, or for `deflate` a valid
/// zlib header or a complete raw deflate stream — because URLSession on Linux decodes by itself
/// but leaves `Content-Encoding` and the compressed `Content-Length` in place, and some
/// servers label plain bodies. A `Content-Length` that differs from the body's size also means
/// the transport decoded already, so a `.gz` file served with `Content-Encoding: gzip` is not
/// unpacked twice. Either way the headers are made true afterwards: `Content-Encoding` is
/// removed and `Content-Length` is the body's size. A gzip body without a `Content-Encoding`
/// (a `.tar.gz` download) is left alone. Stacked codings (`Content-Encoding: deflate, gzip`)
/// are undone last first, up to ``maximumCodings``, each layer only while its bytes are still
/// encoded; a list naming any coding this middleware does not know is left as it came.
///
/// Decoding is bounded by ``ResponseDecompression/limit`` (32 MiB, 100× past 1 MiB by
/// default): passing it fails with ``CourierError/Kind/bodyTooLarge``; a truncated or corrupt
/// body fails with ``CourierError/Kind/corruptBody``.
///
/// The endpoint's response checks (status, envelope) run on the decoded body: this middleware
/// says it decodes response bodies (``decodesResponseBodies``), so the client runs its
/// `ResponseValidation` just outside it. If you place a `ResponseValidation` yourself, place
/// it outside this middleware too.
///
/// ```swift
/// let client = Client(
///   baseURL: base, transport: URLSessionTransport(),
///   middleware: [
///     GzipMiddleware(requestCompression: .enabled(), responseDecompression: .standard)
///   ])
/// print(GzipMiddleware())
/// // GzipMiddleware(compress requests: off (≥ 1 KiB when on); decode: gzip, deflate; limit 32 MiB, ratio 100×)
/// ```
public struct GzipMiddleware: Middleware, CustomStringConvertible {
  /// When request bodies are compressed.
  public var requestCompression: RequestCompression
  /// Whether and within which limit responses are decoded.
  public var responseDecompression: ResponseDecompression
  /// Whether a request without `Accept-Encoding` gets ``acceptEncoding`` while responses are
  /// decoded; default `true`. Turn it off to send the value a transport sets by itself
  /// (URLSession's, or `CurlTransport`'s with `contentDecoding: .automatic`) instead.
  public var addsAcceptEncoding: Bool

  /// Creates the middleware.
  ///
  /// - Parameters:
  ///   - requestCompression: Default ``RequestCompression/disabled``: only endpoints that opt
  ///     in are compressed, from 1 KiB.
  ///   - responseDecompression: Default ``ResponseDecompression/standard``: gzip and deflate
  ///     are decoded up to 32 MiB and 100× (past 1 MiB).
  ///   - addsAcceptEncoding: Default `true`: a request without `Accept-Encoding` gets
  ///     ``acceptEncoding`` while responses are decoded.
  public init(
    requestCompression: RequestCompression = .disabled,
    responseDecompression: ResponseDecompression = .standard,
    addsAcceptEncoding: Bool = true
  ) {
    self.requestCompression = requestCompression
    self.responseDecompression = responseDecompression
    self.addsAcceptEncoding = addsAcceptEncoding
  }

  /// The settings on one line, for a client's chain description.
  public var description: String {
    "GzipMiddleware(compress requests: \(requestCompression); decode: \(responseDecompression)"
      + (addsAcceptEncoding || !responseDecompression.isEnabled
        ? ")" : "; Accept-Encoding: the transport's)")
  }

  /// Compresses the request body when the settings say so, sends it on, and decodes the
  /// response if it is still encoded.
  nonisolated(nonsending) public func intercept(
    _ request: Request, next: Next
  ) async throws
    -> Response
  {
    var outgoing = request
    try compressBody(of: &outgoing)
    if responseDecompression.isEnabled && addsAcceptEncoding
      && !outgoing.headers.contains(.acceptEncoding)
    {
      outgoing.headers.set(.acceptEncoding, trustedValue: Self.acceptEncoding)
    }
    guard responseDecompression.isEnabled else { return try await next(outgoing) }
    return try decode(try await next(outgoing))
  }

  /// `gzip, deflate`: the `Accept-Encoding` this middleware asks for when a request names none.
  public static let acceptEncoding = "gzip, deflate"

  /// `true` while responses are decoded: the client then runs the response pipeline's checks
  /// outside this middleware, on the decoded body.
  public var decodesResponseBodies: Bool { responseDecompression.isEnabled }

  // MARK: - Requests

  /// Replaces the body of `request` with its gzip form when every rule allows it.
  func compressBody(of request: inout Request) throws {
    let wanted =
      request.attributes[RequestCompressionAttribute.self] ?? requestCompression.isEnabled
    guard wanted, let body = request.body.data, body.count >= requestCompression.threshold,
      !body.isEmpty, !request.headers.contains(.contentEncoding),
      !GzipSniffer.isCompressedMediaType(request.headers[.contentType] ?? ""),
      !GzipSniffer.hasCompressedSignature(body)
    else { return }
    let compressed = try GzipCompressor.compress(
      body, format: .gzip, level: requestCompression.level)
    guard compressed.count < body.count else { return }
    request.body = .data(compressed)
    try request.headers.set(.contentEncoding, "gzip")
    try request.headers.set(.contentLength, String(compressed.count))
  }

  // MARK: - Responses

  /// The response with its body decoded if it is still encoded, and its headers made true.
  func decode(_ response: consuming Response) throws -> Response {
    // Most responses carry no `Content-Encoding`: they go back from here, without running
    // the long code of the function below.
    guard let encoding = response.headers[.contentEncoding] else { return response }
    return try decode(response, labelled: encoding)
  }

  /// ``decode(_:)`` for a response whose `Content-Encoding` is `encoding`.
  private func decode(
    _ response: consuming Response, labelled encoding: String
  ) throws
    -> Response
  {
    // A HEAD response's or a 204's or 304's headers describe a body that was not sent.
    if response.request.method == .head || [204, 304].contains(response.status)
      || (100..<200).contains(response.status)
    {
      return response
    }
    var response = response
    if let stream = response.bodyStream {
      // A streamed body is decoded while it is read, layer by layer, last applied first.
      guard let codings = Self.contentCodings(named: encoding) else { return response }
      guard codings.count <= Self.maximumCodings else {
        throw CourierError(
          kind: .corruptBody,
          debugMessage: "GzipMiddleware: \(codings.count) content codings on a streamed "
            + "response body; at most \(Self.maximumCodings) are decoded",
          request: response.request, response: response, stage: "transport")
      }
      var decoded = stream
      for coding in codings.reversed() {
        decoded = decoded.transformed(
          by: StreamedDecoding(coding: coding, limit: responseDecompression.limit))
      }
      response.bodyStream = decoded
      response.headers.remove(.contentEncoding)
      response.headers.remove(.contentLength)
      return response
    }
    let body = response.body
    let declaredLength = response.headers[.contentLength].flatMap { Int($0) }
    // A Content-Length that disagrees with the body means the transport decoded it already.
    let transportDecoded = declaredLength.map { $0 != body.count } ?? false
    guard let codings = Self.contentCodings(named: encoding) else {
      // A coding this middleware does not decode (`br`, `zstd`) stays as it came, unless the
      // transport decoded it (URLSession asks for both): then the headers are made true too.
      guard transportDecoded else { return response }
      response.headers.remove(.contentEncoding)
      try response.headers.set(.contentLength, String(body.count))
      return response
    }
    if !transportDecoded && !body.isEmpty {
      var coding = codings[codings.count - 1]
      do {
        guard codings.count <= Self.maximumCodings else {
          throw CourierError(
            kind: .corruptBody,
            debugMessage:
              "\(codings.count) content codings; at most \(Self.maximumCodings) are decoded")
        }
        response.body = try Self.decodeLayers(
          body, codings: codings, limit: responseDecompression.limit, current: &coding)
      } catch var error as CourierError {
        error.response = response
        error.request = response.request
        error.debugMessage = "GzipMiddleware: \(coding) response body: \(error.debugMessage)"
        throw error
      }
    }
    response.headers.remove(.contentEncoding)
    if declaredLength != nil || response.body.count != body.count {
      try response.headers.set(.contentLength, String(response.body.count))
    }
    return response
  }

  /// 5: the most content codings one response may stack (`Content-Encoding: gzip, gzip`),
  /// as libcurl allows since 7.84 (CVE-2022-32206: each layer costs a decoder's memory).
  /// More is `corruptBody`.
  public static let maximumCodings = 5

  /// The coding a `Content-Encoding` value names when it is one this middleware decodes.
  static func contentCoding(named value: some StringProtocol) -> GzipFormat? {
    switch value.trimmingCharacters(in: .whitespaces).lowercased() {
    case "gzip", "x-gzip": return .gzip
    case "deflate": return .deflate
    default: return nil
    }
  }

  /// The codings a `Content-Encoding` list names, in the order the server applied them
  /// (`identity` and empty elements left out), or `nil` when one is a coding this middleware
  /// does not decode, or none is named.
  static func contentCodings(named value: String) -> [GzipFormat]? {
    var codings: [GzipFormat] = []
    for element in value.split(separator: ",") {
      let name = element.trimmingCharacters(in: .whitespaces)
      if name.isEmpty || name.caseInsensitiveCompare("identity") == .orderedSame { continue }
      guard let coding = contentCoding(named: name) else { return nil }
      codings.append(coding)
    }
    return codings.isEmpty ? nil : codings
  }

  /// `body` with its `codings` undone, last applied first, for as long as the bytes are still
  /// encoded: a layer whose bytes are not (a transport decoded them, or a server labelled one
  /// coding too many) ends the decoding there. The first layer gets `limit`; the ones inside
  /// it the same ceiling, counted from the bytes that came over the wire, so that stacking
  /// codings multiplies no ratio. `current` is the coding being undone, for error messages.
  static func decodeLayers(
    _ body: Data, codings: [GzipFormat], limit: DecompressionLimit,
    current: inout GzipFormat
  ) throws -> Data {
    var bytes = body
    for (layer, coding) in codings.reversed().enumerated() {
      current = coding
      let layerLimit =
        layer == 0
        ? limit
        : DecompressionLimit(
          maximumSize: limit.ceiling(forInput: body.count), maximumRatio: nil)
      guard let decoded = try decodeIfEncoded(bytes, coding: coding, limit: layerLimit) else {
        break
      }
      bytes = decoded
    }
    return bytes
  }

  /// The decoded body, or `nil` when the bytes are not encoded (the transport decoded them,
  /// or the server labelled a plain body).
  static func decodeIfEncoded(
    _ body: Data, coding: GzipFormat, limit: DecompressionLimit
  ) throws -> Data? {
    if GzipSniffer.isGzip(body) {
      return try GzipDecompressor.decompress(body, format: .gzip, limit: limit)
    }
    guard coding == .deflate else { return nil }
    if GzipSniffer.isZlib(body) {
      return try GzipDecompressor.decompress(body, format: .zlib, limit: limit)
    }
    // Raw deflate has no signature: it counts as encoded only if it decodes completely.
    do {
      return try GzipDecompressor.decompress(body, format: .rawDeflate, limit: limit)
    } catch let error as CourierError where error.kind == .corruptBody {
      return nil
    }
  }
}
