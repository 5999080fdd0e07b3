import CourierCore
import CourierTesting
import Foundation
import Synchronization
import Testing

/// A token store that counts refreshes; its refresh can be made to fail or to wait.
final class CountingTokens: CredentialProvider {
  private struct State {
    var token = "old"
    var refreshes = 0
    var failRefresh = false
  }
  private let state = Mutex(State())
  init(failRefresh: Bool = false) {
    state.withLock { $0.failRefresh = failRefresh }
  }

  var refreshes: Int { state.withLock { $0.refreshes } }

  func credential() async throws -> Credential? {
    Credential(bearer: state.withLock { $0.token })
  }

  func refresh(rejected: Credential?) async throws -> Credential {
    let (fail, count) = state.withLock { state in
      state.refreshes += 1
      return (state.failRefresh, state.refreshes)
    }
    struct RefreshTokenExpired: Error {}
    if fail { throw RefreshTokenExpired() }
    let token = "new-\(count)"
    state.withLock { $0.token = token }
    return Credential(bearer: token)
  }
}

/// A token store whose user can sign in again (``signIn(_:)``) between refreshes; each refresh
/// hands out `refreshed-<n>`.
final class RelogTokens: CredentialProvider {
  private struct State {
    var token = "t1"
    var refreshes = 0
  }
  private let state = Mutex(State())

  var refreshes: Int { state.withLock { $0.refreshes } }

  /// A new credential from a new sign-in, not from a refresh.
  func signIn(_ token: String) { state.withLock { $0.token = token } }

  func credential() async throws -> Credential? {
    Credential(bearer: state.withLock { $0.token })
  }

  func refresh(rejected: Credential?) async throws -> Credential {
    let token = state.withLock { state in
      state.refreshes += 1
      state.token = "refreshed-\(state.refreshes)"
      return state.token
    }
    return Credential(bearer: token)
  }
}

/// A server that accepts the bearer tokens given to ``accept(_:)`` and answers 401 to any
/// other — on the path `slow`, only after a second on `clock`.
final class TokenServer: Sendable {
  let stub: StubTransport
  private let tokens = Mutex<Set<String>>([])

  init(clock: TestClock = TestClock()) {
    stub = StubTransport(clock: clock)
    stub.on(nil, "**") { [weak self] request in
      let token = request.headers[.authorization]?.replacingOccurrences(of: "Bearer ", with: "")
      guard !(self?.tokens.withLock({ token.map($0.contains) ?? false }) ?? false) else {
        return .json(#"{"ok":true}"#)
      }
      return request.url.lastPathComponent == "slow"
        ? StubResponse.status(401).delayed(by: .seconds(1)) : .status(401)
    }
  }

  /// Accepts exactly `tokens` from now on.
  func accept(_ tokens: Set<String>) { self.tokens.withLock { $0 = tokens } }

  /// The bearer tokens sent so far, in order.
  var sent: [String] {
    stub.requests.map {
      $0.headers[.authorization]?.replacingOccurrences(of: "Bearer ", with: "") ?? "-"
    }
  }
}

@Suite("AuthMiddleware", .timeLimit(.minutes(5)))
struct AuthMiddlewareTests {
  /// A server that accepts only `Bearer new-1`.
  static func server() -> StubTransport {
    let stub = StubTransport()
    stub.on(nil, "**") { request in
      request.headers[.authorization] == "Bearer new-1" ? .json(#"{"ok":true}"#) : .status(401)
    }
    return stub
  }

  @Test("50 concurrent 401s cause exactly one refresh, and all 50 succeed after one resend")
  func singleFlight() async throws {
    let tokens = CountingTokens()
    // The server answers the old token after a second on a test clock, so all 50 are
    // rejected at the same moment.
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    stub.on(nil, "**") { request in
      request.headers[.authorization] == "Bearer new-1"
        ? .json(#"{"ok":true}"#) : StubResponse.status(401).delayed(by: .seconds(1))
    }
    let client = stubClient(stub, middleware: [AuthMiddleware(provider: tokens)])
    let results = try await withThrowingTaskGroup(of: Int.self) { group in
      for index in 0..<50 {
        group.addTask {
          _ = try await client.send(Endpoint<Data>(.get, "items/\(index)"))
          return index
        }
      }
      await clock.waitForSleepers(50)
      clock.advance(by: .seconds(1))
      return try await group.reduce(into: Set<Int>()) { $0.insert($1) }
    }
    #expect(results.count == 50)
    #expect(tokens.refreshes == 1)
    #expect(stub.requests.count == 100, "each request sent twice: rejected, then accepted")
  }

  @Test("a failed refresh fails every waiting request with one clear reason")
  func refreshFails() async throws {
    let tokens = CountingTokens(failRefresh: true)
    let stub = StubTransport(fallback: .status(401))
    let client = stubClient(stub, middleware: [AuthMiddleware(provider: tokens)], locale: "zh-Hans")
    let errors = await withTaskGroup(of: CourierError?.self) { group in
      for _ in 0..<5 {
        group.addTask { await courierError { try await client.send(Endpoint<Data>(.get, "me")) } }
      }
      return await group.reduce(into: [CourierError?]()) { $0.append($1) }
    }
    for error in errors {
      #expect(error?.kind == .authenticationFailed)
      #expect(error?.reason == "登录已过期，请重新登录")
    }
    #expect(tokens.refreshes <= 5)
  }

  @Test("the storm guard stops refreshing against a server that rejects every credential")
  func stormGuard() async throws {
    let tokens = CountingTokens()
    let stub = StubTransport(fallback: .status(401))
    let client = stubClient(
      stub, middleware: [AuthMiddleware(provider: tokens, maximumRefreshes: 3, clock: TestClock())])
    for _ in 0..<6 {
      let error = await courierError { try await client.send(Endpoint<Data>(.get, "me")) }
      #expect(error != nil)
    }
    #expect(tokens.refreshes == 3)
    let last = await courierError { try await client.send(Endpoint<Data>(.get, "me")) }
    #expect(last?.kind == .authenticationFailed)
    #expect(last?.debugDescription.contains("storm guard") == true)
  }

  @Test("a business code such as 40101 triggers the refresh too")
  func businessCode() async throws {
    let tokens = CountingTokens()
    let stub = StubTransport()
    stub.on(nil, "**") { request in
      if request.headers[.authorization] == "Bearer new-1" { return .json(#"{"ok":true}"#) }
      return .failure(
        CourierError(kind: .business, code: "40101", serverMessage: "Token expired"))
    }
    let client = stubClient(
      stub,
      middleware: [
        AuthMiddleware(provider: tokens, isRejection: AuthMiddleware.businessCodes(["40101"]))
      ])
    _ = try await client.send(Endpoint<Data>(.get, "me"))
    #expect(tokens.refreshes == 1)
    #expect(stub.requests.map { $0.headers[.authorization] } == ["Bearer old", "Bearer new-1"])
  }

  @Test("an endpoint's own Authorization header is sent as it is and never refreshed")
  func explicitHeaderWins() async throws {
    let tokens = CountingTokens()
    let stub = StubTransport(fallback: .status(401))
    let client = stubClient(stub, middleware: [AuthMiddleware(provider: tokens)])
    _ = await courierError {
      try await client.send(Endpoint<Data>(.get, "me").header(.authorization, "Basic abc"))
    }
    #expect(tokens.refreshes == 0)
    #expect(stub.requests.map { $0.headers[.authorization] } == ["Basic abc"])
    #expect(!"\(Credential(bearer: "s3cret"))".contains("s3cret"))
  }

  @Test(
    "a rejected credential handed out after the last refresh is refreshed, not replaced by that older refresh's result"
  )
  func credentialNewerThanLastRefresh() async throws {
    let tokens = RelogTokens()
    let server = TokenServer()
    let client = stubClient(server.stub, middleware: [AuthMiddleware(provider: tokens)])
    // t1 is rejected and refreshed to refreshed-1.
    server.accept(["refreshed-1"])
    _ = try await client.send(Endpoint<Data>(.get, "me"))
    // The user signs in again: t3 is accepted, then expires.
    tokens.signIn("t3")
    server.accept(["t3"])
    _ = try await client.send(Endpoint<Data>(.get, "me"))
    server.accept(["refreshed-2"])
    _ = try await client.send(Endpoint<Data>(.get, "me"))
    #expect(server.sent == ["t1", "refreshed-1", "t3", "t3", "refreshed-2"])
    #expect(tokens.refreshes == 2)
  }

  @Test("a late rejection of a credential a refresh has replaced since is resent with its result")
  func lateRejectionOfReplacedCredential() async throws {
    let tokens = RelogTokens()
    let clock = TestClock()
    let server = TokenServer(clock: clock)
    server.accept(["refreshed-1"])
    let client = stubClient(server.stub, middleware: [AuthMiddleware(provider: tokens)])
    let slow = Task { try await client.send(Endpoint<Data>(.get, "slow")) }
    await clock.waitForSleepers(1)
    // Meanwhile another request has t1 rejected and refreshed.
    _ = try await client.send(Endpoint<Data>(.get, "fast"))
    clock.advance(by: .seconds(1))
    _ = try await slow.linkedValue
    #expect(server.sent == ["t1", "t1", "refreshed-1", "refreshed-1"])
    #expect(tokens.refreshes == 1)
  }
}
