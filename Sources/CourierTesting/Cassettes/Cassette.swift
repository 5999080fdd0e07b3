import CourierCore
import CourierGzip
import Foundation

/// Request and response pairs recorded by ``RecordingTransport`` and served by
/// ``ReplayTransport``: a JSON file that can be committed, because credentials in it are
/// redacted by the same rules as logging (``Redaction``).
///
/// The file (version 1):
///
/// ```json
/// {
///   "version": 1,
///   "interactions": [
///     {
///       "request": {
///         "method": "GET", "url": "https://api.example.com/user?token=***",
///         "headers": [["Authorization", "***"], ["Accept", "application/json"]],
///         "body": null
///       },
///       "response": {
///         "status": 200, "headers": [["Content-Type", "application/json"]],
///         "body": {"text": "{\"id\":7}"}
///       }
///     },
///     {
///       "request": {"method": "GET", "url": "https://down.example.com/", "headers": []},
///       "error": {"kind": "cannotConnect", "message": "connection refused"}
///     }
///   ]
/// }
/// ```
///
/// A body is `{"text": …}` when it is UTF-8, else `{"base64": …}`. An interaction holds a
/// `response` or, when the transport failed, an `error` with the ``CourierError/Kind``.
public struct Cassette: Codable, Sendable, Equatable {
  /// The format's version: 1.
  public var version: Int
  /// The recorded pairs, in the order they happened.
  public var interactions: [Interaction]

  /// An empty cassette.
  public init(interactions: [Interaction] = []) {
    self.version = 1
    self.interactions = interactions
  }

  /// Reads a cassette file.
  ///
  /// - Throws: ``CourierError`` of kind ``CourierError/Kind/invalidRequest`` naming the file
  ///   when it cannot be read, is not a cassette, or has a version this code does not know.
  public init(contentsOf file: URL) throws(CourierError) {
    let data: Data
    do {
      data = try Data(contentsOf: file)
    } catch {
      throw CourierError(
        kind: .invalidRequest, debugMessage: "cannot read the cassette \(file.path): \(error)",
        underlying: error, stage: "replay")
    }
    do {
      self = try JSONDecoder().decode(Cassette.self, from: data)
    } catch {
      throw CourierError(
        kind: .invalidRequest, debugMessage: "\(file.path) is not a cassette: \(error)",
        underlying: error, stage: "replay")
    }
    guard version == 1 else {
      throw CourierError(
        kind: .invalidRequest,
        debugMessage: "\(file.path) is a cassette of version \(version); this reads version 1",
        stage: "replay")
    }
  }

  /// Writes the cassette, pretty-printed with sorted keys so that diffs stay small, replacing
  /// the file atomically.
  public func write(to file: URL) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    try encoder.encode(self).write(to: file, options: .atomic)
  }

  /// One request and what came back.
  public struct Interaction: Codable, Sendable, Equatable {
    /// The request, redacted.
    public var request: RecordedMessage
    /// The response, redacted, when one arrived.
    public var response: RecordedResponse?
    /// The failure, when the transport threw instead.
    public var error: RecordedError?

    /// Creates an interaction.
    public init(
      request: RecordedMessage, response: RecordedResponse? = nil, error: RecordedError? = nil
    ) {
      self.request = request
      self.response = response
      self.error = error
    }
  }

  /// A recorded request: method, URL, headers and body.
  public struct RecordedMessage: Codable, Sendable, Equatable {
    /// `GET`, `POST`, …
    public var method: String
    /// The absolute URL, its credential query values and user info redacted.
    public var url: String
    /// Header fields in order, as `[name, value]` pairs; credentials redacted.
    public var headers: [[String]]
    /// The body, if any.
    public var body: Body?

    /// Creates a recorded request.
    public init(method: String, url: String, headers: [[String]] = [], body: Body? = nil) {
      self.method = method
      self.url = url
      self.headers = headers
      self.body = body
    }
  }

  /// A recorded response: status, headers and body.
  public struct RecordedResponse: Codable, Sendable, Equatable {
    /// The HTTP status.
    public var status: Int
    /// Header fields in order, as `[name, value]` pairs; credentials redacted.
    public var headers: [[String]]
    /// The body, if any.
    public var body: Body?

    /// Creates a recorded response.
    public init(status: Int, headers: [[String]] = [], body: Body? = nil) {
      self.status = status
      self.headers = headers
      self.body = body
    }
  }

  /// A recorded failure: the error's kind and its developer message.
  public struct RecordedError: Codable, Sendable, Equatable {
    /// ``CourierError/Kind`` name, for example `cannotConnect`.
    public var kind: String
    /// The error's `debugMessage`, every URL in it redacted (``CourierError/redactingURLs(in:)``).
    public var message: String

    /// Creates a recorded failure.
    public init(kind: String, message: String) {
      self.kind = kind
      self.message = message
    }
  }

  /// A body: text when it is UTF-8, else base64.
  public struct Body: Codable, Sendable, Equatable {
    /// The body as text, when it is UTF-8.
    public var text: String?
    /// The body in base64, when it is not UTF-8.
    public var base64: String?

    /// `data` as text when it is UTF-8 (after `redact`), else as base64. The text holds every
    /// byte, a leading byte order mark included (`String(data:encoding:)` drops one).
    public init(_ data: Data, redact: (String) -> String = { $0 }) {
      if let text = String(validating: data, as: UTF8.self) {
        self.text = redact(text)
      } else {
        self.base64 = data.base64EncodedString()
      }
    }

    /// The bytes.
    public var data: Data {
      if let text { return Data(text.utf8) }
      return base64.flatMap { Data(base64Encoded: $0) } ?? Data()
    }
  }
}

extension Cassette.RecordedMessage {
  /// `request` as a cassette records it: URL, headers and body redacted by `redaction`
  /// (the request's ``CredentialHeadersAttribute`` headers included), a gzip or deflate
  /// body decoded first (see `Cassette.recorded(_:headers:redaction:header:)`). A file body
  /// (`RequestBody.file`, a multipart form with file parts) is read whole: its bytes are what
  /// the wire carries, and what a replay compares under ``ReplayTransport/Matching/body``. A
  /// body read from a sequence (`RequestBody.stream`) is recorded as no body: its bytes are
  /// made once, for the transport, and reading them here would take them from it (a one-shot
  /// sequence) or make them twice; under ``ReplayTransport/Matching/body`` it compares as
  /// empty.
  public init(_ request: Request, redaction: Redaction) {
    let bytes = request.body.data ?? request.body.fileURL.flatMap { try? Data(contentsOf: $0) }
    let (headers, body) = Cassette.recorded(
      bytes ?? Data(), headers: request.headers, redaction: redaction
    ) { redaction.header($0, of: request) }
    self.init(
      method: request.method.rawValue, url: redaction.url(request.url), headers: headers,
      body: body)
  }
}

extension Cassette.RecordedResponse {
  /// `response` as a cassette records it: headers and body redacted by `redaction`, a gzip
  /// or deflate body decoded first (see `Cassette.recorded(_:headers:redaction:header:)`).
  public init(_ response: Response, redaction: Redaction) {
    let (headers, body) = Cassette.recorded(
      response.body, headers: response.headers, redaction: redaction
    ) { redaction.header($0) }
    self.init(status: response.status, headers: headers, body: body)
  }
}

extension Cassette {
  /// A message's header pairs and body as a cassette records them, each header value as
  /// `header` writes it and the body redacted by `redaction`.
  ///
  /// A body whose `Content-Encoding` is gzip or deflate (one or several) is recorded decoded,
  /// without its `Content-Encoding` and with a true `Content-Length`: compressed, its secrets
  /// would pass the redaction unseen and come back to anyone who decompresses the file. A
  /// replay then serves the plain body, which every client reads as it read the decoded one.
  /// A coding that cannot be undone (`br`, a corrupt stream, one past
  /// `DecompressionLimit.standard`) leaves the body as it came. A body that redaction
  /// changes to another length (`"token":"***"`) gets that length as its `Content-Length`
  /// too, so a replay serves the redacted body framed as it is.
  static func recorded(
    _ data: Data, headers: HTTPHeaders, redaction: Redaction,
    header: (HTTPHeaders.Field) -> String
  ) -> (headers: [[String]], body: Body?) {
    let plain = decoded(data, headers: headers)
    let body = redaction.body(plain ?? data, contentType: headers[.contentType])
    // A body the cassette changed, decoded or redacted to another length, gets its own.
    let rewritesLength = plain != nil || body.count != data.count
    var pairs: [[String]] = []
    for field in headers {
      if plain != nil, field.name == .contentEncoding { continue }
      if rewritesLength, field.name == .contentLength {
        pairs.append([field.name.rawName, String(body.count)])
        continue
      }
      pairs.append([field.name.rawName, header(field)])
    }
    return (pairs, body.isEmpty ? nil : Body(body))
  }

  /// `data` with the gzip and deflate codings `headers` name undone, last applied first;
  /// `nil` when no coding is named or one cannot be undone. A layer whose bytes are not
  /// compressed (a transport decoded them already) ends the decoding there.
  static func decoded(_ data: Data, headers: HTTPHeaders) -> Data? {
    guard !data.isEmpty else { return nil }
    let names = headers.values(for: .contentEncoding).flatMap { $0.split(separator: ",") }
      .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
      .filter { !$0.isEmpty && $0 != "identity" }
    guard !names.isEmpty, names.allSatisfy({ ["gzip", "x-gzip", "deflate"].contains($0) })
    else { return nil }
    var bytes = data
    for name in names.reversed() {
      if name == "deflate" {
        // zlib-wrapped, as RFC 9110 says, or raw deflate, as some servers send.
        guard
          let plain = (try? GzipDecompressor.decompress(bytes, format: .zlib))
            ?? (try? GzipDecompressor.decompress(bytes, format: .rawDeflate))
        else { break }
        bytes = plain
      } else {
        guard bytes.starts(with: [0x1F, 0x8B]) else { break }
        guard let plain = try? GzipDecompressor.decompress(bytes, format: .gzip) else {
          return nil
        }
        bytes = plain
      }
    }
    return bytes
  }
}
