import CourierCore
import Testing

/// The timer thread behind ``TimeoutMiddleware``. These tests run on real time, since that
/// is what the thread waits on; each waits for a token's cancellation handler, not a sleep.
@Suite("CancellationTimer", .timeLimit(.minutes(5)))
struct CancellationTimerTests {
  /// Resumes when `token` is cancelled, with the time its handler ran: the handler runs on
  /// the timer thread, so the time is not delayed by a busy cooperative pool.
  @discardableResult
  static func cancellation(of token: RequestCancellation) async -> ContinuousClock.Instant {
    await withCheckedContinuation { continuation in
      _ = token.addHandler { continuation.resume(returning: ContinuousClock.now) }
    }
  }

  @Test("an earlier deadline armed after a later one fires first, on time")
  func earlierDeadlineWakesTheThread() async {
    let timer = CancellationTimer.shared
    let late = RequestCancellation()
    let early = RequestCancellation()
    // An hour, not seconds: in a full `swift test` this task can wait tens of seconds to run
    // again after `early` fires (Swift Testing reads an exit test's output on a pool thread
    // until the child ends, and two at once hold both threads of a 2-core machine), and
    // `late` must not come due meanwhile: at 30 s it did, once.
    timer.arm(after: .seconds(3600), cancelling: late)
    defer { timer.disarm(late) }
    let started = ContinuousClock.now
    timer.arm(after: .milliseconds(50), cancelling: early)
    defer { timer.disarm(early) }
    let elapsed = await Self.cancellation(of: early) - started
    #expect(elapsed >= .milliseconds(50))
    #expect(elapsed < .milliseconds(500), "fired after \(elapsed)")
    #expect(!late.isCancelled)
  }

  @Test("a disarmed entry never fires; entries due together all fire")
  func disarmedEntryNeverFires() async {
    let timer = CancellationTimer.shared
    let disarmed = RequestCancellation()
    timer.arm(after: .milliseconds(20), cancelling: disarmed)
    timer.disarm(disarmed)
    timer.disarm(disarmed)  // twice is harmless
    let tokens = (0..<50).map { _ in RequestCancellation() }
    for (index, token) in tokens.enumerated() {
      timer.arm(after: .milliseconds(40 + index % 7), cancelling: token)
    }
    for token in tokens { await Self.cancellation(of: token) }
    // Every one of the 50 fired, and all of them after the disarmed entry's deadline.
    #expect(tokens.allSatisfy { $0.isCancelled })
    #expect(!disarmed.isCancelled)
  }

  @Test("arming an armed token moves its deadline")
  func rearmingMovesTheDeadline() async {
    let timer = CancellationTimer.shared
    let token = RequestCancellation()
    timer.arm(after: .seconds(30), cancelling: token)
    let started = ContinuousClock.now
    timer.arm(after: .milliseconds(30), cancelling: token)
    let elapsed = await Self.cancellation(of: token) - started
    #expect(elapsed >= .milliseconds(30))
    #expect(elapsed < .milliseconds(500), "fired after \(elapsed)")
    timer.disarm(token)  // fired already: nothing to remove
  }
}

@Suite("Duration in whole nanoseconds")
struct DurationNanosecondsTests {
  @Test("rounded toward zero and clamped to Int64")
  func conversion() {
    #expect(Duration.seconds(31).clampedNanoseconds == 31_000_000_000)
    #expect((Duration.seconds(2) + .nanoseconds(7)).clampedNanoseconds == 2_000_000_007)
    #expect(Duration.nanoseconds(-5).clampedNanoseconds == -5)
    #expect((Duration.nanoseconds(1) / 2).clampedNanoseconds == 0)
    #expect((Duration.nanoseconds(-1) / 2).clampedNanoseconds == 0)
    #expect(Duration.zero.clampedNanoseconds == 0)
    #expect(Duration.seconds(Int64.max).clampedNanoseconds == Int64.max)
    #expect(Duration.seconds(Int64.min).clampedNanoseconds == Int64.min)
  }

  @Test("seconds as a Double, for short durations and for ones past Int64 nanoseconds")
  func inSeconds() {
    #expect(Duration.milliseconds(1500).inSeconds == 1.5)
    #expect(Duration.seconds(31).inSeconds == 31)
    #expect(Duration.nanoseconds(-250_000_000).inSeconds == -0.25)
    #expect(Duration.zero.inSeconds == 0)
    // Past the nanoseconds Int64 holds (292 years): from the attoseconds, not clamped.
    #expect(Duration.seconds(Int64.max).inSeconds == Double(Int64.max))
    #expect((Duration.seconds(Int64.max) * 3).inSeconds == Double(Int64.max) * 3)
    #expect(Duration.seconds(Int64.min).inSeconds == Double(Int64.min))
  }
}
