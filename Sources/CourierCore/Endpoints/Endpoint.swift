import Foundation

/// A description of one API call and of the value it returns: method, path template,
/// parameters, query, headers, body, per-endpoint options, and how to decode the response.
///
/// Endpoints are plain values: build them with the modifiers, which return a changed copy.
/// Nothing is checked until the client builds the request, where any problem — a missing path
/// parameter, a bad header, an unencodable body — becomes a ``CourierError`` of kind
/// ``CourierError/Kind/invalidRequest`` instead of a wrong request on the wire.
///
/// ```swift
/// struct Weather: Decodable, Sendable { let name: String }
///
/// let weather = Endpoint<Weather>(.get, "weather").query("q", "Beijing")
/// let check = Endpoint<Bool>(.get, "user/check/{phone}").parameter("phone", "+86 138")
/// let create = Endpoint<Void>(.post, "users").jsonBody(NewUser(name: "Li"))
/// ```
///
/// ## Paths
/// `{name}` parts of the path are replaced by ``parameter(_:_:)`` values, percent-encoded for
/// a path segment (space, `/`, `?`, `#`, `%` and non-ASCII are encoded). A parameter with no
/// value, a value for a name the template lacks, and an empty value are errors. A path that is
/// an absolute `http(s)` URL overrides the client's base URL; otherwise the two are joined with
/// exactly one `/`.
public struct Endpoint<Value: Sendable>: Sendable {
  /// The request method.
  public var method: HTTPMethod
  /// The path template, relative to the client's base URL or absolute.
  public var path: String
  /// Values for the template's `{name}` parts, unencoded.
  public var parameters: [String: String] = [:]
  /// Query items in order, unencoded.
  public var queryItems: [QueryItem] = []
  /// Header fields in order; checked when the request is built.
  public var headers: [(name: String, value: String)] = []
  /// The body.
  public var body: EndpointBody = .none
  /// Per-request options for middleware and transports.
  public var attributes = RequestAttributes()
  /// How the response becomes a `Value`.
  public var decoding: ResponseDecoding<Value>
  /// A decoder for this endpoint instead of the client's.
  public var decoder: JSONDecoder?
  /// An encoder for this endpoint's JSON body instead of the client's.
  public var encoder: JSONEncoder?
  /// A response pipeline for this endpoint instead of the client's.
  public var pipeline: ResponsePipeline?
  /// Changes to the built-in stages of the pipeline for this endpoint only.
  public var overrides = PipelineOverrides()

  /// Creates an endpoint with an explicit way of decoding the response.
  public init(_ method: HTTPMethod = .get, _ path: String, decoding: ResponseDecoding<Value>) {
    self.method = method
    self.path = path
    self.decoding = decoding
  }

  /// Builds the request this endpoint describes.
  ///
  /// - Throws: ``CourierError`` of kind ``CourierError/Kind/invalidRequest``.
  public func makeRequest(baseURL: URL?, encoder defaultEncoder: JSONEncoder) throws -> Request {
    try makeRequest(base: baseURL.map { URLBuilder.Base($0) }, encoder: defaultEncoder)
  }

  /// Builds the request against a base checked once by the client.
  func makeRequest(base: URLBuilder.Base?, encoder defaultEncoder: JSONEncoder) throws -> Request {
    let url = try URLBuilder.url(
      base: base, template: path, parameters: parameters, query: queryItems)
    var request = Request(method: method, url: url, attributes: attributes)
    for (name, value) in headers { try request.headers.add(name, value) }
    if let encoded = try body.encoded(with: encoder ?? defaultEncoder) {
      request.body = encoded.body
      if let length = encoded.contentLength {
        // A multipart body: only its own Content-Type names the boundary it was written with.
        if let contentType = encoded.contentType {
          try request.headers.set(.contentType, contentType)
        }
        try request.headers.set(.contentLength, String(length))
      } else if let contentType = encoded.contentType, !request.headers.contains(.contentType) {
        try request.headers.add(.contentType, contentType)
      }
    }
    return request
  }
}

// MARK: - Initialisers choosing the decoding

extension Endpoint where Value: Decodable {
  /// An endpoint whose response body is JSON decoded as `Value`.
  public init(_ method: HTTPMethod = .get, _ path: String) {
    self.init(method, path, decoding: .json())
  }

  /// Decodes `Value` from the JSON at a dotted key path (`"data"`, `"result.items"`) instead
  /// of the whole body. With a business envelope rule, the envelope's payload is the root.
  public func decoded(at keyPath: String) -> Self {
    var copy = self
    copy.decoding = .json(at: keyPath)
    return copy
  }
}

extension Endpoint where Value == Data {
  /// An endpoint whose response body is returned as raw bytes.
  public init(_ method: HTTPMethod = .get, _ path: String) {
    self.init(method, path, decoding: .data)
  }
}

extension Endpoint where Value == String {
  /// An endpoint whose response body is returned as text, in the charset its `Content-Type`
  /// names (UTF-8 when it names none; see ``ResponseDecoding/string``).
  public init(_ method: HTTPMethod = .get, _ path: String) {
    self.init(method, path, decoding: .string)
  }
}

extension Endpoint where Value == Void {
  /// An endpoint whose response body is ignored (after the pipeline's checks).
  public init(_ method: HTTPMethod = .get, _ path: String) {
    self.init(method, path, decoding: .none)
  }
}

// MARK: - Modifiers

extension Endpoint {
  /// Sets the value of the `{name}` part of the path template.
  public func parameter(_ name: String, _ value: some LosslessStringConvertible) -> Self {
    var copy = self
    copy.parameters[name] = String(describing: value)
    return copy
  }

  /// Appends a query item with a text value; `nil` writes the name alone (`?flag`).
  ///
  /// ```swift
  /// Endpoint<Data>(.get, "search").query("q", "北京").query("flag", nil)  // ?q=%E5…&flag
  /// ```
  public func query(_ name: String, _ value: String?) -> Self {
    var copy = self
    copy.queryItems.append(QueryItem(name, value))
    return copy
  }

  /// Appends a query item with any value that converts to text (`42`, `true`); `nil` writes
  /// the name alone.
  public func query(_ name: String, _ value: (some LosslessStringConvertible)?) -> Self {
    var copy = self
    copy.queryItems.append(QueryItem(name, value.map { String(describing: $0) }))
    return copy
  }

  /// Appends query items in order.
  public func query(_ items: [QueryItem]) -> Self {
    var copy = self
    copy.queryItems += items
    return copy
  }

  /// Appends a header field.
  public func header(_ name: String, _ value: String) -> Self {
    var copy = self
    copy.headers.append((name, value))
    return copy
  }

  /// Appends a header field.
  public func header(_ name: HTTPHeaders.Name, _ value: String) -> Self {
    header(name.rawName, value)
  }

  /// Sends `value` as a JSON body (`Content-Type: application/json`), encoded with the
  /// endpoint's or the client's encoder.
  public func jsonBody(_ value: some Encodable & Sendable) -> Self {
    var copy = self
    copy.body = .json(value)
    return copy
  }

  /// Sends fields as `application/x-www-form-urlencoded`.
  public func formBody(_ fields: [(String, String)]) -> Self {
    var copy = self
    copy.body = .form(fields)
    return copy
  }

  /// Sends raw bytes with a content type.
  public func body(_ data: Data, contentType: String) -> Self {
    var copy = self
    copy.body = .data(data, contentType: contentType)
    return copy
  }

  /// Streams a file as the body.
  public func fileBody(_ url: URL, contentType: String) -> Self {
    var copy = self
    copy.body = .file(url, contentType: contentType)
    return copy
  }

  /// Sends a body read from an `AsyncSequence` of `Data` chunks while the request is sent:
  /// `body` is made with `RequestBody.stream(length:_:)` (replayable: the endpoint can be
  /// retried) or `RequestBody.stream(_:length:)` (sent once).
  ///
  /// ```swift
  /// let upload = Endpoint<Void>(.put, "logs/today")
  ///   .streamBody(.stream { AsyncStream<Data> { $0.finish() } }, contentType: "text/plain")
  /// ```
  public func streamBody(_ body: RequestBody, contentType: String) -> Self {
    var copy = self
    copy.body = .stream(body, contentType: contentType)
    return copy
  }

  /// Sends a `multipart/form-data` form (RFC 7578); see ``MultipartForm`` for how it is
  /// encoded. The form's `Content-Type` wins over one set with `header(_:_:)`,
  /// since only it names the boundary the body uses.
  ///
  /// ```swift
  /// import Courier
  ///
  /// let upload = Endpoint<Void>(.post, "avatar")
  ///   .multipartBody(MultipartForm().field("user", "42").file("avatar", data: Data([1, 2, 3]), filename: "a.png", contentType: "image/png"))
  /// ```
  public func multipartBody(_ form: MultipartForm) -> Self {
    var copy = self
    copy.body = .multipart(form)
    return copy
  }

  /// Sets the per-attempt timeout.
  public func timeout(_ duration: Duration) -> Self {
    var copy = self
    copy.attributes[TimeoutAttribute.self] = duration
    return copy
  }

  /// Stores a typed attribute for middleware.
  public func attribute<Key: RequestAttributeKey>(_ key: Key.Type, _ value: Key.Value) -> Self {
    var copy = self
    copy.attributes[key] = value
    return copy
  }

  /// Accepts these statuses instead of the pipeline's (default `200..<300`).
  public func accepting(_ statuses: AcceptedStatuses) -> Self {
    var copy = self
    copy.overrides.acceptedStatuses = statuses
    return copy
  }

  /// Uses this business envelope rule instead of the pipeline's; `nil` turns envelope
  /// checking off for this endpoint.
  public func envelope(_ rule: EnvelopeRule?) -> Self {
    var copy = self
    copy.overrides.envelope = .some(rule)
    return copy
  }

  /// Uses this decoder instead of the client's.
  public func decoder(_ decoder: JSONDecoder) -> Self {
    var copy = self
    copy.decoder = decoder
    return copy
  }

  /// Uses this encoder for the JSON body instead of the client's.
  public func encoder(_ encoder: JSONEncoder) -> Self {
    var copy = self
    copy.encoder = encoder
    return copy
  }

  /// Uses this response pipeline instead of the client's.
  public func pipeline(_ pipeline: ResponsePipeline) -> Self {
    var copy = self
    copy.pipeline = pipeline
    return copy
  }
}
