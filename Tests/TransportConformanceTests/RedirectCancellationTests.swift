import Courier
import CourierTesting
import Foundation
import Testing

/// Cancelling a request while its transport is following a redirect: the request ends as
/// cancelled, every time, and nothing else happens to the process.
@Suite("Transport conformance: cancelled while a redirect is followed", .timeLimit(.minutes(5)))
struct RedirectCancellationTests {
  @Test("URLSessionTransport: cancelled as its redirect arrives, each request ends as cancelled")
  func cancelDuringRedirectURLSession() async {
    // In a child process: URLSession on Linux stops the process when a redirect's answer
    // reaches a task that a cancellation already stopped.
    let result = await withTaskExecutorPreference(OwnThreadExecutor.shared) {
      await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
        try await redirectCancellationScenario(.urlSession)
      }
    }
    reportChildFailure(result)
  }

  @Test("CurlTransport: cancelled as its redirect arrives, each request ends as cancelled")
  func cancelDuringRedirectCurl() async {
    let result = await withTaskExecutorPreference(OwnThreadExecutor.shared) {
      await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
        try await redirectCancellationScenario(.curl)
      }
    }
    reportChildFailure(result)
  }
}

/// 400 requests to a redirect whose target never answers, each cancelled after a different
/// short while around the moment the 302 arrives.
private func redirectCancellationScenario(_ kind: TransportKind) async throws {
  let fixture = try Fixture(kind)
  defer { fixture.shutdown() }
  fixture.server.setDispatcher { request in
    request.path.hasPrefix("/from")
      ? MockResponse(status: 302, headers: [MockHeader(name: "Location", value: "/to")])
      : MockResponse(fault: .hang)
  }
  var random = SplitMix64(seed: 0x5EED_0302)
  for index in 0..<400 {
    let task = Task { try await fixture.client.send(Endpoint<Data>(.get, "from/\(index)")) }
    let spin = Int(random.next() % 3_000)
    var sink = 0
    for step in 0..<spin * 100 { sink &+= step }
    withExtendedLifetime(sink) {}
    task.cancel()
    let error = await courierError { try await task.linkedValue }
    #expect(error?.kind == .cancelled, "request \(index): \(String(describing: error))")
  }
}
