import Foundation

/// What a transport does when a response is a redirect (`301`, `302`, `303`, `307`, `308`
/// with a `Location`).
///
/// - ``follow(maximum:)``: follow up to `maximum` hops (default 10, as curl's
///   `--max-redirs` users and most browsers settle on: enough for login and CDN chains, few
///   enough to stop a loop quickly); one more fails with kind
///   ``CourierError/Kind/tooManyRedirects``, and so does a hop back to a URL already visited
///   with the same method (a loop), at once.
/// - ``doNotFollow``: the `3xx` comes back as the response, for the pipeline to judge.
/// - ``custom(_:)``: a closure sees each ``Redirect`` and returns the request to send next,
///   or `nil` to stop there.
///
/// Every followed hop is built by ``Redirect/nextRequest(after:status:location:)``, the rule
/// every Courier transport shares: credentials (`Authorization`, `Proxy-Authorization`,
/// `Cookie`, every header ``Redaction/standard`` hides and every header the request's
/// ``CredentialHeadersAttribute`` names, such as ``AuthMiddleware``'s `X-API-Key`) are
/// dropped when the scheme, host or port changes, and `301`/`302` `POST` and
/// `303` become a `GET` without a body (RFC 9110 §15.4). Only `http` and `https` targets
/// are followed (``Redirect/target(ofLocation:from:)``); a `Location` such as
/// `file:///etc/passwd` leaves the `3xx` as the response.
///
/// ```swift
/// let transport = URLSessionTransport(redirectPolicy: .follow(maximum: 5))
/// let endpoint = Endpoint<Void>(.get, "login").redirects(.doNotFollow)
/// let sameHostOnly = RedirectPolicy.custom { redirect in
///   redirect.next.url.host == redirect.original.url.host ? redirect.next : nil
/// }
/// ```
public struct RedirectPolicy: Sendable {
  enum Storage: Sendable {
    case follow(Int)
    case doNotFollow
    case custom(@Sendable (Redirect) -> Request?)
  }

  let storage: Storage

  /// Follows at most `maximum` hops (default 10); the next one fails with kind
  /// ``CourierError/Kind/tooManyRedirects``.
  public static func follow(maximum: Int = 10) -> RedirectPolicy {
    RedirectPolicy(storage: .follow(max(0, maximum)))
  }

  /// Returns the `3xx` response as it is.
  public static let doNotFollow = RedirectPolicy(storage: .doNotFollow)

  /// Asks `decide` at every hop: the request it returns is sent (it may change what the
  /// standard rule built in ``Redirect/next``), `nil` returns the `3xx` as the response. Loops
  /// still fail with ``CourierError/Kind/tooManyRedirects``, and so does a hop past the 50th:
  /// a custom policy follows at most 50.
  public static func custom(_ decide: @escaping @Sendable (Redirect) -> Request?) -> RedirectPolicy
  {
    RedirectPolicy(storage: .custom(decide))
  }

  /// `follow(maximum: 10)`.
  public static let standard = RedirectPolicy.follow()

  /// The most hops a custom policy may follow.
  static let customHopLimit = 50

  /// What to do with one redirect: the request to send next, `nil` to return the `3xx` as
  /// the response, or a ``CourierError`` of kind ``CourierError/Kind/tooManyRedirects``.
  ///
  /// - Parameters:
  ///   - original: The request as the chain gave it to the transport.
  ///   - previous: The request that got the redirect (the original on the first hop).
  ///   - status: The redirect's status.
  ///   - location: The absolute URL the redirect points to.
  ///   - visited: The method and URL of every request sent so far, the original first.
  public func decide(
    original: Request, previous: Request, status: Int, location: URL,
    visited: [(method: HTTPMethod, url: URL)]
  ) throws(CourierError) -> Request? {
    if case .doNotFollow = storage { return nil }
    guard let next = Redirect.nextRequest(after: previous, status: status, location: location)
    else { return nil }
    let hop = visited.count
    if visited.contains(where: { $0.method == next.method && $0.url == next.url }) {
      throw Self.failure(
        original, "redirect loop: \(CourierError.redactedURL(location)) was already visited")
    }
    let limit: Int
    let chosen: Request?
    switch storage {
    case .doNotFollow:
      return nil
    case .follow(let maximum):
      limit = maximum
      chosen = next
    case .custom(let decide):
      limit = Self.customHopLimit
      chosen = decide(
        Redirect(original: original, status: status, location: location, hop: hop, next: next))
    }
    guard let chosen else { return nil }
    if hop > limit {
      throw Self.failure(original, "more than \(limit) redirects")
    }
    return chosen
  }

  private static func failure(_ request: Request, _ message: String) -> CourierError {
    CourierError(
      kind: .tooManyRedirects, debugMessage: message, request: request, attempts: 1,
      stage: "transport")
  }
}

/// One redirect, as a ``RedirectPolicy/custom(_:)`` closure sees it.
public struct Redirect: Sendable {
  /// The request as the chain gave it to the transport.
  public var original: Request
  /// The redirect's status (`301`, `302`, `303`, `307` or `308`).
  public var status: Int
  /// The absolute URL of `Location`.
  public var location: URL
  /// 1 for the first redirect of the attempt, 2 for the second…
  public var hop: Int
  /// The request the standard rule (``nextRequest(after:status:location:)``) would send.
  public var next: Request

  /// Creates a redirect description.
  public init(original: Request, status: Int, location: URL, hop: Int, next: Request) {
    self.original = original
    self.status = status
    self.location = location
    self.hop = hop
    self.next = next
  }

  /// The request to send after `request` was answered with redirect `status` to `location`,
  /// or `nil` when `status` is not a redirect to follow (`300`, `304`, `305` and the rest).
  ///
  /// - Credentials are removed when the scheme, host or port (the default port when the URL
  ///   has none) differs from `request`'s, as browsers and curl do for `Authorization` and
  ///   `Cookie`: a token for one origin must not reach another. They are the headers of
  ///   ``credentialHeaders`` and those the request's ``CredentialHeadersAttribute`` names.
  /// - `303` turns every method but `HEAD` into `GET`, and `301`/`302` turn `POST` into
  ///   `GET` (RFC 9110 §15.4.2–4, as every browser does); the body and its `Content-Type`,
  ///   `Content-Length` and `Content-Encoding` are dropped then. `307` and `308` keep the
  ///   method and the body.
  /// - Every attribute (timeout, progress, download) carries over.
  public static func nextRequest(
    after request: Request, status: Int, location: URL
  )
    -> Request?
  {
    guard [301, 302, 303, 307, 308].contains(status) else { return nil }
    var next = request
    next.url = location
    if !sameOrigin(request.url, location) {
      for name in credentialHeaders { next.headers.remove(name) }
      for name in request.attributes[CredentialHeadersAttribute.self] {
        next.headers.remove(name)
      }
    }
    let becomesGET =
      (status == 303 && request.method != .head)
      || ((status == 301 || status == 302) && request.method == .post)
    if becomesGET {
      next.method = .get
      next.body = .empty
      for name in ["Content-Type", "Content-Length", "Content-Encoding"] {
        next.headers.remove(name)
      }
    }
    return next
  }

  /// The headers every redirect to another origin drops: `Authorization`,
  /// `Proxy-Authorization`, `Cookie`, and the rest of ``Redaction/standard``'s header names
  /// (`Set-Cookie`, `X-API-Key`, `X-Auth-Token`).
  public static let credentialHeaders: [HTTPHeaders.Name] = {
    var names: [HTTPHeaders.Name] = [.authorization, .proxyAuthorization, .cookie]
    for name in Redaction.standard.headers.sorted() {
      if let name = try? HTTPHeaders.Name(name), !names.contains(name) { names.append(name) }
    }
    return names
  }()

  /// The absolute URL that a redirect's `Location` value points to from `url`, or `nil` when a
  /// transport must not follow it: the value does not parse, or its scheme is not `http` or
  /// `https` (`file:`, `ftp:`, `data:`…: a server must not turn a request into a read of the
  /// client's own files or another protocol). On every Courier transport a redirect to
  /// another scheme comes back as the `3xx` response it is, for the pipeline to judge, and
  /// one whose `Location` does not parse fails with ``CourierError/Kind/badResponse``.
  ///
  /// A relative value (`/moved`, `//host/path`, `next`) is resolved against `url`
  /// (RFC 3986 §5).
  public static func target(ofLocation location: String, from url: URL) -> URL? {
    guard let target = URL(string: location, relativeTo: url)?.absoluteURL,
      let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https",
      target.host?.isEmpty == false
    else { return nil }
    return target
  }

  /// Whether two URLs share scheme, host and port (RFC 6454 origin).
  public static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
    let schemeA = a.scheme?.lowercased()
    let schemeB = b.scheme?.lowercased()
    return schemeA == schemeB && a.host?.lowercased() == b.host?.lowercased()
      && (a.port ?? defaultPort(schemeA)) == (b.port ?? defaultPort(schemeB))
  }

  private static func defaultPort(_ scheme: String?) -> Int? {
    switch scheme {
    case "http", "ws": 80
    case "https", "wss": 443
    default: nil
    }
  }
}

/// A request's own ``RedirectPolicy``; `nil` (the default) uses the transport's.
public enum RedirectPolicyAttribute: RequestAttributeKey {
  /// No override.
  public static let defaultValue: RedirectPolicy? = nil
}

extension Endpoint {
  /// Uses `policy` for this endpoint's redirects instead of the transport's.
  public func redirects(_ policy: RedirectPolicy) -> Self {
    attribute(RedirectPolicyAttribute.self, policy)
  }
}
