import CourierCore
import CourierTesting
import Foundation
import Synchronization
import Testing

/// Promises of "How a request flows" (the README, the Getting started and Response pipeline
/// articles) and of `CourierError`'s documentation that no other test held (see `Docs/Promises.md`).
@Suite("Promises: how a request flows, and errors", .timeLimit(.minutes(5)))
struct PromisesFlowTests {
  /// The tasks that ran a piece of the chain, by a hash of the task.
  final class Tasks: Sendable {
    private let seen = Mutex<[String: Int]>([:])
    func record(_ place: String) {
      let task = withUnsafeCurrentTask { $0?.hashValue } ?? 0
      seen.withLock { $0[place] = task }
    }
    subscript(_ place: String) -> Int? { seen.withLock { $0[place] } }
  }

  /// Records the task it runs in as `name`.
  struct TaskRecording: Middleware {
    let name: String
    let tasks: Tasks
    func intercept(_ request: Request, next: Next) async throws -> Response {
      tasks.record(name)
      return try await next(request)
    }
  }

  @Test("the chain runs inline in the caller's task, down to a transport that observes tokens")
  func chainRunsInline() async throws {
    let tasks = Tasks()
    let stub = StubTransport()
    stub.on(nil, "**") { _ in
      tasks.record("transport")
      return .status(204)
    }
    let client = stubClient(stub, middleware: [TaskRecording(name: "middleware", tasks: tasks)])
    tasks.record("caller")
    try await client.send(Endpoint<Void>(.get, "x"))
    let caller = try #require(tasks["caller"])
    #expect(tasks["middleware"] == caller)
    #expect(tasks["transport"] == caller)
  }

  @Test("a transport that only understands Task cancellation runs in a task of its own")
  func plainTransportRunsApart() async throws {
    /// Knows nothing of `RequestCancellation`: the client must run it in a task it can cancel.
    struct PlainTransport: Transport {
      let tasks: Tasks
      func send(_ request: Request) async throws -> Response {
        tasks.record("transport")
        return Response(status: 204, request: request)
      }
    }
    let tasks = Tasks()
    let client = Client(
      baseURL: testBase, transport: PlainTransport(tasks: tasks),
      middleware: [TaskRecording(name: "middleware", tasks: tasks)])
    tasks.record("caller")
    try await client.send(Endpoint<Void>(.get, "x"))
    let caller = try #require(tasks["caller"])
    #expect(tasks["middleware"] == caller, "the middleware still run inline")
    #expect(tasks["transport"] != nil && tasks["transport"] != caller)
  }

  @Test("a plain error thrown by a response stage is badResponse, with that error underneath")
  func stageErrorIsUnderlying() async throws {
    struct Rejected: Error {}
    struct Rejecting: ResponseStage {
      func process(_ context: inout ResponseContext) throws { throw Rejected() }
    }
    let client = stubClient(
      StubTransport(fallback: .status(200)), pipeline: ResponsePipeline([Rejecting()]))
    let error = await courierError { try await client.send(Endpoint<Void>(.get, "x")) }
    #expect(error?.kind == .badResponse)
    #expect(error?.underlying is Rejected)
  }

  @Test(
    "CourierError(_:) maps cancellation, decoding and encoding errors, and the rest as asked")
  func wrapping() throws {
    struct Other: Error {}
    let request = Request(url: testBase)
    #expect(CourierError(CancellationError()).kind == .cancelled)
    let decoding = DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "bad"))
    #expect(CourierError(decoding).kind == .decoding)
    let encoding = EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "bad"))
    #expect(CourierError(encoding).kind == .invalidRequest)
    #expect(CourierError(Other()).kind == .transport)
    #expect(CourierError(Other(), otherwise: .middleware).kind == .middleware)
    let wrapped = CourierError(Other(), request: request, stage: "mine")
    #expect(wrapped.underlying is Other)
    #expect(wrapped.request?.url == request.url)
    #expect(wrapped.stage == "mine")
    // A CourierError comes back as it is, given only what it lacks.
    let original = CourierError(kind: .business, code: "40101", stage: "envelope")
    let again = CourierError(original, request: request, stage: "other")
    #expect(again.kind == .business && again.code == "40101")
    #expect(again.stage == "envelope")
    #expect(again.request?.url == request.url)
  }

  @Test("a request that never reached a transport counts 0 attempts")
  func noAttempts() async throws {
    let stub = StubTransport(fallback: .status(200))
    let error = await courierError {
      try await stubClient(stub).send(Endpoint<Void>(.get, "user/{id}"))
    }
    #expect(error?.kind == .invalidRequest)
    #expect(error?.attempts == 0)
    #expect(stub.requests.isEmpty)
  }

  @Test("an NSError underneath is shown as domain, code and message, never its user info")
  func foundationErrorWithoutUserInfo() {
    let underlying = NSError(
      domain: "ExampleDomain", code: 7,
      userInfo: [NSLocalizedDescriptionKey: "it broke", "ExampleSecret": "USERINFO-VALUE-42"])
    let error = CourierError(kind: .transport, underlying: underlying)
    #expect(error.debugDescription.contains("ExampleDomain code 7: it broke"))
    #expect(!error.debugDescription.contains("USERINFO-VALUE-42"))
    let url = URLError(
      .timedOut,
      userInfo: [
        NSURLErrorFailingURLErrorKey: URL(string: "https://h.test/x?token=URL-SECRET-1")!,
        "ExampleSecret": "USERINFO-VALUE-43",
      ])
    let timedOut = CourierError(kind: .timedOut, underlying: url).debugDescription
    #expect(timedOut.contains("token=***"))
    #expect(!timedOut.contains("URL-SECRET-1"))
    #expect(!timedOut.contains("USERINFO-VALUE-43"))
  }

  @Test("the reason is the error's localizedDescription and description")
  func reasonEverywhere() {
    let error = CourierError(kind: .notReachable)
    #expect(error.reason == "You seem to be offline. Check your network connection.")
    #expect(error.localizedDescription == error.reason)
    #expect(error.description == error.reason)
  }
}
