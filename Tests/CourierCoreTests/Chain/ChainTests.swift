import CourierCore
import CourierTesting
import Foundation
import Synchronization
import Testing

@Suite("Middleware chain", .timeLimit(.minutes(5)))
struct ChainTests {
  @Test("middleware see the request outermost first and the response innermost first")
  func order() async throws {
    let recorder = Recorder()
    let stub = StubTransport([.text("ok")])
    let client = stubClient(
      stub,
      middleware: ["A", "B", "C"].map { RecordingMiddleware(name: $0, recorder: recorder) })
    let response = try await client.send(Request(url: testBase))
    #expect(response.status == 200)
    #expect(recorder.all == ["A in", "B in", "C in", "C out", "B out", "A out"])
  }

  @Test("a middleware can answer without calling next")
  func shortCircuit() async throws {
    struct Cache: Middleware {
      func intercept(_ request: Request, next: Next) async throws -> Response {
        Response(status: 203, body: Data("cached".utf8), request: request)
      }
    }
    let recorder = Recorder()
    let stub = StubTransport()
    let client = stubClient(
      stub,
      middleware: [
        RecordingMiddleware(name: "outer", recorder: recorder), Cache(),
        RecordingMiddleware(name: "inner", recorder: recorder),
      ])
    let response = try await client.send(Request(url: testBase))
    #expect(response.status == 203)
    #expect(response.bodyText == "cached")
    #expect(stub.requests.isEmpty)
    #expect(recorder.all == ["outer in", "outer out"])
  }

  @Test("a middleware can call next twice and keep the second response")
  func callsNextTwice() async throws {
    struct TwiceMiddleware: Middleware {
      func intercept(_ request: Request, next: Next) async throws -> Response {
        let first = try await next(request)
        var second = try await next(request)
        second.attempts = first.attempts + 1
        return second
      }
    }
    let stub = StubTransport([.status(503), .text("second")])
    let client = stubClient(stub, middleware: [TwiceMiddleware()])
    let response = try await client.send(Request(url: testBase))
    #expect(response.bodyText == "second")
    #expect(response.attempts == 2)
    #expect(stub.requests.count == 2)
  }

  @Test("a middleware can rewrite the request and the response")
  func rewrites() async throws {
    struct Rewrite: Middleware {
      func intercept(_ request: Request, next: Next) async throws -> Response {
        var request = request
        try request.headers.set("X-Added", "yes")
        var response = try await next(request)
        response.status = 299
        return response
      }
    }
    let stub = StubTransport([.status(200)])
    let response = try await stubClient(stub, middleware: [Rewrite()]).send(
      Request(url: testBase))
    #expect(response.status == 299)
    #expect(stub.requests.first?.headers["x-added"] == "yes")
    #expect(response.request.headers["X-Added"] == "yes")
  }

  @Test("the chain is composed once: every request gets the same Next objects")
  func chainBuiltOnce() async throws {
    final class NextIdentities: Sendable {
      let ids = Mutex<Set<ObjectIdentifier>>([])
    }
    struct Capture: Middleware {
      let identities: NextIdentities
      func intercept(_ request: Request, next: Next) async throws -> Response {
        _ = identities.ids.withLock { $0.insert(ObjectIdentifier(next)) }
        return try await next(request)
      }
    }
    let identities = NextIdentities()
    let client = stubClient(
      StubTransport(fallback: .status(200)), middleware: [Capture(identities: identities)])
    for _ in 0..<5 { _ = try await client.send(Request(url: testBase)) }
    #expect(identities.ids.withLock { $0.count } == 1)
  }

  @Test("an error thrown by a middleware leaves as CourierError naming the stage")
  func middlewareErrorIsWrapped() async throws {
    struct Boom: Error {}
    struct Failing: Middleware {
      func intercept(_ request: Request, next: Next) async throws -> Response { throw Boom() }
    }
    let error = await courierError {
      try await stubClient(StubTransport(), middleware: [Failing()]).send(Request(url: testBase))
    }
    #expect(error?.kind == .middleware)
    #expect(error?.stage == "middleware Failing")
    #expect(error?.underlying is Boom)
  }

  @Test("a stubbed transport error passes through the chain with its kind")
  func transportError() async throws {
    let stub = StubTransport([
      .failure(CourierError(kind: .cannotConnect, debugMessage: "refused"))
    ])
    let recorder = Recorder()
    let error = await courierError {
      try await stubClient(stub, middleware: [RecordingMiddleware(name: "m", recorder: recorder)])
        .send(Request(url: testBase))
    }
    #expect(error?.kind == .cannotConnect)
    // The stub says so: a scripted failure, not the network's.
    #expect(error?.stage == "stub")
    #expect(error?.attempts == 1)
    #expect(recorder.all == ["m in"])
  }
}

@Suite("Cancellation", .timeLimit(.minutes(5)))
struct CancellationTests {
  @Test("each request has a token of its own, and a cancelled one does not reach later requests")
  func tokensArePerRequest() async throws {
    /// Keeps every token it sees as the current one.
    final class Keeper: Sendable {
      let tokens = Mutex<[RequestCancellation]>([])
    }
    struct Keeping: Middleware {
      let keeper: Keeper
      func intercept(_ request: Request, next: Next) async throws -> Response {
        if let token = RequestCancellation.current { keeper.tokens.withLock { $0.append(token) } }
        return try await next(request)
      }
    }
    let keeper = Keeper()
    let kept = stubClient(
      StubTransport(fallback: .status(200)), middleware: [Keeping(keeper: keeper)])
    for _ in 0..<100 { _ = try await kept.send(Request(url: testBase)) }
    let tokens = keeper.tokens.withLock { $0 }
    #expect(Set(tokens.map(ObjectIdentifier.init)).count == 100)
    // A request cancelled by cancelAll leaves its token cancelled; a later request's token is
    // not.
    let stub = StubTransport([.never], fallback: .status(200))
    let client = stubClient(stub)
    let task = Task { try await client.send(Request(url: testBase)) }
    await stub.waitForRequests(1)
    client.cancelAll()
    _ = await courierError { try await task.linkedValue }
    for _ in 0..<10 {
      let response = try await client.send(Request(url: testBase))
      #expect(response.status == 200)
    }
  }

  @Test("cancelling the calling task cancels the request")
  func taskCancellation() async throws {
    let stub = StubTransport([.never])
    let client = stubClient(stub)
    let task = Task { () async throws -> Response in
      try await client.send(Request(url: testBase))
    }
    await stub.waitForRequests(1)
    task.cancel()
    let error = await courierError { try await task.linkedValue }
    #expect(error?.kind == .cancelled)
    #expect(error?.reason == "The request was cancelled.")
    #expect(client.inFlightCount == 0)
  }

  @Test("a task that is already cancelled does not send")
  func alreadyCancelled() async throws {
    let stub = StubTransport(fallback: .status(200))
    let client = stubClient(stub)
    let task = Task { () async throws -> Response in
      withUnsafeCurrentTask { $0?.cancel() }
      return try await client.send(Request(url: testBase))
    }
    let error = await courierError { try await task.linkedValue }
    #expect(error?.kind == .cancelled)
    #expect(stub.requests.isEmpty)
  }

  @Test("cancelAll cancels every request in flight and none after")
  func cancelAll() async throws {
    let stub = StubTransport(fallback: .never)
    let client = stubClient(stub)
    let tasks = (0..<20).map { _ in
      Task { () async throws -> Response in
        try await client.send(Request(url: testBase))
      }
    }
    await stub.waitForRequests(20)
    #expect(client.cancelAll() == 20)
    for task in tasks {
      let error = await courierError { try await task.linkedValue }
      #expect(error?.kind == .cancelled)
    }
    #expect(client.inFlightCount == 0)
  }

  @Test("cancelAll reaches a request another client sends from inside the chain")
  func nestedRequestIsCancelled() async throws {
    struct Nested: Middleware {
      let inner: Client
      func intercept(_ request: Request, next: Next) async throws -> Response {
        try await inner.send(Request(url: testBase))
      }
    }
    let innerStub = StubTransport(fallback: .never)
    let inner = stubClient(innerStub)
    let outer = stubClient(StubTransport(), middleware: [Nested(inner: inner)])
    let task = Task { try await outer.send(Request(url: testBase)) }
    await innerStub.waitForRequests(1)
    #expect(outer.cancelAll() == 1)
    let error = await courierError { try await task.linkedValue }
    #expect(error?.kind == .cancelled)
    #expect(inner.inFlightCount == 0)
  }

  @Test("a transport that only knows Task cancellation is still reached by cancelAll")
  func plainTransportIsCancelled() async throws {
    struct SleepyTransport: Transport {
      let started: StubTransport
      func send(_ request: Request) async throws -> Response {
        _ = try await started.send(request)
        try await Task.sleep(for: .seconds(3600))
        return Response(status: 200, request: request)
      }
    }
    let started = StubTransport(fallback: .status(200))
    let client = Client(baseURL: testBase, transport: SleepyTransport(started: started))
    let task = Task { try await client.send(Request(url: testBase)) }
    await started.waitForRequests(1)
    #expect(client.cancelAll() == 1)
    let error = await courierError { try await task.linkedValue }
    #expect(error?.kind == .cancelled)
  }

  @Test("a plain transport's cancellation handler runs off the process's timer thread")
  func cancellationHandlerRunsOffTheTimerThread() async throws {
    /// Knows only Task cancellation; its handler records the thread it runs on. A handler
    /// that waits (`URLSessionTask.cancel()` waits for URLSession's queue on Linux) would hold
    /// every other timeout in the process if it ran on the timer thread.
    struct RecordingTransport: Transport {
      final class Record: Sendable {
        let continuation = Mutex<CheckedContinuation<Void, Never>?>(nil)
        let threadName = Mutex<String?>(nil)
      }
      let record: Record
      func send(_ request: Request) async throws -> Response {
        await withTaskCancellationHandler {
          await withCheckedContinuation { continuation in
            record.continuation.withLock { $0 = continuation }
            if Task.isCancelled { record.continuation.withLock { $0.take() }?.resume() }
          }
        } onCancel: {
          // The kernel's name of the running thread (Linux); empty elsewhere.
          let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
          record.threadName.withLock { $0 = name.trimmingCharacters(in: .whitespacesAndNewlines) }
          record.continuation.withLock { $0.take() }?.resume()
        }
        throw CancellationError()
      }
    }
    let record = RecordingTransport.Record()
    let client = Client(
      baseURL: testBase, transport: RecordingTransport(record: record),
      middleware: [TimeoutMiddleware(attempt: .milliseconds(20), overall: nil)])
    let error = await courierError { try await client.send(Request(url: testBase)) }
    #expect(error?.kind == .timedOut)
    let name = try #require(record.threadName.withLock { $0 })
    #expect(name != "CourierTimeouts", "the handler ran on the timer thread")
  }
}
