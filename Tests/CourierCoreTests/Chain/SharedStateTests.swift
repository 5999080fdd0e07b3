import CourierCore
import CourierTesting
import Foundation
import Synchronization
import Testing

/// A token store that refreshes through a client of its own, as an app does: the refresh is a
/// request to `auth/refresh`, which answers `new` only after 10 s on the test clock.
final class ClientRefreshingTokens: CredentialProvider {
  let refreshStub: StubTransport
  private let refreshClient: Client
  private let token = Mutex("old")

  init(clock: TestClock) {
    refreshStub = StubTransport(clock: clock)
    refreshStub.on(.post, "**", StubResponse.text("new").delayed(by: .seconds(10)))
    refreshClient = stubClient(refreshStub)
  }

  func credential() async throws -> Credential? {
    Credential(bearer: token.withLock { $0 })
  }

  func refresh(rejected: Credential?) async throws -> Credential {
    let body = try await refreshClient.send(Endpoint<Data>(.post, "auth/refresh"))
    let fresh = String(decoding: body, as: UTF8.self)
    token.withLock { $0 = fresh }
    return Credential(bearer: fresh)
  }
}

/// Several clients sharing one ``AuthMiddleware`` over one API on a test clock.
///
/// The API accepts `Bearer new`; it rejects `Bearer old` at once on the path `now` and after
/// 1 s on any other path. ``rejections`` yields the path of each rejection the middleware has
/// seen, so a test knows a request is about to wait for the refresh.
struct SharedAuth {
  let clock = TestClock()
  let api: StubTransport
  let tokens: ClientRefreshingTokens
  let auth: AuthMiddleware
  let rejections: AsyncStream<String>

  init(maximumRefreshes: Int = 3) {
    let clock = self.clock
    api = StubTransport(clock: clock)
    api.on(nil, "**") { request in
      if request.headers[.authorization] == "Bearer new" { return .json(#"{"ok":true}"#) }
      return request.url.lastPathComponent == "now"
        ? .status(401) : StubResponse.status(401).delayed(by: .seconds(1))
    }
    tokens = ClientRefreshingTokens(clock: clock)
    let (rejections, seen) = AsyncStream.makeStream(of: String.self)
    self.rejections = rejections
    auth = AuthMiddleware(
      provider: tokens,
      isRejection: { response, error in
        let rejected = AuthMiddleware.unauthorizedStatus(response, error)
        if rejected, let url = (response?.request ?? error?.request)?.url {
          seen.yield(url.lastPathComponent)
        }
        return rejected
      }, maximumRefreshes: maximumRefreshes, clock: clock)
  }

  /// A new client with the shared middleware.
  func client() -> Client { stubClient(api, middleware: [auth]) }

  /// The credentials sent to `path`, in order.
  func sent(to path: String) -> [String?] {
    api.requests.filter { $0.url.lastPathComponent == path }.map { $0.headers[.authorization] }
  }
}

/// How a request's task ended, or that it had not after a bound.
enum Ending: Sendable {
  case succeeded
  case failed(CourierError)
  case stillRunning

  var error: CourierError? {
    if case .failed(let error) = self { error } else { nil }
  }

  /// How `task` ended, or ``stillRunning`` when it has not after `bound` of real time.
  ///
  /// The bound only turns a regression into a failure instead of a hung run (a wait that
  /// ignores cancellation is not ended by the time limit either): a task that ends as it
  /// should ends at once, long before it, and nothing waits for the bound to pass.
  static func of(_ task: Task<Data, any Error>, within bound: Duration) async -> Ending {
    final class Once: Sendable {
      private let continuation: Mutex<CheckedContinuation<Ending, Never>?>
      init(_ continuation: CheckedContinuation<Ending, Never>) {
        self.continuation = Mutex(continuation)
      }
      func resume(_ ending: Ending) {
        continuation.withLock { $0.take() }?.resume(returning: ending)
      }
    }
    let watchdog = Mutex<Task<Void, Never>?>(nil)
    defer { watchdog.withLock { $0 }?.cancel() }
    return await withCheckedContinuation { continuation in
      let once = Once(continuation)
      Task {
        do {
          _ = try await task.value
          once.resume(.succeeded)
        } catch {
          once.resume(.failed(CourierError(error)))
        }
      }
      watchdog.withLock {
        $0 = Task {
          guard (try? await Task.sleep(for: bound)) != nil else { return }
          once.resume(.stillRunning)
        }
      }
    }
  }
}

/// State shared across requests and clients: one middleware instance (and what it keeps)
/// used by several clients at once, cancellation in one while another waits, and one overall
/// deadline across every resend of a logical request.
@Suite("State shared across requests and clients", .timeLimit(.minutes(5)))
struct SharedStateTests {
  @Test("one client's cancelAll() does not fail another client's wait for the shared refresh")
  func cancelAllInTheClientThatStartedTheRefresh() async throws {
    // One refresh allowed: a second one (after the first failed) would be refused, so the
    // waiting client can succeed only with the first refresh's result.
    let shared = SharedAuth(maximumRefreshes: 1)
    var rejections = shared.rejections.makeAsyncIterator()
    let clientA = shared.client()
    let clientB = shared.client()
    let taskB = Task { try await clientB.send(Endpoint<Data>(.get, "b")) }
    await shared.clock.waitForSleepers(1)  // B is on the wire
    let taskA = Task { try await clientA.send(Endpoint<Data>(.get, "now")) }
    #expect(await rejections.next() == "now")
    await shared.tokens.refreshStub.waitForRequests(1)  // A started the refresh
    await shared.clock.waitForSleepers(2)
    shared.clock.advance(by: .seconds(1))
    #expect(await rejections.next() == "b")  // B is rejected and waits for A's refresh

    clientA.cancelAll()
    let errorA = await courierError { try await taskA.linkedValue }
    #expect(errorA?.kind == .cancelled)
    shared.clock.advance(by: .seconds(10))
    let errorB = await courierError { try await taskB.linkedValue }
    #expect(errorB == nil, "B failed: \(errorB?.debugDescription ?? "")")
    #expect(shared.sent(to: "b") == ["Bearer old", "Bearer new"])
    #expect(shared.tokens.refreshStub.requests.count == 1)
  }

  @Test(
    "a request cancelled while it waits for the shared refresh ends at once as cancelled; the others still get the refreshed credential"
  )
  func cancelOneWaiter() async throws {
    let shared = SharedAuth()
    var rejections = shared.rejections.makeAsyncIterator()
    let clientA = shared.client()
    let clientB = shared.client()
    let clientC = shared.client()
    let taskB = Task { try await clientB.send(Endpoint<Data>(.get, "b")) }
    let taskC = Task { try await clientC.send(Endpoint<Data>(.get, "c")) }
    await shared.clock.waitForSleepers(2)  // B and C are on the wire
    let taskA = Task { try await clientA.send(Endpoint<Data>(.get, "now")) }
    #expect(await rejections.next() == "now")
    await shared.tokens.refreshStub.waitForRequests(1)
    await shared.clock.waitForSleepers(3)
    shared.clock.advance(by: .seconds(1))
    var waiting: Set<String?> = []
    waiting.insert(await rejections.next())
    waiting.insert(await rejections.next())
    #expect(waiting == ["b", "c"])

    // B through its client, C through its task; the refresh (10 s away on the test clock)
    // has not ended, and both end anyway.
    clientB.cancelAll()
    taskC.cancel()
    async let waitB = Ending.of(taskB, within: .seconds(20))
    async let waitC = Ending.of(taskC, within: .seconds(20))
    let (endedB, endedC) = await (waitB, waitC)
    #expect(endedB.error?.kind == .cancelled, "B: \(endedB)")
    #expect(endedC.error?.kind == .cancelled, "C: \(endedC)")
    #expect(endedB.error?.debugDescription.contains("waiting for the credential") == true)

    shared.clock.advance(by: .seconds(10))
    _ = await courierError { try await taskB.linkedValue }
    _ = await courierError { try await taskC.linkedValue }
    _ = try await taskA.linkedValue
    #expect(shared.sent(to: "now") == ["Bearer old", "Bearer new"])
    #expect(shared.sent(to: "b") == ["Bearer old"])
    #expect(shared.tokens.refreshStub.requests.count == 1)
  }

  @Test("the resend after an auth refresh keeps the logical request's overall deadline")
  func authResendKeepsTheDeadline() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    stub.enqueue(
      StubResponse.status(401).delayed(by: .milliseconds(900)),
      StubResponse.json("{}").delayed(by: .milliseconds(900)))
    let client = stubClient(
      stub,
      middleware: [
        AuthMiddleware(provider: CountingTokens(), clock: clock),
        TimeoutMiddleware(attempt: .seconds(5), overall: .seconds(1), clock: clock),
      ])
    let task = Task { try await client.send(Endpoint<Data>(.get, "me")) }
    defer { task.cancel() }
    await clock.waitForSleepers(2)  // the timer and the first answer's delay
    clock.advance(by: .milliseconds(900))
    await stub.waitForRequests(2)
    // The bound on the wait for the refresh, then the resend's timer and delay.
    await clock.waitForSleepers(5)
    // A wait ended by the test's time limit must fail the test, not crash the process.
    try #require(stub.requests.count >= 2)
    let resend = stub.requests[1]
    #expect(resend.headers[.authorization] == "Bearer new-1")
    try #require(
      resend.attributes[DeadlineAttribute.self]?.remaining == .milliseconds(100),
      "the resend has what is left of the first attempt's deadline")
    clock.advance(by: .milliseconds(100))
    let error = await courierError { try await task.linkedValue }
    #expect(error?.kind == .timedOut)
    #expect(error?.debugDescription.contains("overall deadline of 1") == true)
    #expect(clock.now.offset == .seconds(1))
  }

  @Test("waiting for a refresh that outlasts the overall deadline ends at the deadline, timedOut")
  func refreshWaitBoundedByDeadline() async throws {
    let shared = SharedAuth()
    let clock = shared.clock
    let client = stubClient(
      shared.api,
      middleware: [
        shared.auth, TimeoutMiddleware(attempt: .seconds(5), overall: .seconds(1), clock: clock),
      ])
    var rejections = shared.rejections.makeAsyncIterator()
    let task = Task { try await client.send(Endpoint<Data>(.get, "now")) }
    defer { task.cancel() }
    #expect(await rejections.next() == "now")
    // The refresh (10 s on the clock) and the waiting request's bound are asleep.
    await clock.waitForSleepers(2)
    clock.advance(by: .seconds(1))
    let ending = await Ending.of(task, within: .seconds(20))
    let error = try #require(ending.error, "\(ending)")
    #expect(error.kind == .timedOut)
    #expect(error.debugDescription.contains("waiting for the credential to be refreshed"))
    #expect(clock.now.offset == .seconds(1))
    #expect(shared.sent(to: "now") == ["Bearer old"], "nothing resent after the deadline")
  }

  @Test("the resend after an auth refresh continues the first attempt's trace")
  func authResendKeepsTheTrace() async throws {
    let stub = StubTransport()
    stub.enqueue(.status(401), .json("{}"))
    let client = stubClient(
      stub, middleware: [AuthMiddleware(provider: CountingTokens()), RequestIDMiddleware()])
    _ = try await client.send(Endpoint<Data>(.get, "me"))
    let contexts = stub.requests.compactMap {
      $0.headers[.traceparent].flatMap(TraceContext.init(traceparent:))
    }
    try #require(contexts.count == 2)
    #expect(contexts[0].traceID == contexts[1].traceID, "one trace per logical request")
    #expect(contexts[0].parentID != contexts[1].parentID, "the resend is a span of its own")
  }

  @Test("an auth resend and its retries share one overall deadline")
  func authResendAndRetriesShareTheDeadline() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    stub.enqueue(
      StubResponse.status(401).delayed(by: .milliseconds(500)),
      StubResponse.status(503).delayed(by: .milliseconds(500)),
      .never)
    let client = stubClient(
      stub,
      middleware: [
        AuthMiddleware(provider: CountingTokens(), clock: clock),
        RetryMiddleware(budget: nil, clock: clock, jitter: { $0 }),
        TimeoutMiddleware(attempt: nil, overall: .seconds(2), clock: clock),
      ])
    let task = Task { try await client.send(Endpoint<Data>(.get, "me")) }
    defer { task.cancel() }
    // The 401 at 0.5 s; the bound on the wait for the refresh; the resend's 503 at 1 s; a
    // backoff of 0.5 s; the second attempt of the resend starts at 1.5 s with 0.5 s of the
    // deadline left.
    for (sleepers, step) in [(2, 500), (5, 500), (6, 500)] {
      await clock.waitForSleepers(sleepers)
      clock.advance(by: .milliseconds(Int64(step)))
    }
    await stub.waitForRequests(3)
    await clock.waitForSleepers(8)
    try #require(stub.requests.count >= 3)
    try #require(
      stub.requests[2].attributes[DeadlineAttribute.self]?.remaining == .milliseconds(500),
      "the retry of the resend has what is left of the first attempt's deadline")
    clock.advance(by: .milliseconds(500))
    let error = await courierError { try await task.linkedValue }
    #expect(error?.kind == .timedOut)
    #expect(error?.debugDescription.contains("overall deadline of 2") == true)
    #expect(clock.now.offset == .seconds(2))
    #expect(
      stub.requests.map { $0.headers[.authorization] } == [
        "Bearer old", "Bearer new-1", "Bearer new-1",
      ])
  }

  @Test("one RetryMiddleware shared by two clients spends one budget for both")
  func retryBudgetAcrossClients() async throws {
    let clock = TestClock()
    let retry = RetryMiddleware(
      policy: RetryPolicy(maximumAttempts: 2),
      budget: RetryBudget(ratio: 0, minimumRetries: 1, clock: clock), clock: clock,
      jitter: { _ in .zero })
    let stub = StubTransport(fallback: .status(503))
    let clientA = stubClient(stub, middleware: [retry])
    let clientB = stubClient(stub, middleware: [retry])
    let errorA = await courierError { try await clientA.send(Endpoint<Data>(.get, "a")) }
    let errorB = await courierError { try await clientB.send(Endpoint<Data>(.get, "b")) }
    #expect(errorA?.attempts == 2)
    #expect(errorB?.attempts == 1)
    #expect(errorB?.debugDescription.contains("retry budget is spent") == true)
    #expect(stub.requests.map(\.url.lastPathComponent) == ["a", "a", "b"])
  }
}
