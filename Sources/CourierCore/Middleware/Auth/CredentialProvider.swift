/// Supplies the credential ``AuthMiddleware`` sends, and a new one when the server rejects it.
///
/// ## When to use it
/// Implement it over wherever your app keeps its session: a token store, a keychain, an OAuth
/// refresh endpoint. The middleware calls ``credential()`` for each request and
/// ``refresh(rejected:)`` at most once for all requests that were rejected together.
///
/// ## Writing your own
/// ```swift
/// actor TokenStore: CredentialProvider {
///   private var token: String?
///   private let refreshClient: Client
///
///   init(token: String?, refreshClient: Client) {
///     self.token = token
///     self.refreshClient = refreshClient
///   }
///
///   func credential() async throws -> Credential? {
///     token.map { Credential(bearer: $0) }
///   }
///
///   func refresh(rejected: Credential?) async throws -> Credential {
///     let fresh = try await refreshClient.send(Endpoint<String>(.post, "auth/refresh"))
///     token = fresh
///     return Credential(bearer: fresh)
///   }
/// }
///
/// let store = TokenStore(token: nil, refreshClient: Client(baseURL: base, transport: transport))
/// let client = Client(baseURL: base, transport: URLSessionTransport(),
///                     middleware: [AuthMiddleware(provider: store)])
/// ```
/// Throw from ``refresh(rejected:)`` when the user has to sign in again (the refresh token
/// expired too): every request waiting for the refresh then fails with kind
/// ``CourierError/Kind/authenticationFailed``, whose reason asks the user to sign in.
public protocol CredentialProvider: Sendable {
  /// The credential to send now, or `nil` to send the request without one.
  func credential() async throws -> Credential?
  /// A new credential to replace `rejected`, which the server refused.
  func refresh(rejected: Credential?) async throws -> Credential
}
