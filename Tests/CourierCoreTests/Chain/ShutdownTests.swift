import CourierCore
import CourierTesting
import Foundation
import Testing

/// `Client.shutdown(gracePeriod:clock:)` over a stub whose answers wait on one test clock,
/// with the grace period on another: no test sleeps.
@Suite(
  "Client shutdown: refuse new requests, let those in flight finish, then cancel",
  .timeLimit(.minutes(5)))
struct ShutdownTests {
  let answers = TestClock()
  let grace = TestClock()
  let stub: StubTransport
  let client: Client

  init() {
    stub = StubTransport(clock: answers)
    stub.on(nil, "fast/**", StubResponse.text("fast").delayed(by: .seconds(1)))
    stub.on(nil, "slow/**", StubResponse.text("slow").delayed(by: .seconds(10)))
    stub.on(nil, "never/**", .never)
    stub.on(nil, "events", StubResponse.text("abcdef").chunked(2, every: .seconds(1)))
    stub.on(nil, "slow-events", StubResponse.text("abcdef").chunked(2, every: .seconds(100)))
    client = Client(
      baseURL: URL(string: "http://stub.example/")!, transport: stub,
      middleware: [RetryMiddleware(clock: answers)], locale: "en")
  }

  /// Starts a shutdown with a grace period of `period` on the grace clock, and returns once
  /// it has begun (its timer waits).
  func startShutdown(_ period: Duration, timers: Int = 1) async -> Task<Void, Never> {
    let client = client
    let grace = grace
    let task = Task { await client.shutdown(gracePeriod: period, clock: grace) }
    await grace.waitForSleepers(timers)
    return task
  }

  @Test("in flight: finished within the grace period succeed, the rest fail with shutDown")
  func graceThenCancel() async throws {
    let client = client
    let fast = Task { try await client.send(Endpoint<String>(.get, "fast/1")) }
    let slow = Task { try await client.send(Endpoint<String>(.get, "slow/1")) }
    let never = Task { try await client.send(Endpoint<String>(.get, "never/1")) }
    await stub.waitForRequests(3)
    await answers.waitForSleepers(3)
    let shutdown = await startShutdown(.seconds(5))
    #expect(client.isShuttingDown)
    answers.advance(by: .seconds(1))
    #expect(try await fast.linkedValue == "fast")
    #expect(client.inFlightCount == 2)
    grace.advance(by: .seconds(5))
    for task in [slow, never] {
      let error = await courierError { try await task.linkedValue }
      #expect(error?.kind == .shutDown)
      #expect(error?.debugMessage.contains("grace period of 5 s ran out") == true)
      #expect(error?.reason == "The app is shutting down and could not finish the request.")
    }
    await shutdown.value
    #expect(client.inFlightCount == 0)
    #expect(stub.requests.count == 3, "nothing was retried")
  }

  @Test("a new request fails at once with shutDown and never reaches the transport")
  func refusesNewRequests() async throws {
    let client = client
    let never = Task { try await client.send(Endpoint<String>(.get, "never/1")) }
    await stub.waitForRequests(1)
    let shutdown = await startShutdown(.seconds(5))
    let error = await courierError { try await client.send(Endpoint<String>(.get, "fast/2")) }
    #expect(error?.kind == .shutDown)
    #expect(error?.attempts == 0)
    #expect(error?.debugMessage.contains("takes no new requests") == true)
    #expect(stub.requests.count == 1)
    grace.advance(by: .seconds(5))
    #expect(await courierError { try await never.linkedValue }?.kind == .shutDown)
    await shutdown.value
    // Still refused once the shutdown is over.
    let later = await courierError { try await client.send(Endpoint<String>(.get, "fast/3")) }
    #expect(later?.kind == .shutDown)
    #expect(stub.requests.count == 1)
  }

  @Test("with nothing in flight it returns at once, and so does every later call")
  func idempotent() async {
    await client.shutdown(gracePeriod: .seconds(30), clock: grace)
    await client.shutdown(gracePeriod: .seconds(30), clock: grace)
    await client.shutdown(gracePeriod: .zero)
    #expect(client.isShuttingDown)
    #expect(client.inFlightCount == 0)
  }

  @Test("concurrent calls all return once done; the first grace period to run out ends it")
  func concurrentCalls() async throws {
    let client = client
    let never = Task { try await client.send(Endpoint<String>(.get, "never/1")) }
    await stub.waitForRequests(1)
    let long = await startShutdown(.seconds(60))
    let short = await startShutdown(.seconds(2), timers: 2)
    grace.advance(by: .seconds(2))
    let error = await courierError { try await never.linkedValue }
    #expect(error?.kind == .shutDown)
    #expect(error?.debugMessage.contains("grace period of 2 s") == true)
    await short.value
    await long.value
    #expect(client.inFlightCount == 0)
  }

  @Test("a grace period of zero cancels what is in flight at once")
  func zeroGrace() async throws {
    let client = client
    let slow = Task { try await client.send(Endpoint<String>(.get, "slow/1")) }
    await stub.waitForRequests(1)
    await client.shutdown(gracePeriod: .zero)
    #expect(await courierError { try await slow.linkedValue }?.kind == .shutDown)
  }

  @Test("cancelling the task that awaits the shutdown ends its grace period at once")
  func cancelledWaiter() async throws {
    let client = client
    let never = Task { try await client.send(Endpoint<String>(.get, "never/1")) }
    await stub.waitForRequests(1)
    let shutdown = await startShutdown(.seconds(60))
    shutdown.cancel()
    await shutdown.value
    #expect(await courierError { try await never.linkedValue }?.kind == .shutDown)
    #expect(client.inFlightCount == 0)
  }

  @Test("a request its caller cancelled during the grace period stays cancelled")
  func callerCancellationStays() async throws {
    let client = client
    let never = Task { try await client.send(Endpoint<String>(.get, "never/1")) }
    await stub.waitForRequests(1)
    let shutdown = await startShutdown(.seconds(5))
    never.cancel()
    #expect(await courierError { try await never.value }?.kind == .cancelled)
    await shutdown.value
  }

  @Test(
    "a streamed body read within the grace period ends whole; one still read ends with shutDown")
  func streamedBodies() async throws {
    let first = try await client.stream(Endpoint<Void>(.get, "events"))
    let second = try await client.stream(Endpoint<Void>(.get, "slow-events"))
    #expect(client.inFlightCount == 2)
    let shutdown = await startShutdown(.seconds(5))
    let reader = Task {
      var text = ""
      for try await piece in first.body { text += String(decoding: piece, as: UTF8.self) }
      return text
    }
    // Three pieces, one a second: the first body ends well within the grace period. Each
    // stream sleeps before each piece; the second one's first sleep lasts 100 s.
    for piece in 0..<3 {
      await answers.waitForSleepers(piece + 2)
      answers.advance(by: .seconds(1))
    }
    #expect(try await reader.linkedValue == "abcdef")
    grace.advance(by: .seconds(5))
    let error = await courierError {
      for try await _ in second.body {}
    }
    #expect(error?.kind == .shutDown)
    await shutdown.value
    #expect(client.inFlightCount == 0)
  }
}
