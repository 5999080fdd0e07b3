import CourierCore
import CourierTesting
import Foundation
import Testing

/// Which span a request span hangs under when the request was taken from a response and sent
/// again, as Observability.md says.
@Suite("The parent of a request sent again", .timeLimit(.minutes(5)))
struct SpanParentTests {
  /// The request spans of a first send and a second one of `response.request`, changed by
  /// `change` in between.
  private func spans(
    change: (inout Request) -> Void
  ) async throws -> (first: InMemoryTracer.Span, second: InMemoryTracer.Span) {
    let stub = StubTransport()
    stub.on(nil, "again", .text("ok"))
    let tracer = InMemoryTracer()
    let client = Client(transport: stub, locale: "en", tracer: tracer)
    let url = try #require(URL(string: "http://a.test/again"))
    let response = try await client.send(Request(method: .get, url: url))
    var again = response.request
    change(&again)
    _ = try await client.send(again)
    let requests = tracer.spans.filter { $0.name == "GET" }
    try #require(requests.count == 2)
    return (requests[0], requests[1])
  }

  @Test("sent again as it came back: a child of the first request's span, in its trace")
  func childOfTheFirst() async throws {
    let (first, second) = try await spans { _ in }
    #expect(first.parent == nil)
    #expect(second.parent == first.context)
    #expect(second.context.traceID == first.context.traceID)
  }

  @Test("without its RequestIDAttribute and traceparent: a trace of its own")
  func newTrace() async throws {
    let (first, second) = try await spans {
      $0.attributes[RequestIDAttribute.self] = nil
      $0.headers.remove(.traceparent)
    }
    #expect(second.parent == nil)
    #expect(second.context.traceID != first.context.traceID)
  }

  @Test("without its RequestIDAttribute only: under the attempt its traceparent names")
  func underTheAttempt() async throws {
    let (first, second) = try await spans { $0.attributes[RequestIDAttribute.self] = nil }
    #expect(second.parent != nil && second.parent != first.context)
    #expect(second.context.traceID == first.context.traceID)
  }
}
