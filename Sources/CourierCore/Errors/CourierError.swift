import Foundation

/// The one error type that leaves a ``Client``: every failure — a bad request, the network,
/// an HTTP status, a business envelope, decoding, cancellation — is a `CourierError`.
///
/// - ``kind`` says what went wrong in a form code can switch on.
/// - ``reason`` is a sentence for the people using the app, in the client's language.
///   Courier's own texts never hold URLs, tokens, type names or stack traces; a server's
///   message is shown only as ``ReasonCatalog/serverMessages`` allows, cleaned and checked.
///   `LocalizedError.errorDescription` is the reason, so `error.localizedDescription` shows
///   it too.
/// - ``debugDescription`` is for developers: kind, stage, request line, status, business code,
///   the underlying error and its coding path.
///
/// It is a struct, not an enum, so new kinds can be added without breaking `switch`
/// statements in user code; compare kinds with `==` or `switch error.kind { case .timedOut: … }`.
///
/// ```swift
/// do {
///   let user = try await client.send(Endpoint<User>(.get, "user/{id}").parameter("id", id))
/// } catch let error as CourierError {
///   showAlert(error.reason)
///   if error.kind == .business, error.code == "40101" { signOut() }
/// }
/// ```
public struct CourierError: Error, Sendable {
  /// What went wrong, as an extensible set of named kinds.
  public struct Kind: Hashable, Sendable, CustomStringConvertible {
    /// The kind's stable name, also its key in a ``ReasonCatalog``.
    public let name: String

    /// Creates a kind. Use the static members for Courier's own kinds; a new name makes a
    /// kind of your own (give it a reason with ``ReasonCatalog/set(_:for:locale:)``).
    public init(_ name: String) {
      self.name = name
    }

    /// The name.
    public var description: String { name }

    /// The device is offline (no usable network path).
    public static let notReachable = Kind("notReachable")
    /// An attempt or the overall deadline ran out.
    public static let timedOut = Kind("timedOut")
    /// The request was cancelled by the caller (`Task` cancellation or ``Client/cancelAll()``).
    public static let cancelled = Kind("cancelled")
    /// The server refused the connection or could not be reached.
    public static let cannotConnect = Kind("cannotConnect")
    /// The host name did not resolve.
    public static let cannotFindHost = Kind("cannotFindHost")
    /// The connection dropped while the request was under way.
    public static let connectionLost = Kind("connectionLost")
    /// TLS failed: handshake, certificate, or trust.
    public static let secureConnectionFailed = Kind("secureConnectionFailed")
    /// The server answered with a status the endpoint does not accept.
    public static let httpStatus = Kind("httpStatus")
    /// The server's business envelope reported a failure (`{"code": 40101, "msg": …}`).
    public static let business = Kind("business")
    /// The body could not be decoded into the expected value.
    public static let decoding = Kind("decoding")
    /// The request could not be built or sent as given (bad header, missing path parameter,
    /// unencodable body, unreadable file).
    public static let invalidRequest = Kind("invalidRequest")
    /// A body exceeded a configured size limit.
    public static let bodyTooLarge = Kind("bodyTooLarge")
    /// A body was truncated or corrupt (for example a broken gzip stream).
    public static let corruptBody = Kind("corruptBody")
    /// The server's reply was not valid HTTP.
    public static let badResponse = Kind("badResponse")
    /// Redirects went on past the ``RedirectPolicy``'s hop limit, or came back to a URL
    /// already visited (a loop).
    public static let tooManyRedirects = Kind("tooManyRedirects")
    /// Any other transport failure.
    public static let transport = Kind("transport")
    /// The credential was rejected and could not be renewed: the user has to sign in again.
    public static let authenticationFailed = Kind("authenticationFailed")
    /// The proxy the transport goes through refused its credentials (or asked for some and
    /// was given none): a setting to fix, not the user's sign-in.
    public static let proxyAuthenticationFailed = Kind("proxyAuthenticationFailed")
    /// A middleware failed with an error of its own that is not a ``CourierError`` (a bug or
    /// a local failure in app code, not the network).
    public static let middleware = Kind("middleware")
    /// The client is shutting down (``Client/shutdown(gracePeriod:)``) and takes no new
    /// requests, or cancelled this one when its grace period ran out.
    public static let shutDown = Kind("shutDown")
    /// A circuit breaker has stopped requests to this host for a while after a run of
    /// failures; the request was not sent.
    public static let circuitOpen = Kind("circuitOpen")
  }

  /// The fields, kept in one immutable box: an error is then one pointer wide wherever it is
  /// held, returned or thrown (every async frame of a middleware chain that can catch one, every
  /// `Result`), instead of the hundreds of bytes its fields take. A change makes a new box.
  private final class Storage: Sendable {
    let fields: Fields

    init(_ fields: Fields) {
      self.fields = fields
    }
  }

  private struct Fields: Sendable {
    var kind: Kind
    var reason: String
    var debugMessage: String
    var code: String?
    var serverMessage: String?
    var retryAfter: Duration?
    var underlying: (any Error)?
    var request: Request?
    var response: Response?
    var attempts: Int
    var stage: String?
    var timings: Response.Timings?
  }

  private var storage: Storage

  // Out of line, as are the initialisers: the fields are hundreds of bytes, and every copy
  // of them inlined into an async function would be a slot in its frame, which each request
  // in flight holds for as long as it waits.
  @inline(never)
  private mutating func change(_ update: (inout Fields) -> Void) {
    var fields = storage.fields
    update(&fields)
    storage = Storage(fields)
  }

  /// What went wrong.
  public var kind: Kind {
    get { storage.fields.kind }
    set { change { $0.kind = newValue } }
  }
  /// A sentence for the app's users, in the client's language.
  public var reason: String {
    get { storage.fields.reason }
    set { change { $0.reason = newValue } }
  }
  /// Developer-facing detail, for logs and debugging; never shown to users.
  public var debugMessage: String {
    get { storage.fields.debugMessage }
    set { change { $0.debugMessage = newValue } }
  }
  /// The business code from the server's envelope, as written in the body (`"40101"`).
  public var code: String? {
    get { storage.fields.code }
    set { change { $0.code = newValue } }
  }
  /// The message from the server's envelope, when it sent one.
  public var serverMessage: String? {
    get { storage.fields.serverMessage }
    set { change { $0.serverMessage = newValue } }
  }
  /// How long the server asked the client to wait (`Retry-After`), when it said.
  public var retryAfter: Duration? {
    get { storage.fields.retryAfter }
    set { change { $0.retryAfter = newValue } }
  }
  /// The error that caused this one, when there is one (a `URLError`, a `DecodingError`, …).
  public var underlying: (any Error)? {
    get { storage.fields.underlying }
    set { change { $0.underlying = newValue } }
  }
  /// The request as it was sent (or as far as it was built).
  public var request: Request? {
    get { storage.fields.request }
    set { change { $0.request = newValue } }
  }
  /// The response, when one arrived; its raw ``Response/body`` stays readable.
  public var response: Response? {
    get { storage.fields.response }
    set { change { $0.response = newValue } }
  }
  /// How many attempts were made (0 when the request never reached a transport).
  public var attempts: Int {
    get { storage.fields.attempts }
    set { change { $0.attempts = newValue } }
  }
  /// Where the failure happened: `"transport"`, `"middleware TimeoutMiddleware"`,
  /// `"status"`, `"envelope"`, `"decoding"`, `"request"`, or a custom stage's name.
  public var stage: String? {
    get { storage.fields.stage }
    set { change { $0.stage = newValue } }
  }
  /// How far the last attempt got, and when (``Response/Timings``): the phases it reached,
  /// so a connect timeout has a lookup time and no first-byte time. The response's timings
  /// when a response arrived. An error a ``Client`` throws from sending always has them, with
  /// ``Response/Timings/total`` the time the request took to fail; `nil` on an error made
  /// elsewhere that no transport measured.
  public var timings: Response.Timings? {
    get { storage.fields.timings ?? storage.fields.response?.timings }
    set { change { $0.timings = newValue } }
  }

  /// Creates an error. The ``reason`` starts as the built-in English text for the kind; a
  /// ``Client`` replaces it with the text from its own catalog and language.
  @inline(never)
  public init(
    kind: Kind,
    debugMessage: String = "",
    code: String? = nil,
    serverMessage: String? = nil,
    underlying: (any Error)? = nil,
    request: Request? = nil,
    response: Response? = nil,
    attempts: Int = 0,
    stage: String? = nil
  ) {
    var fields = Fields(
      kind: kind, reason: "", debugMessage: debugMessage, code: code,
      serverMessage: serverMessage, retryAfter: nil, underlying: underlying, request: request,
      response: response, attempts: attempts, stage: stage, timings: nil)
    storage = Storage(fields)
    fields.reason = ReasonCatalog.standard.reason(for: self, locale: "en")
    storage = Storage(fields)
  }

  /// The HTTP status of the response, when one arrived.
  public var status: Int? { response?.status }

  /// Wraps any error in a `CourierError`: a `CourierError` is returned as it is,
  /// `CancellationError` becomes ``Kind/cancelled``, a `DecodingError` ``Kind/decoding``,
  /// an `EncodingError` ``Kind/invalidRequest``, anything else `otherwise`.
  ///
  /// - Parameter otherwise: The kind for an error Courier does not know; default
  ///   ``Kind/transport``. The client passes ``Kind/middleware`` for errors a middleware
  ///   throws and ``Kind/badResponse`` for errors a ``ResponseStage`` throws.
  @inline(never)
  public init(
    _ error: any Error, request: Request? = nil, stage: String? = nil,
    otherwise: Kind = .transport
  ) {
    if let error = error as? CourierError {
      self = error
      if self.request == nil, let request { self.request = request }
      if self.stage == nil, let stage { self.stage = stage }
      return
    }
    let kind: Kind =
      switch error {
      case is CancellationError: .cancelled
      case is DecodingError: .decoding
      case is EncodingError: .invalidRequest
      default: otherwise
      }
    self.init(
      kind: kind, debugMessage: String(describing: error), underlying: error, request: request,
      stage: stage)
  }
}

extension CourierError: LocalizedError {
  /// The user-facing ``reason``.
  public var errorDescription: String? { reason }
}

extension CourierError: CustomStringConvertible {
  /// The user-facing ``reason``.
  public var description: String { reason }
}

extension CourierError: CustomDebugStringConvertible {
  /// Everything a developer needs: kind, stage, request line, status, business code and
  /// message, attempts, the detail message and the underlying error (with a decoding error's
  /// coding path).
  ///
  /// Every URL in the text — the request's, one inside the underlying error, a redirect's —
  /// has its query values, fragment values and user info replaced by `***` (see
  /// ``redactingURLs(in:)``). An `NSError` or `URLError` underneath is written as domain, code
  /// and message, never with its raw user info.
  public var debugDescription: String {
    var parts = ["CourierError.\(kind.name)"]
    if let stage { parts.append("stage: \(stage)") }
    if let request {
      // Redacted with the rest of the text below.
      parts.append("request: \(request.method) \(request.url.absoluteString)")
      if let trace = request.attributes[RequestIDAttribute.self] {
        parts.append("request id: \(trace.traceID)")
      }
    }
    if let status { parts.append("status: \(status)") }
    // The server's words, clipped: a 5 MB message (or a code that is a whole JSON document)
    // would otherwise go whole into every log line that prints this.
    if let code { parts.append("code: \(DescriptionText.clipped(code, to: Self.serverTextLimit))") }
    if let serverMessage {
      let clipped = DescriptionText.clipped(serverMessage, to: Self.serverTextLimit)
      parts.append("server message: \(clipped.debugDescription)")
    }
    if attempts > 0 { parts.append("attempts: \(attempts)") }
    if !debugMessage.isEmpty { parts.append(debugMessage) }
    if let underlying {
      if let decoding = underlying as? DecodingError {
        parts.append("underlying: \(Self.describe(decoding))")
      } else if let foundation = Self.describeFoundationError(underlying) {
        parts.append("underlying: \(foundation)")
      } else {
        parts.append("underlying: \(String(reflecting: underlying))")
      }
    }
    parts.append("reason: \(reason.debugDescription)")
    return Self.redactingURLs(in: parts.joined(separator: "; "))
  }

  /// The most UTF-8 bytes of a server's code or message that ``debugDescription`` shows.
  static let serverTextLimit = 1_000

  /// An `NSError`-backed error (`URLError`, `CocoaError`, an `NSError`) as
  /// `Domain code N: message [url: …]`, without its user info, which holds the failing URL in
  /// clear; `nil` for a Swift error.
  static func describeFoundationError(_ error: any Error) -> String? {
    let isFoundation =
      error is URLError || error is CocoaError || type(of: error) is NSError.Type
    guard isFoundation else { return nil }
    let nsError = error as NSError
    var text = "\(nsError.domain) code \(nsError.code): \(nsError.localizedDescription)"
    // The URL is redacted with the rest of the description (`redactingURLs(in:)`).
    if let url = nsError.userInfo[NSURLErrorFailingURLErrorKey] as? URL {
      text += " [url: \(url.absoluteString)]"
    } else if let url = nsError.userInfo["NSErrorFailingURLStringKey"] as? String {
      // NSURLErrorFailingURLStringErrorKey, deprecated but still set.
      text += " [url: \(url)]"
    }
    return text
  }

  /// `text` with every URL-looking token (`scheme://…`, up to a space, quote, angle bracket or
  /// backslash) rewritten as `redactedURL(_:)` would: user info, query values and fragment
  /// values become `***`, names stay. A pass over the whole text, so a URL inside an
  /// underlying error's description or a debug message is caught too.
  public static func redactingURLs(in text: String) -> String {
    URLRedactor.redactingURLs(in: text) { _ in true }
  }

  /// The URL with query values, fragment values and user info replaced by `***`: names stay
  /// readable, values (which may be tokens or keys: OAuth's implicit flow returns
  /// `#access_token=…`) do not.
  static func redactedURL(_ url: URL) -> String {
    guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
      return "<url>"
    }
    func hidingValues(_ text: String) -> String {
      text.split(separator: "&", omittingEmptySubsequences: false)
        .map { item in
          guard let equals = item.firstIndex(of: "=") else { return String(item) }
          return item[..<equals] + "=***"
        }
        .joined(separator: "&")
    }
    if let query = components.percentEncodedQuery {
      components.percentEncodedQuery = hidingValues(query)
    }
    if let fragment = components.percentEncodedFragment {
      components.percentEncodedFragment = hidingValues(fragment)
    }
    if components.user != nil { components.user = "***" }
    if components.password != nil { components.password = "***" }
    return components.string ?? "<url>"
  }

  /// A decoding error with its coding path written as `a.b[2].c`.
  static func describe(_ error: DecodingError) -> String {
    func path(_ keys: [any CodingKey]) -> String {
      var text = ""
      for key in keys {
        if let index = key.intValue {
          text += "[\(index)]"
        } else {
          text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
        }
      }
      return text.isEmpty ? "<root>" : text
    }
    switch error {
    case .typeMismatch(let type, let context):
      return "type mismatch at \(path(context.codingPath)): expected \(type); "
        + context.debugDescription
    case .valueNotFound(let type, let context):
      return "value missing at \(path(context.codingPath)): expected \(type); "
        + context.debugDescription
    case .keyNotFound(let key, let context):
      return "key \(key.stringValue.debugDescription) not found at "
        + "\(path(context.codingPath)); " + context.debugDescription
    case .dataCorrupted(let context):
      return "data corrupted at \(path(context.codingPath)); " + context.debugDescription
    @unknown default:
      return String(describing: error)
    }
  }
}
