import CourierCore
import CourierTesting
import Foundation
import Synchronization
import Testing

/// Records what it sees come back through the chain: a status, or an error's kind and code.
struct Witness: Middleware {
  let recorder: Recorder
  func intercept(_ request: Request, next: Next) async throws -> Response {
    do {
      let response = try await next(request)
      recorder.record("response \(response.status)")
      return response
    } catch let error as CourierError {
      recorder.record("error \(error.kind) \(error.code ?? "-")")
      throw error
    }
  }
}

/// A stage that counts how often it runs.
struct CountingStage: ResponseStage {
  final class Count: Sendable {
    let value = Mutex(0)
  }
  let count: Count
  func process(_ context: inout ResponseContext) throws { count.value.withLock { $0 += 1 } }
}

@Suite("Status and envelope verdicts inside the chain", .timeLimit(.minutes(5)))
struct ValidationInChainTests {
  @Test("middleware see a business code inside a 200 and a 503 as thrown CourierErrors")
  func middlewareSeeVerdicts() async throws {
    let recorder = Recorder()
    let stub = StubTransport([
      .json(#"{"code":40101,"msg":"Token expired","data":null}"#), .status(503),
      .json(#"{"code":0,"data":{"id":1,"name":"Li"}}"#),
    ])
    let client = stubClient(
      stub, middleware: [Witness(recorder: recorder)], pipeline: .envelope(.codeZero))
    struct User: Decodable, Sendable { let id: Int }
    let business = await courierError { try await client.send(Endpoint<User>(.get, "me")) }
    let status = await courierError { try await client.send(Endpoint<User>(.get, "me")) }
    let user = try await client.send(Endpoint<User>(.get, "me"))
    #expect(business?.kind == .business)
    #expect(business?.reason == "Token expired")
    #expect(status?.kind == .httpStatus)
    #expect(user.id == 1)
    #expect(recorder.all == ["error business 40101", "error httpStatus -", "response 200"])
  }

  @Test("the stages run once per attempt, and decoding reuses what they found")
  func scannedOnce() async throws {
    let count = CountingStage.Count()
    let pipeline = ResponsePipeline([
      StatusStage(), CountingStage(count: count), EnvelopeStage(.codeZero),
    ])
    let client = stubClient(
      StubTransport(fallback: .json(#"{"code":0,"data":"ok"}"#)), pipeline: pipeline)
    #expect(try await client.send(Endpoint<String>(.get, "x")) == "ok")
    #expect(count.value.withLock { $0 } == 1)
  }

  @Test("a plain request is not checked unless it carries a plan")
  func plainRequests() async throws {
    let client = stubClient(StubTransport(fallback: .status(500)))
    let response = try await client.send(Request(url: testBase))
    #expect(response.status == 500)
    let planned = try client.request(for: Endpoint<Void>(.get, "x"))
    let error = await courierError { try await client.send(planned) }
    #expect(error?.kind == .httpStatus)
  }

  @Test("ResponseValidation placed in the list checks there: inside it the raw response passes")
  func explicitPosition() async throws {
    let outer = Recorder()
    let inner = Recorder()
    let client = stubClient(
      StubTransport(fallback: .status(503)),
      middleware: [Witness(recorder: outer), ResponseValidation(), Witness(recorder: inner)])
    _ = await courierError { try await client.send(Endpoint<Void>(.get, "x")) }
    #expect(outer.all == ["error httpStatus -"])
    #expect(inner.all == ["response 503"])
  }

  @Test("a retry reacts to a 503 verdict, and auth to business code 40101, end to end")
  func retryAndAuth() async throws {
    let tokens = CountingTokens()
    let stub = StubTransport()
    let attempts = Mutex(0)
    stub.on(nil, "**") { request in
      guard request.headers[.authorization] == "Bearer new-1" else {
        return .json(#"{"code":40101,"msg":"Token expired"}"#)
      }
      let attempt = attempts.withLock { count in
        count += 1
        return count
      }
      return attempt == 1 ? .status(503) : .json(#"{"code":0,"data":7}"#)
    }
    let client = stubClient(
      stub,
      middleware: [
        AuthMiddleware(provider: tokens, isRejection: AuthMiddleware.businessCodes(["40101"])),
        RetryMiddleware(policy: RetryPolicy(baseDelay: .zero), budget: nil),
      ],
      pipeline: .envelope(.codeZero))
    let decoded = try await client.response(for: Endpoint<Int>(.get, "n"))
    #expect(decoded.value == 7)
    #expect(decoded.response.attempts == 2)
    #expect(tokens.refreshes == 1)
    #expect(stub.requests.count == 3)
  }
}
