import CourierReachability
import CourierTesting
import Foundation
import Synchronization
import Testing

@testable import CourierCore

/// Which isolation each attempt that reached the end of a hand-made chain ran on.
private final class HuntIsolations: Sendable {
  private let entries = Mutex<[Bool]>([])
  /// Records one attempt and returns its number, from 1.
  func record(onCaller: Bool) -> Int {
    entries.withLock {
      $0.append(onCaller)
      return $0.count
    }
  }
  var all: [Bool] { entries.withLock { $0 } }
}

/// The innermost layer of a hand-made chain: fails the first attempt as a network stack does
/// (stage `transport`, the stack's error underneath), answers the second with a `200`, and
/// records whether each ran on `caller`.
private struct HuntEnd: Middleware {
  let caller: HuntCaller
  let isolations: HuntIsolations

  nonisolated(nonsending) func intercept(
    _ request: Request, next: Next
  ) async throws
    -> Response
  {
    let isolation = #isolation
    let attempt = isolations.record(onCaller: isolation.map { $0 === caller } ?? false)
    guard attempt > 1 else {
      throw CourierError(
        kind: .cannotConnect, debugMessage: "stack failure",
        underlying: HuntStackFailure(), request: request, attempts: 1, stage: "transport")
    }
    return Response(status: 200, request: request)
  }
}

private struct HuntStackFailure: Error, CustomStringConvertible {
  var description: String { "Connection refused" }
}

/// An actor that calls a middleware itself, as a chain composed by hand does.
private actor HuntCaller {
  func run(_ middleware: any Middleware, _ request: Request, next: Next) async throws -> Response {
    try await middleware.intercept(request, next: next)
  }
}

@Suite(
  "Failure handling out of the async frames behaves as inside them", .timeLimit(.minutes(5)))
struct FrameRefactorHuntTests {
  static let hostURL = URL(string: "https://api.example.test/v1/ping")!

  @Test(
    "Reachability's second attempt after an offline failure runs on the caller's executor, as the first"
  )
  func reachabilityRetryStaysOnCallersExecutor() async throws {
    let caller = HuntCaller()
    let isolations = HuntIsolations()
    let end = HuntEnd(caller: caller, isolations: isolations)
    let next = Next(end, before: Next(innermost: { _ in fatalError("not reached") }), stage: "end")
    let monitor = FakePathMonitor(.unsatisfied(reason: .noUsableInterface))
    let middleware = ReachabilityMiddleware(
      monitor: monitor, whenOffline: .wait(upTo: .seconds(10)), clock: TestClock())
    let request = Request(method: .get, url: Self.hostURL)
    let task = Task { try await caller.run(middleware, request, next: next) }
    await monitor.waitForSubscribers(1)
    monitor.status = .satisfied(interfaces: [.wifi])
    let response = try await task.value
    #expect(response.status == 200)
    // Both attempts run on the caller's actor: `intercept` is `nonisolated(nonsending)`, and
    // so must be `afterFailure`, which runs the second (a plain async function would leave
    // the caller's executor).
    #expect(isolations.all == [true, true])
  }

  // MARK: - The rest of the behaviour

  static let phases = Response.Timings(
    connect: .milliseconds(4), requestSent: .milliseconds(5), connectionReused: false,
    remoteAddress: "192.0.2.1:443")

  @Test("Response timings: a value, round-tripped, shared by copies only until one sets them")
  func timingsValueSemantics() {
    let request = Request(method: .get, url: Self.hostURL)
    let made = Response(status: 200, request: request, timings: Self.phases)
    #expect(made.timings == Self.phases)
    var copy = made
    copy.timings.total = .milliseconds(9)
    #expect(made.timings == Self.phases)
    #expect(copy.timings.total == .milliseconds(9))
    copy.timings = Response.Timings()
    #expect(copy.timings == Response.Timings())
    // An error falls back to its response's timings, and its own win once set.
    var error = CourierError(kind: .httpStatus, response: made)
    #expect(error.timings == Self.phases)
    error.timings = Response.Timings(total: .seconds(1))
    #expect(error.timings == Response.Timings(total: .seconds(1)))
    #expect(error.response?.timings == Self.phases)
  }

  @Test("Client: a failure keeps the attempt's phases, gains its total, and observers hear it once")
  func clientFailureTimings() async throws {
    var failure = CourierError(kind: .connectionLost, debugMessage: "cut", stage: "transport")
    failure.timings = Self.phases
    let observer = HuntObserver()
    let client = Client(
      transport: StubTransport([.failure(failure)]), locale: "en", observers: [observer])
    let error = try #require(
      await courierError { try await client.send(Request(method: .get, url: Self.hostURL)) })
    #expect(error.kind == .connectionLost)
    #expect(error.debugMessage == "cut")
    #expect(error.timings?.connect == .milliseconds(4))
    #expect(error.timings?.remoteAddress == "192.0.2.1:443")
    #expect(error.timings?.total != nil)
    #expect(observer.failures.map(\.kind) == [.connectionLost])
  }

  @Test("Client: a cancelled task and a client shut down are refused, localised, observed")
  func clientRefusals() async throws {
    let observer = HuntObserver()
    let client = Client(
      transport: StubTransport(fallback: .status(200)), locale: "zh-Hans", observers: [observer])
    let request = Request(method: .get, url: Self.hostURL)
    let task = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return await courierError { try await client.send(request) }
    }
    let cancelled = try #require(await task.value)
    #expect(cancelled.kind == .cancelled)
    #expect(cancelled.stage == "client")
    #expect(cancelled.reason == ReasonCatalog.standard.reason(for: cancelled, locale: "zh-Hans"))
    #expect(cancelled.reason != CourierError(kind: .cancelled).reason, "not the English text")
    await client.shutdown(gracePeriod: .zero, clock: TestClock())
    let refused = try #require(await courierError { try await client.send(request) })
    #expect(refused.kind == .shutDown)
    #expect(observer.failures.map(\.kind) == [.cancelled, .shutDown])
  }

  @Test("Client: a request cancelled by cancelAll that then fails otherwise is kind cancelled")
  func clientCancelledWhileFailing() async throws {
    let cancelled = HuntGate()
    let client = Client(
      transport: HuntCancelledTransport(entered: cancelled, released: HuntGate()), locale: "en")
    let task = Task {
      await courierError { try await client.send(Request(method: .get, url: Self.hostURL)) }
    }
    await cancelled.waitUntilEntered()
    #expect(client.cancelAll() == 1)
    let error = try #require(await task.value)
    #expect(error.kind == .cancelled)
    #expect(error.debugMessage == "reset; cancelled while failing as connectionLost")
    #expect(error.timings?.total != nil)
  }

  @Test("Logging: a failure's line, severity, kind and the phases the attempt reached")
  func loggingFailureLine() async throws {
    let sink = InMemoryLogSink()
    let logging = LoggingMiddleware(level: .headers, sink: sink)
    let request = Request(method: .get, url: Self.hostURL)
    var failure = CourierError(kind: .connectionLost, request: request, stage: "transport")
    failure.timings = Self.phases
    let thrown = failure
    let error = await courierError {
      try await logging.intercept(request, next: Next { _ in throw thrown })
    }
    #expect(error?.kind == .connectionLost)
    let events = sink.events
    #expect(events.map(\.severity) == [.debug, .error])
    #expect(events.first?.message == "GET https://api.example.test/v1/ping")
    let line = try #require(events.last)
    #expect(line.message.hasPrefix("GET https://api.example.test/v1/ping failed: connectionLost ("))
    #expect(line.message.hasSuffix(" ms) connect 4.0ms"))
    #expect(line.metadata["error_kind"] == "connectionLost")
    #expect(line.metadata["remote_address"] == "192.0.2.1:443")
    #expect(line.metadata["status"] == nil)
  }

  @Test("Logging: a 503 the pipeline rejected is a warning with its status")
  func loggingRejectedResponse() async throws {
    let sink = InMemoryLogSink()
    let logging = LoggingMiddleware(level: .basic, sink: sink)
    let request = Request(method: .post, url: Self.hostURL)
    let rejected = CourierError(
      kind: .httpStatus, request: request,
      response: Response(status: 503, request: request, timings: Self.phases))
    _ = await courierError {
      try await logging.intercept(request, next: Next { _ in throw rejected })
    }
    let line = try #require(sink.events.last)
    #expect(sink.events.count == 1)
    #expect(line.severity == .warning)
    #expect(line.message.hasPrefix("POST https://api.example.test/v1/ping → 503 httpStatus ("))
    #expect(line.metadata["status"] == "503")
    #expect(line.metadata["timings"] == "connect 4.0ms")
    #expect(line.metadata["remote_address"] == nil, "the address is for headers and above")
  }

  @Test("Logging: a streamed body logs its head, then its end line with its size")
  func loggingStreamedBody() async throws {
    let sink = InMemoryLogSink()
    let logging = LoggingMiddleware(level: .body, sink: sink)
    let request = Request(method: .get, url: Self.hostURL)
    let response = try await logging.intercept(
      request,
      next: Next { request in
        var response = Response(status: 200, request: request)
        response.bodyStream = ResponseBodyStream(Data("hello".utf8))
        return response
      })
    #expect(sink.events.map(\.severity) == [.debug, .info])
    #expect(sink.events.last?.metadata["response_bytes"] == "streamed")
    #expect(sink.events.last?.metadata["response_body"] == "<streamed, not logged>")
    var bytes = Data()
    for try await chunk in try #require(response.bodyStream) { bytes.append(chunk) }
    #expect(bytes == Data("hello".utf8))
    let end = try #require(sink.events.last)
    #expect(sink.events.count == 3)
    #expect(end.severity == .info)
    #expect(
      end.message.hasPrefix("GET https://api.example.test/v1/ping → 200 stream ended: 5 bytes ("))
    #expect(end.metadata["response_bytes"] == "5")
    #expect(end.metadata["response_body"] == nil)
    #expect(end.metadata["status"] == "200")
  }

  @Test("Timeout: the timer's cancellation becomes timedOut, keeping the phases reached")
  func timeoutKeepsReachedPhases() async throws {
    let clock = TestClock()
    let timeout = TimeoutMiddleware(attempt: .seconds(3), overall: nil, clock: clock)
    let request = Request(method: .get, url: Self.hostURL)
    let entered = HuntGate()
    let task = Task {
      await courierError {
        try await timeout.intercept(
          request,
          next: Next { request in
            entered.enter()
            try? await RequestCancellation.sleep(for: .seconds(60), clock: clock)
            var cut = CourierError(kind: .cancelled, request: request, stage: "transport")
            cut.timings = Self.phases
            throw cut
          })
      }
    }
    await entered.waitUntilEntered()
    await clock.waitForSleepers(2)
    clock.advance(by: .seconds(3))
    let error = try #require(await task.value)
    #expect(error.kind == .timedOut)
    #expect(error.debugMessage.contains("per-attempt timeout of 3"))
    #expect(error.timings == Self.phases)
  }
}

/// Records the failures a client reports to its observers.
private final class HuntObserver: ClientObserver {
  private let recorded = Mutex<[CourierError]>([])
  func requestFailed(_ request: ObservedRequest, error: CourierError) {
    recorded.withLock { $0.append(error) }
  }
  var failures: [CourierError] { recorded.withLock { $0 } }
}

/// Says when code has started; awaited without polling.
private final class HuntGate: Sendable {
  private let state = Mutex<(entered: Bool, waiters: [CheckedContinuation<Void, Never>])>(
    (false, []))

  func enter() {
    let waiters = state.withLock {
      $0.entered = true
      let waiters = $0.waiters
      $0.waiters = []
      return waiters
    }
    for waiter in waiters { waiter.resume() }
  }

  func waitUntilEntered() async {
    await withCheckedContinuation { continuation in
      let now = state.withLock {
        if $0.entered { return true }
        $0.waiters.append(continuation)
        return false
      }
      if now { continuation.resume() }
    }
  }
}

/// A transport that waits for the request's cancellation, then fails as a connection reset
/// (not as a cancellation), as a transport whose socket was closed under it may.
private struct HuntCancelledTransport: Transport {
  let entered: HuntGate
  let released: HuntGate

  func send(_ request: Request) async throws -> Response {
    await RequestCancellation.withCancellationHandler {
      entered.enter()
      await released.waitUntilEntered()
    } onCancel: { [released] in
      released.enter()
    }
    throw CourierError(kind: .connectionLost, debugMessage: "reset", stage: "transport")
  }

  var observesRequestCancellation: Bool { true }
}
