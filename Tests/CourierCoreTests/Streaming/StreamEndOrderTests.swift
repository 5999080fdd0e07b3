import Foundation
import Synchronization
import Testing

@testable import CourierCore

/// A reader that sees a streamed body's end sees what the end causes (the client's
/// `whenEnded` action: the request out of flight, its progress complete), even when it asks
/// for the end while that action still runs on the producer's thread.
@Suite("A streamed body's end and its consequences")
struct StreamEndOrderTests {
  /// What a reader saw of one ``race(end:duringAction:)``.
  private struct Race {
    /// Whether the end action had run when the reader got the end.
    var ranBeforeReaderSawEnd: Bool
    /// What the reader got.
    var outcome: Result<Data?, CourierError>
    /// Whether the reader was still waiting after `duringAction` (`false` without one).
    var waitingAfterDuringAction: Bool
  }

  /// Ends the body on a thread of its own, with an end action that waits until the reader —
  /// which asks for the end only once the action runs — has either suspended for the end or
  /// returned it, then runs `duringAction`, and records that it ran only then.
  private static func race(
    end: @escaping @Sendable (ResponseBodyStream.Writer, StreamCore) -> Void,
    duringAction: (@Sendable (StreamCore) -> Void)? = nil
  ) async throws -> Race {
    let (stream, writer) = ResponseBodyStream.makeStream()
    let core = stream.core
    let (started, actionStarted) = AsyncStream.makeStream(of: Void.self)
    let actionRan = Atomic(false)
    let readerReturned = Atomic(false)
    let waitingAfterDuringAction = Atomic(false)
    core.whenEnded { _ in
      actionStarted.yield()
      actionStarted.finish()
      // Polls for a state of the reader, which has no other signal; bounded: a reader that
      // neither waits nor returns within 2 minutes fails the test below. (A loaded full run
      // has left a task unscheduled for more than 10 s.)
      let limit = ContinuousClock.now + .seconds(120)
      while !core.readerIsWaiting, !readerReturned.load(ordering: .acquiring),
        ContinuousClock.now < limit
      {
        usleep(500)
      }
      if let duringAction {
        duringAction(core)
        waitingAfterDuringAction.store(core.readerIsWaiting, ordering: .releasing)
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
    return Race(
      ranBeforeReaderSawEnd: ran, outcome: outcome,
      waitingAfterDuringAction: waitingAfterDuringAction.load(ordering: .acquiring))
  }

  @Test("the end reaches a reader after the end action ran", .timeLimit(.minutes(5)))
  func finished() async throws {
    for round in 0..<10 {
      let race = try await Self.race { writer, _ in writer.finish() }
      #expect(race.ranBeforeReaderSawEnd, "round \(round)")
      #expect((try? race.outcome.get()) == .some(nil), "round \(round)")
    }
  }

  @Test("a failure reaches a reader after the end action ran", .timeLimit(.minutes(5)))
  func failed() async throws {
    for round in 0..<10 {
      let race = try await Self.race { writer, _ in
        writer.fail(CourierError(kind: .connectionLost, debugMessage: "cut", stage: "test"))
      }
      #expect(race.ranBeforeReaderSawEnd, "round \(round)")
      guard case .failure(let error) = race.outcome else {
        Issue.record("round \(round): the failure was not thrown")
        continue
      }
      #expect(error.kind == .connectionLost, "round \(round)")
    }
  }

  @Test(
    "a stream stopped from outside reaches its reader after the end action ran, with its error",
    .timeLimit(.minutes(5)))
  func terminated() async throws {
    for round in 0..<10 {
      let race = try await Self.race { _, core in core.terminate(with: Self.cancelAll) }
      #expect(race.ranBeforeReaderSawEnd, "round \(round)")
      guard case .failure(let error) = race.outcome else {
        Issue.record("round \(round): the stop was not thrown")
        continue
      }
      #expect(error.kind == .cancelled, "round \(round)")
      #expect(error.debugMessage == "cancelAll", "round \(round)")
    }
  }

  @Test(
    "a stop while the end action runs wakes the waiting reader only after the action",
    .timeLimit(.minutes(5)))
  func stoppedDuringEndAction() async throws {
    for round in 0..<10 {
      // A stop from outside (cancelAll) lands while the action still runs: the reader was
      // waiting for that action, and must still be until it returns.
      let race = try await Self.race(
        end: { writer, _ in writer.finish() },
        duringAction: { core in core.terminate(with: Self.cancelAll) })
      #expect(race.waitingAfterDuringAction, "round \(round)")
      #expect(race.ranBeforeReaderSawEnd, "round \(round)")
      guard case .failure(let error) = race.outcome else {
        Issue.record("round \(round): the stop was not thrown")
        continue
      }
      #expect(error.debugMessage == "cancelAll", "round \(round)")
    }
  }

  private static let cancelAll = CourierError(
    kind: .cancelled, debugMessage: "cancelAll", stage: "client")
}
