import CourierCore
import CourierTesting
import Foundation
import Synchronization
import Testing

/// A streamed response whose reader drops it unread ends its request at once, as it does on
/// a client without observers: observing a request must not keep its stream alive.
@Suite("Observed streamed bodies end when the reader drops them", .timeLimit(.minutes(5)))
struct StreamedObservationTests {
  @Test("dropping an unread stream ends the request: in flight 0, span ended, gauge 0")
  func droppedUnread() async throws {
    let stub = StubTransport()
    stub.on(nil, "big", StubResponse.data(Data(repeating: 1, count: 200_000)).chunked(1_000))
    let sink = InMemoryMetricsSink()
    let tracer = InMemoryTracer()
    let heads = HeadRecorder()
    let client = Client(
      transport: stub, locale: "en", observers: [MetricsObserver(sink: sink), heads],
      tracer: tracer)
    do {
      let streamed = try await client.stream(
        Endpoint<Void>(.get, "http://a.test/big"), bufferSize: 1_024)
      #expect(streamed.head.status == 200)
      #expect(client.inFlightCount == 1)
    }
    // The stream's last copy is gone: the body ended, unread, right there.
    #expect(client.inFlightCount == 0)
    #expect(sink.gauge("courier_requests_in_flight", ["method": "GET", "host": "a.test"]) == 0)
    #expect(sink.counterTotal("courier_requests_total") == 1)
    #expect(tracer.spans.count == 2)
    #expect(tracer.spans.filter { !$0.isEnded }.isEmpty, "\(tracer.spans)")
    #expect(heads.streams == [false], "an observer is not handed the caller's stream")
  }
}

extension StreamedObservationTests {
  @Test("a streamed body that fails in mid-body marks the request span as failed")
  func failedInMidBody() async throws {
    let stub = StubTransport()
    stub.on(nil, "cut", Self.cutInMidBody)
    let tracer = InMemoryTracer()
    let client = Client(transport: stub, locale: "en", tracer: tracer)
    let streamed = try await client.stream(Endpoint<Void>(.get, "http://a.test/cut"))
    let error = await courierError {
      for try await _ in streamed.body {}
    }
    #expect(error?.kind == .connectionLost)
    #expect(client.inFlightCount == 0)
    let request = try #require(tracer.spans.first { $0.parent == nil })
    #expect(request.isEnded)
    #expect(request.status == .error("connectionLost"))
    #expect(request.attributes["error.type"] == .string("connectionLost"))
    #expect(request.errors.map(\.kind) == [.connectionLost])
    #expect(request.attributes["http.response.status_code"] == .int(200))
  }

  @Test("metrics count a stream cut in mid-body by its error, not as 2xx")
  func cutStreamInMetrics() async throws {
    let stub = StubTransport()
    stub.on(nil, "cut", Self.cutInMidBody)
    stub.on(nil, "whole", StubResponse.data(Data(repeating: 1, count: 4_000)).chunked(1_000))
    let sink = InMemoryMetricsSink()
    let ends = EndRecorder()
    let client = Client(
      transport: stub, locale: "en", observers: [MetricsObserver(sink: sink), ends])
    for path in ["cut", "whole"] {
      let streamed = try await client.stream(Endpoint<Void>(.get, "http://a.test/\(path)"))
      _ = await courierError { for try await _ in streamed.body {} }
    }
    let labels = ["method": "GET", "host": "a.test"]
    #expect(
      sink.counter("courier_requests_total", labels.merging(["outcome": "connectionLost"]) { $1 })
        == 1)
    #expect(sink.counter("courier_requests_total", labels.merging(["outcome": "2xx"]) { $1 }) == 1)
    #expect(sink.gauge("courier_requests_in_flight", labels) == 0)
    #expect(ends.outcomes == ["failed connectionLost, head 200", "succeeded 200"])
  }

  /// 4,000 bytes in chunks of 1,000 that fail with `connectionLost` after the last.
  private static var cutInMidBody: StubResponse {
    var answer = StubResponse.data(Data(repeating: 1, count: 4_000)).chunked(1_000)
    answer.streamFailure = CourierError(kind: .connectionLost, debugMessage: "scripted")
    return answer
  }
}

/// Notes how each request ended, as `requestEnded` tells it.
final class EndRecorder: ClientObserver {
  private let seen = Mutex<[String]>([])
  var outcomes: [String] { seen.withLock { $0 } }
  func requestEnded(
    _ request: ObservedRequest, result: Result<Response, CourierError>, total: Duration
  ) {
    let text =
      switch result {
      case .success(let response): "succeeded \(response.status)"
      case .failure(let error): "failed \(error.kind), head \(error.status ?? 0)"
      }
    seen.withLock { $0.append(text) }
  }
}

/// Notes whether each response head an observer hears carries a body stream.
final class HeadRecorder: ClientObserver {
  private let seen = Mutex<[Bool]>([])
  var streams: [Bool] { seen.withLock { $0 } }
  func responseHead(_ request: ObservedRequest, response: Response) {
    seen.withLock { $0.append(response.bodyStream != nil) }
  }
}
