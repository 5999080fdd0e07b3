import Courier
import CourierTesting
import Foundation
import Testing
import TestingWithStubs

/// Three ways to test app code by swapping its transport; `UserDirectory` is the same code
/// the app ships.
@Suite("Testing app code with stubs", .timeLimit(.minutes(5)))
struct UserDirectoryTests {
  let base = URL(string: "https://api.example.test/")!

  // MARK: 1. StubTransport routes: answers by method and path, no network at all.

  @Test("a stubbed route answers, through the whole chain and envelope check")
  func stubRoutes() async throws {
    let stub = StubTransport()
    stub.on(.get, "v1/user/check/{phone}") { request in
      request.url.path.hasSuffix("/13800138000")
        ? .json(#"{"code":0,"msg":"ok","data":{"registered":true}}"#)
        : .json(#"{"code":0,"msg":"ok","data":{"registered":false}}"#)
    }
    let directory = UserDirectory(baseURL: base, transport: stub)
    #expect(await directory.status(of: "13800138000") == "registered")
    #expect(await directory.status(of: "13900139000") == "not registered")
    #expect(
      stub.requests.map(\.url.path) == ["/v1/user/check/13800138000", "/v1/user/check/13900139000"])
  }

  @Test("a business error in a 200 shows the server's message")
  func businessError() async throws {
    let stub = StubTransport()
    stub.on(.get, "v1/user/check/{phone}", .json(#"{"code":1001,"msg":"手机号格式不正确"}"#))
    let directory = UserDirectory(baseURL: base, transport: stub)
    #expect(await directory.status(of: "12345") == "手机号格式不正确")
  }

  // MARK: 2. Queued faults: fail the way a network does, then recover; time on a TestClock.

  @Test("a timed-out attempt is retried after the backoff, driven by a TestClock")
  func queuedFaults() async throws {
    let clock = TestClock()
    let stub = StubTransport()
    stub.enqueue(
      .failure(.timedOut), .json(#"{"code":0,"msg":"ok","data":{"registered":true}}"#))
    let directory = UserDirectory(baseURL: base, transport: stub, clock: clock)
    let status = Task { await directory.status(of: "13800138000") }
    await clock.waitForSleepers(1)  // the retry is waiting: no sleep in the test itself
    #expect(stub.requests.count == 1)
    clock.advance(by: .seconds(1))
    #expect(await status.value == "registered")
    #expect(stub.requests.count == 2)
  }

  @Test("three refused connections give the reason a person can read")
  func exhaustedRetries() async throws {
    let clock = TestClock()
    let stub = StubTransport(fallback: .failure(.cannotConnect))
    let directory = UserDirectory(baseURL: base, transport: stub, clock: clock)
    let status = Task { await directory.status(of: "13800138000") }
    await clock.waitForSleepers(1)
    clock.advance(by: .seconds(1))
    await clock.waitForSleepers(2)
    clock.advance(by: .seconds(2))
    #expect(await status.value == "Could not connect to the server. Please try again later.")
    #expect(stub.requests.count == 3)
  }

  // MARK: 3. MockServer with a dispatcher: real HTTP on 127.0.0.1, through URLSession.

  @Test("a MockServer dispatcher serves the real wire format")
  func mockServer() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.setDispatcher { request in
      request.path == "/v1/user/check/13800138000"
        ? .json(#"{"code":0,"msg":"ok","data":{"registered":true}}"#)
        : .json(#"{"code":404,"msg":"not here"}"#, status: 404)
    }
    let directory = UserDirectory(baseURL: server.baseURL, transport: URLSessionTransport())
    #expect(await directory.status(of: "13800138000") == "registered")
    let received = try await server.takeRequest()
    #expect(received.method == "GET")
    #expect(received.path == "/v1/user/check/13800138000")
    #expect(await directory.status(of: "0") == "not here")
  }
}
