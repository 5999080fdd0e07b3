/// Adds default headers and headers computed at send time to every request.
///
/// Precedence, strongest first: a header the request (or its endpoint) already carries, then a
/// ``HeaderProvider``'s value, then a static default. So an endpoint's
/// `.header(.accept, "text/csv")` beats the default `Accept: application/json`, and a provider
/// never overwrites what a caller set on purpose.
///
/// Providers run once per request that passes this middleware: place it outside
/// `RetryMiddleware` (as the standard order does) and a retried request keeps the values it
/// was first given — one device id, one signature timestamp per logical request.
///
/// ```swift
/// let headers = try HeadersMiddleware(
///   defaults: HeadersMiddleware.standardDefaults,
///   providers: [
///     HeaderProvider("X-Device-ID") { _ in "device-123" },
///     HeaderProvider(.acceptLanguage) { _ in Locale.preferredLanguages.first },
///   ])
/// let client = Client(baseURL: base, transport: URLSessionTransport(), middleware: [headers])
/// ```
public struct HeadersMiddleware: Middleware {
  /// Headers added when the request has no value for their name.
  public var defaults: HTTPHeaders {
    didSet { defaultsAreSendable = defaults.isSendable }
  }
  /// Whether ``defaults`` can be sent as they are, checked once rather than per request.
  private var defaultsAreSendable: Bool
  /// Values computed for each request, in order.
  public var providers: [HeaderProvider]

  /// Creates the middleware.
  ///
  /// - Parameters:
  ///   - defaults: Static headers; default ``standardDefaults`` (`User-Agent` and
  ///     `Accept: application/json`).
  ///   - providers: Headers computed at send time; default none.
  public init(
    defaults: HTTPHeaders = HeadersMiddleware.standardDefaults, providers: [HeaderProvider] = []
  ) {
    self.defaults = defaults
    self.providers = providers
    defaultsAreSendable = defaults.isSendable
  }

  /// `User-Agent: Courier/<version> (<os>; <arch>)` and `Accept: application/json`: a server
  /// log can tell Courier's requests and their platform apart, and JSON is what the response
  /// pipeline decodes.
  public static var standardDefaults: HTTPHeaders {
    var headers = HTTPHeaders()
    headers.appendReceived(HTTPHeaders.Name.userAgent.rawName, userAgent)
    headers.appendReceived(HTTPHeaders.Name.accept.rawName, "application/json")
    return headers
  }

  /// `Courier/<version> (<os>; <arch>)`, for example `Courier/0.4.0 (Linux; x86_64)`.
  public static let userAgent: String = {
    #if os(Linux)
      let system = "Linux"
    #elseif os(macOS)
      let system = "macOS"
    #elseif os(iOS)
      let system = "iOS"
    #elseif os(tvOS)
      let system = "tvOS"
    #elseif os(watchOS)
      let system = "watchOS"
    #elseif os(Windows)
      let system = "Windows"
    #else
      let system = "unknown"
    #endif
    #if arch(x86_64)
      let architecture = "x86_64"
    #elseif arch(arm64)
      let architecture = "arm64"
    #else
      let architecture = "other"
    #endif
    return "Courier/\(CourierVersion.current) (\(system); \(architecture))"
  }()

  /// Adds the providers' values and the defaults the request lacks, then sends it on.
  nonisolated(nonsending) public func intercept(
    _ request: Request, next: Next
  ) async throws
    -> Response
  {
    var request = request
    if request.headers.isEmpty, providers.isEmpty, defaultsAreSendable {
      // Nothing to merge: the request takes the defaults' list itself, shared and not
      // copied, so this costs no allocation.
      request.headers = defaults
      return try await next(request)
    }
    return try await next(try await merged(request))
  }

  /// `request` with the providers' values and the defaults it lacks. A function of its own,
  /// so that the common case above runs none of its code.
  nonisolated(nonsending) private func merged(_ request: Request) async throws -> Request {
    var request = request
    let explicit = request.headers
    for provider in providers where !explicit.contains(provider.name) {
      if let value = try await provider.value(request) {
        try request.headers.set(provider.name, value)
      }
    }
    // Every value of a default whose name the request (or a provider) left unset.
    let given = request.headers
    for field in defaults where !given.contains(field.name) {
      try request.headers.add(field.name, field.value)
    }
    return request
  }
}

extension HeadersMiddleware: CustomStringConvertible {
  /// The header names this middleware sets, never their values (a default may be a key):
  /// `HeadersMiddleware(defaults: User-Agent, Accept; providers: X-Device-ID)`.
  public var description: String {
    var seen = Set<HTTPHeaders.Name>()
    let names = defaults.map(\.name).filter { seen.insert($0).inserted }.map(\.rawName)
    let provided = providers.map(\.name.rawName)
    return "HeadersMiddleware(defaults: \(names.isEmpty ? "none" : names.joined(separator: ", "))"
      + "; providers: \(provided.isEmpty ? "none" : provided.joined(separator: ", ")))"
  }
}
