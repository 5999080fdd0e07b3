import Foundation

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
      && (a.port ?? HostText.defaultPort(ofScheme: schemeA))
        == (b.port ?? HostText.defaultPort(ofScheme: schemeB))
  }
}
