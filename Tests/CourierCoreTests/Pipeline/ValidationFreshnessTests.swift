import CourierCore
import CourierTesting
import Foundation
import Synchronization
import Testing

private struct Item: Decodable, Sendable, Equatable {
  let id: Int
  let name: String
}

/// Replaces every response body with `body`, outside ``ResponseValidation``.
private struct ReplaceBody: Middleware {
  let body: Data
  func intercept(_ request: Request, next: Next) async throws -> Response {
    var response = try await next(request)
    response.body = body
    return response
  }
}

/// Changes one byte of every response body in place (`response.body[index] = byte`).
private struct EditBodyByte: Middleware {
  let index: Int
  let byte: UInt8
  func intercept(_ request: Request, next: Next) async throws -> Response {
    var response = try await next(request)
    response.body[response.body.startIndex + index] = byte
    return response
  }
}

/// Sets every response's status, outside ``ResponseValidation``.
private struct SetStatus: Middleware {
  let status: Int
  func intercept(_ request: Request, next: Next) async throws -> Response {
    var response = try await next(request)
    response.status = status
    return response
  }
}

/// Turns the envelope check off for what is below it, by editing the request's plan.
private struct DropEnvelopeBelow: Middleware {
  func intercept(_ request: Request, next: Next) async throws -> Response {
    var request = request
    request.attributes[ResponseValidationAttribute.self]?.overrides.envelope = .some(nil)
    return try await next(request)
  }
}

/// A response cache keyed by URL path that answers without calling `next` once it holds a
/// response: the kind of middleware one instance of which is shared between requests, and
/// between clients.
private final class PathCache: Middleware {
  private let stored = Mutex<[String: Response]>([:])
  func intercept(_ request: Request, next: Next) async throws -> Response {
    if let hit = stored.withLock({ $0[request.url.path] }) { return hit }
    let response = try await next(request)
    stored.withLock { $0[request.url.path] = response }
    return response
  }
}

@Suite(
  "A verdict found inside the chain holds only for the body and the plan it was about",
  .timeLimit(.minutes(5)))
struct ValidationFreshnessTests {
  static let ann = #"{"id":1,"name":"Ann"}"#
  static let bob = #"{"id":2,"name":"Bob"}"#

  @Test("a middleware's new body of the same length is what gets decoded")
  func sameLengthRewrite() async throws {
    #expect(Self.ann.utf8.count == Self.bob.utf8.count)
    let client = stubClient(
      StubTransport(fallback: .json(Self.ann)),
      middleware: [ReplaceBody(body: Data(Self.bob.utf8))])
    #expect(try await client.send(Endpoint<Item>(.get, "x")) == Item(id: 2, name: "Bob"))
  }

  @Test("a middleware's same-length body under an envelope rule is what gets decoded")
  func sameLengthRewriteUnderEnvelope() async throws {
    let client = stubClient(
      StubTransport(fallback: .json(#"{"code":0,"data":\#(Self.ann)}"#)),
      middleware: [ReplaceBody(body: Data(#"{"code":0,"data":\#(Self.bob)}"#.utf8))],
      pipeline: .envelope(.codeZero))
    #expect(try await client.send(Endpoint<Item>(.get, "x")) == Item(id: 2, name: "Bob"))
  }

  @Test("a same-length rewrite into a failure envelope fails with the new code")
  func sameLengthRewriteIntoFailure() async throws {
    let client = stubClient(
      StubTransport(fallback: .json(#"{"code":0,"msg":"ok","data":1}"#)),
      middleware: [ReplaceBody(body: Data(#"{"code":7,"msg":"no","data":1}"#.utf8))],
      pipeline: .envelope(.codeZero))
    let error = await courierError { try await client.send(Endpoint<Int>(.get, "x")) }
    #expect(error?.kind == .business)
    #expect(error?.code == "7")
  }

  @Test("a byte changed in place in the body is what gets decoded")
  func inPlaceEdit() async throws {
    // {"id":1,... → {"id":3,...: byte 6 is the digit.
    let client = stubClient(
      StubTransport(fallback: .json(Self.ann)),
      middleware: [EditBodyByte(index: 6, byte: UInt8(ascii: "3"))])
    #expect(try await client.send(Endpoint<Item>(.get, "x")) == Item(id: 3, name: "Ann"))
  }

  @Test("a status a middleware set after the checks is checked again before decoding")
  func statusRewrite() async throws {
    let client = stubClient(
      StubTransport(fallback: .json(Self.ann)), middleware: [SetStatus(status: 500)])
    let error = await courierError { try await client.send(Endpoint<Item>(.get, "x")) }
    #expect(error?.kind == .httpStatus)
    #expect(error?.response?.status == 500)
  }

  @Test("checks a middleware changed the plan of lend nothing to the endpoint's decoding")
  func editedPlan() async throws {
    let client = stubClient(
      StubTransport(fallback: .json(#"{"code":0,"data":\#(Self.ann)}"#)),
      middleware: [DropEnvelopeBelow(), ResponseValidation()], pipeline: .envelope(.codeZero))
    #expect(try await client.send(Endpoint<Item>(.get, "x")) == Item(id: 1, name: "Ann"))
  }

  @Test("decode(_:for:) applies B's envelope rule, not the one A's response was checked with")
  func otherEndpointsEnvelope() async throws {
    let body = #"{"code":0,"data":\#(Self.ann)}"#
    let client = stubClient(StubTransport(fallback: .json(body)), pipeline: .envelope(.codeZero))
    let a = try await client.response(for: Endpoint<Item>(.get, "a"))
    #expect(a.value == Item(id: 1, name: "Ann"))
    let b = try client.decode(a.response, for: Endpoint<Data>(.get, "b").envelope(nil))
    #expect(b == Data(body.utf8))
  }

  @Test("decode(_:for:) checks B's envelope when A's response was checked without one")
  func otherEndpointsEnvelopeAdded() async throws {
    let client = stubClient(StubTransport(fallback: .json(#"{"code":5,"msg":"No such user"}"#)))
    let a = try await client.response(for: Endpoint<Data>(.get, "a"))
    let error = await courierError {
      try client.decode(a.response, for: Endpoint<Data>(.get, "b").envelope(.codeZero))
    }
    #expect(error?.kind == .business)
    #expect(error?.code == "5")
  }

  @Test("decode(_:for:) applies B's accepted statuses, not A's")
  func otherEndpointsStatuses() async throws {
    let client = stubClient(StubTransport(fallback: .json(Self.ann)))
    let a = try await client.response(for: Endpoint<Item>(.get, "a"))
    let error = await courierError {
      try client.decode(a.response, for: Endpoint<Item>(.get, "b").accepting(.init(codes: 201)))
    }
    #expect(error?.kind == .httpStatus)
  }

  @Test("decode(_:for:) applies B's own pipeline, not A's")
  func otherEndpointsPipeline() async throws {
    let client = stubClient(StubTransport(fallback: .json(#"{"code":0,"data":7}"#)))
    let a = try await client.response(for: Endpoint<Data>(.get, "a").envelope(.codeZero))
    #expect(a.value == Data("7".utf8))
    let b = try client.decode(a.response, for: Endpoint<Data>(.get, "b").pipeline(.standard))
    #expect(b == Data(#"{"code":0,"data":7}"#.utf8))
  }

  @Test("the stages run once per attempt when nothing changes the response, retries included")
  func scannedOncePerAttempt() async throws {
    let count = CountingStage.Count()
    let pipeline = ResponsePipeline([
      CountingStage(count: count), StatusStage(), EnvelopeStage(.codeZero),
    ])
    let client = stubClient(
      StubTransport([.status(503), .json(#"{"code":0,"data":"ok"}"#)]),
      middleware: [RetryMiddleware(policy: RetryPolicy(baseDelay: .zero), budget: nil)],
      pipeline: pipeline)
    let decoded = try await client.response(for: Endpoint<String>(.get, "x"))
    #expect(decoded.value == "ok")
    #expect(decoded.response.attempts == 2)
    #expect(count.value.withLock { $0 } == 2)
  }

  @Test("a response a middleware changed after the checks passes them once more")
  func changedResponseCheckedAgain() async throws {
    let count = CountingStage.Count()
    let client = stubClient(
      StubTransport(fallback: .json(Self.ann)),
      middleware: [ReplaceBody(body: Data(Self.bob.utf8))],
      pipeline: ResponsePipeline([StatusStage(), CountingStage(count: count)]))
    #expect(try await client.send(Endpoint<Item>(.get, "x")).id == 2)
    #expect(count.value.withLock { $0 } == 2)
  }
}

@Suite("State shared across requests and clients: responses, verdicts", .timeLimit(.minutes(5)))
struct SharedValidationStateTests {
  static let envelope = #"{"code":0,"data":{"id":1,"name":"Ann"}}"#

  @Test("one Response value decoded for two endpoints, in both orders, gives each its own value")
  func oneResponseTwoEndpoints() async throws {
    let client = stubClient(
      StubTransport(fallback: .json(Self.envelope)), pipeline: .envelope(.codeZero))
    let wrapped = Endpoint<Data>(.get, "x")
    let whole = Endpoint<Data>(.get, "x").envelope(nil)
    let payload = Data(#"{"id":1,"name":"Ann"}"#.utf8)
    let body = Data(Self.envelope.utf8)
    let response = try await client.response(for: wrapped).response
    #expect(try client.decode(response, for: whole) == body)
    #expect(try client.decode(response, for: wrapped) == payload)
    #expect(try client.decode(response, for: whole) == body)
    let other = try await client.response(for: whole).response
    #expect(try client.decode(other, for: wrapped) == payload)
    #expect(try client.decode(other, for: whole) == body)
  }

  @Test("a request built with request(for:) and sent as a Request decodes as the endpoint does")
  func requestThenDecode() async throws {
    let client = stubClient(
      StubTransport(fallback: .json(Self.envelope)), pipeline: .envelope(.codeZero))
    let endpoint = Endpoint<Item>(.get, "x")
    let response = try await client.send(try client.request(for: endpoint))
    #expect(try client.decode(response, for: endpoint) == Item(id: 1, name: "Ann"))
  }

  @Test("two clients on one caching middleware each apply their own envelope rule")
  func sharedCacheAcrossClients() async throws {
    let cache = PathCache()
    let stub = StubTransport(fallback: .json(Self.envelope))
    let withEnvelope = stubClient(stub, middleware: [cache], pipeline: .envelope(.codeZero))
    let plain = stubClient(stub, middleware: [cache])
    #expect(try await withEnvelope.send(Endpoint<Item>(.get, "x")) == Item(id: 1, name: "Ann"))
    // Answered from the cache, above the second client's ResponseValidation.
    #expect(try await plain.send(Endpoint<Data>(.get, "x")) == Data(Self.envelope.utf8))
    #expect(stub.requests.count == 1)
  }

  @Test("two clients on one caching middleware each apply their own accepted statuses")
  func sharedCacheStatuses() async throws {
    let cache = PathCache()
    let stub = StubTransport(fallback: .json(#"{"id":1,"name":"Ann"}"#))
    let lenient = stubClient(stub, middleware: [cache])
    let strict = stubClient(
      stub, middleware: [cache],
      pipeline: ResponsePipeline([StatusStage(accepting: .init(codes: 201))]))
    #expect(try await lenient.send(Endpoint<Item>(.get, "x")).id == 1)
    let error = await courierError { try await strict.send(Endpoint<Item>(.get, "x")) }
    #expect(error?.kind == .httpStatus)
    #expect(stub.requests.count == 1)
  }

  @Test("a cached response handed to another endpoint of the same client is checked for it")
  func sharedCacheAcrossEndpoints() async throws {
    let cache = PathCache()
    let stub = StubTransport(fallback: .json(#"{"code":3,"msg":"Gone"}"#))
    let client = stubClient(stub, middleware: [cache])
    _ = try await client.send(Endpoint<Data>(.get, "x"))
    let error = await courierError {
      try await client.send(Endpoint<Data>(.get, "x").envelope(.codeZero))
    }
    #expect(error?.kind == .business)
    #expect(error?.code == "3")
    #expect(stub.requests.count == 1)
  }

  @Test("two clients sharing one body-rewriting middleware, concurrently, each decode its value")
  func sharedRewriterConcurrently() async throws {
    let rewrite = ReplaceBody(body: Data(#"{"code":0,"data":{"id":2,"name":"Bob"}}"#.utf8))
    let stub = StubTransport(fallback: .json(Self.envelope))
    let first = stubClient(stub, middleware: [rewrite], pipeline: .envelope(.codeZero))
    let second = stubClient(stub, middleware: [rewrite])
    async let a = first.send(Endpoint<Item>(.get, "x"))
    async let b = second.send(Endpoint<Data>(.get, "x"))
    #expect(try await a == Item(id: 2, name: "Bob"))
    #expect(try await b == rewrite.body)
  }
}
