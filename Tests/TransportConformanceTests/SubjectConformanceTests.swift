import Courier
import CourierTesting
import Foundation
import Testing

/// The cases that make sense for every transport, the stub included: statuses and empty
/// bodies, cancellation by task and by `cancelAll()`, and many requests at once.
@Suite("Transport conformance, stub included", .timeLimit(.minutes(5)))
struct SubjectConformanceTests {
  @Test(
    "status codes come back as responses; the pipeline decides what they mean",
    arguments: Subject.allCases)
  func statuses(subject: Subject) async throws {
    let backend = try Backend(subject)
    defer { backend.shutdown() }
    backend.answer { path in
      let status = Int(path.split(separator: "/").last ?? "") ?? 500
      return .respond(status: status, body: Data("s\(status)".utf8))
    }
    for status in [200, 201, 202, 400, 401, 403, 409, 422, 429, 500, 502, 503] {
      let response = try await backend.client.send(
        Request(url: URL(string: "s/\(status)", relativeTo: backend.client.baseURL)!))
      #expect(response.status == status)
      #expect(response.bodyText == "s\(status)")
    }
    let failure = await courierError {
      try await backend.client.send(Endpoint<Data>(.get, "s/503"))
    }
    #expect(failure?.kind == .httpStatus)
    #expect(failure?.status == 503)
  }

  @Test(
    "bad header names and values are rejected at insertion, before any transport sees them",
    arguments: Subject.allCases)
  func headersRejectedAtInsertion(subject: Subject) async throws {
    let backend = try Backend(subject)
    defer { backend.shutdown() }
    var headers = HTTPHeaders()
    for value in ["a\r\nX-Injected: 1", "a\nb", "nul\u{0}", "bell\u{7}", "Zürich", "北京"] {
      #expect(throws: CourierError.self) { try headers.add("X-Value", value) }
    }
    for name in ["Städte", "X Space", "X:Colon", ""] {
      #expect(throws: CourierError.self) { try headers.add(name, "v") }
    }
    #expect(headers.isEmpty)
    // Values are ASCII (non-ASCII is refused, see above): percent-encoded text goes through.
    try headers.add("X-City", "Z%C3%BCrich")
    backend.answer { _ in .respond(status: 204, body: Data()) }
    var request = Request(url: URL(string: "h", relativeTo: backend.client.baseURL)!)
    request.headers = headers
    #expect(try await backend.client.send(request).status == 204)
  }

  @Test("an empty 200 body is empty Data, and Void decodes", arguments: Subject.allCases)
  func emptyBody(subject: Subject) async throws {
    let backend = try Backend(subject)
    defer { backend.shutdown() }
    backend.answer { _ in .respond(status: 200, body: Data()) }
    #expect(try await backend.client.send(Endpoint<Data>(.get, "empty")).isEmpty)
    try await backend.client.send(Endpoint<Void>(.get, "empty"))
  }

  @Test("cancelling the task mid-request ends it with kind cancelled", arguments: Subject.allCases)
  func taskCancellation(subject: Subject) async throws {
    let backend = try Backend(subject)
    defer { backend.shutdown() }
    backend.answer { _ in .hang }
    let client = backend.client
    let task = Task { try await client.send(Endpoint<Data>(.get, "hang")) }
    try await backend.waitForRequests(1)
    task.cancel()
    let error = await courierError { try await task.linkedValue }
    #expect(error?.kind == .cancelled)
    #expect(client.inFlightCount == 0)
  }

  @Test(
    "a cancellation at any moment of a send ends it as cancelled: 100 sends, each cancelled at once",
    arguments: Subject.allCases)
  func cancellationAtAnyMoment(subject: Subject) async throws {
    // Each send is cancelled soon after its task exists, so the cancellation lands anywhere
    // from before the request is built to while it waits on the server: before the transport
    // made its URLSession task (which URLSessionTransport creates on its own queue), while
    // the task is being made, or after. A cancellation lost in between would leave its send
    // hanging until the suite's time limit.
    let backend = try Backend(subject)
    defer { backend.shutdown() }
    backend.answer { _ in .hang }
    let client = backend.client
    for index in 0..<100 {
      let task = Task { try await client.send(Endpoint<Data>(.get, "hang/\(index)")) }
      // A different moment each time: a few turns of the executor before the cancellation.
      for _ in 0..<(index % 12) { await Task.yield() }
      task.cancel()
      let error = await courierError { try await task.linkedValue }
      #expect(error?.kind == .cancelled, "send \(index): \(String(describing: error))")
    }
    #expect(client.inFlightCount == 0)
  }

  @Test(
    "cancelAll cancels 20 requests in flight, and the client works afterwards",
    arguments: Subject.allCases)
  func cancelAllTwenty(subject: Subject) async throws {
    let backend = try Backend(subject, connections: 20)
    defer { backend.shutdown() }
    backend.answer { path in
      path.hasPrefix("/hang") ? .hang : .respond(status: 200, body: Data("ok".utf8))
    }
    let client = backend.client
    let tasks = (0..<20).map { index in
      Task { try await client.send(Endpoint<Data>(.get, "hang/\(index)")) }
    }
    try await backend.waitForRequests(20)
    #expect(client.inFlightCount == 20)
    #expect(client.cancelAll() == 20)
    for task in tasks {
      let error = await courierError { try await task.linkedValue }
      #expect(error?.kind == .cancelled)
    }
    #expect(client.inFlightCount == 0)
    #expect(try await client.send(Endpoint<String>(.get, "after")) == "ok")
  }

  @Test(
    "1,000 concurrent requests: each answered once, with its own body", arguments: Subject.allCases)
  func thousandConcurrent(subject: Subject) async throws {
    let backend = try Backend(subject)
    defer { backend.shutdown() }
    backend.answer { path in .respond(status: 200, body: Data(path.utf8)) }
    let client = backend.client
    let bodies = try await withThrowingTaskGroup(of: (Int, String).self) { group in
      for index in 0..<1_000 {
        group.addTask {
          (index, try await client.send(Endpoint<String>(.get, "n/\(index)")))
        }
      }
      var bodies: [Int: String] = [:]
      for try await (index, body) in group {
        #expect(bodies[index] == nil, "request \(index) answered twice")
        bodies[index] = body
      }
      return bodies
    }
    #expect(bodies.count == 1_000)
    #expect(bodies.allSatisfy { $0.value == "/n/\($0.key)" })
    #expect(backend.requestCount == 1_000)
    #expect(client.inFlightCount == 0)
  }
}
