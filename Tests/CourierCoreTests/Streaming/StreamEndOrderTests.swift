import Foundation
import Synchronization
import Testing

@testable import CourierCore

/// A reader that sees a streamed body's end sees what the end causes (the client's
/// `whenEnded` action: the request out of flight, its progress complete), even when it asks
/// for the end while that action still runs on the producer's thread.
@Suite("A streamed body's end and its consequences")
struct StreamEndOrderTests {
  /// Ends the body on a thread of its own, with an end action that waits until the reader —
  /// which asks for the end only once the action runs — has either suspended for the end or
  /// returned it, and records that it ran only then.
  private static func race(
    end: @escaping @Sendable (ResponseBodyStream.Writer, StreamCore) -> Void
  ) async throws -> (ranBeforeReaderSawEnd: Bool, outcome: Result<Data?, CourierError>) {
    let (stream, writer) = ResponseBodyStream.makeStream()
    let core = stream.core
    let (started, actionStarted) = AsyncStream.makeStream(of: Void.self)
    let actionRan = Atomic(false)
    let readerReturned = Atomic(false)
    core.whenEnded { _ in
      actionStarted.yield()
      actionStarted.finish()
      // Polls for a state of the reader, which has no other signal; bounded: a reader that
      // neither waits nor returns within 10 s fails the test below.
      let limit = ContinuousClock.now + .seconds(10)
      while !core.readerIsWaiting, !readerReturned.load(ordering: .acquiring),
        ContinuousClock.now < limit
      {
        usleep(500)
      }
      actionRan.store(true, ordering: .releasing)
    }
    var iterator = stream.makeAsyncIterator()
    let thread = Thread { end(writer, core) }
    thread.start()
    for await _ in started { break }
    let outcome: Result<Data?, CourierError>
    do {
      outcome = .success(try await iterator.next())
    } catch {
      outcome = .failure(error)
    }
    let ran = actionRan.load(ordering: .acquiring)
    readerReturned.store(true, ordering: .releasing)
    return (ran, outcome)
  }

  @Test("the end reaches a reader after the end action ran", .timeLimit(.minutes(1)))
  func finished() async throws {
    for round in 0..<10 {
      let (ran, outcome) = try await Self.race { writer, _ in writer.finish() }
      #expect(ran, "round \(round)")
      #expect((try? outcome.get()) == .some(nil), "round \(round)")
    }
  }

  @Test("a failure reaches a reader after the end action ran", .timeLimit(.minutes(1)))
  func failed() async throws {
    for round in 0..<10 {
      let (ran, outcome) = try await Self.race { writer, _ in
        writer.fail(CourierError(kind: .connectionLost, debugMessage: "cut", stage: "test"))
      }
      #expect(ran, "round \(round)")
      guard case .failure(let error) = outcome else {
        Issue.record("round \(round): the failure was not thrown")
        continue
      }
      #expect(error.kind == .connectionLost, "round \(round)")
    }
  }

  @Test(
    "a stream stopped from outside reaches its reader after the end action ran, with its error",
    .timeLimit(.minutes(1)))
  func terminated() async throws {
    for round in 0..<10 {
      let (ran, outcome) = try await Self.race { _, core in
        core.terminate(
          with: CourierError(kind: .cancelled, debugMessage: "cancelAll", stage: "client"))
      }
      #expect(ran, "round \(round)")
      guard case .failure(let error) = outcome else {
        Issue.record("round \(round): the stop was not thrown")
        continue
      }
      #expect(error.kind == .cancelled, "round \(round)")
      #expect(error.debugMessage == "cancelAll", "round \(round)")
    }
  }

  @Test(
    "a stop while the end action runs wakes the waiting reader only after the action",
    .timeLimit(.minutes(1)))
  func stoppedDuringEndAction() async throws {
    for round in 0..<10 {
      let (stream, writer) = ResponseBodyStream.makeStream()
      let core = stream.core
      let (started, actionStarted) = AsyncStream.makeStream(of: Void.self)
      let readerReturned = Atomic(false)
      let stillWaiting = Atomic(false)
      core.whenEnded { _ in
        actionStarted.yield()
        actionStarted.finish()
        let limit = ContinuousClock.now + .seconds(10)
        while !core.readerIsWaiting, !readerReturned.load(ordering: .acquiring),
          ContinuousClock.now < limit
        {
          usleep(500)
        }
        // A stop from outside (cancelAll) lands while the action still runs.
        core.terminate(
          with: CourierError(kind: .cancelled, debugMessage: "cancelAll", stage: "client"))
        // The reader was waiting for this action: it must still be, until the action returns.
        stillWaiting.store(core.readerIsWaiting, ordering: .releasing)
      }
      var iterator = stream.makeAsyncIterator()
      let thread = Thread { writer.finish() }
      thread.start()
      for await _ in started { break }
      var caught: CourierError?
      do {
        _ = try await iterator.next()
      } catch let thrown {
        caught = thrown
      }
      readerReturned.store(true, ordering: .releasing)
      let waited = stillWaiting.load(ordering: .acquiring)
      #expect(waited, "round \(round)")
      #expect(caught?.debugMessage == "cancelAll", "round \(round)")
    }
  }
}
