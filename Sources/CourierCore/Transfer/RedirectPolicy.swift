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
