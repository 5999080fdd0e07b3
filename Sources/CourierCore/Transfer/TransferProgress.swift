import Foundation
import Synchronization

/// Progress of one upload or download, as an `AsyncSequence` a task beside the request reads.
///
/// Attach it with ``Endpoint/uploadProgress(_:)`` or ``Endpoint/downloadProgress(_:)`` (or
/// the request attributes ``UploadProgressAttribute`` and ``DownloadProgressAttribute``).
/// One progress object follows one logical request, through every attempt: the transport
/// reports the bytes of each attempt as they move (``update(completed:expected:)``) and when
/// an attempt's body is complete (``completeAttempt(total:)``); ``Client`` sends the final
/// event when the request ends with a response (``complete()``), because only then is it known
/// that no retry will move the body again.
///
/// - Events are throttled: at most one per ``minimumInterval`` (default 1/60 s, the most a
///   screen shows), plus the end of each attempt's body and the final event, which are never
///   dropped.
/// - ``Event/completed`` never goes down before the final event: a retried attempt that
///   starts again from zero reports nothing until it passes what was already reported (a
///   resumed download goes on from where it stopped).
/// - The final event carries the body of the response the request ended with (the last
///   attempt's), never an earlier attempt's error page — so after an error page longer than
///   the answer, it is below the events before it. The stream ends after it, or when the
///   request ends without a response (it failed): ``Client`` ends it then.
/// - One reader: `events` is an `AsyncStream`. If the reader is slow, older events are
///   dropped, never the newest.
///
/// ```swift
/// let progress = TransferProgress()
/// let watcher = Task {
///   for await event in progress.events {
///     print(event.completed, event.expected ?? -1)
///   }
/// }
/// let destination = URL(fileURLWithPath: "/tmp/big.iso")
/// let result = try await client.download(
///   Endpoint<Void>(.get, "files/big.iso").downloadProgress(progress), to: destination)
/// await watcher.value
/// print(result.byteCount)
/// ```
public final class TransferProgress: Sendable {
  /// One progress report.
  public struct Event: Sendable, Hashable {
    /// Bytes sent or received so far (for a resumed download, counting the bytes that were
    /// already on disk).
    public var completed: Int64
    /// The total, when known (`Content-Length`, or the upload's size).
    public var expected: Int64?
    /// Whether this is the final event: the body is complete.
    public var isFinal: Bool

    /// Creates an event.
    public init(completed: Int64, expected: Int64?, isFinal: Bool = false) {
      self.completed = completed
      self.expected = expected
      self.isFinal = isFinal
    }

    /// `completed / expected`, when the total is known and not zero.
    public var fractionCompleted: Double? {
      guard let expected, expected > 0 else { return nil }
      return Double(completed) / Double(expected)
    }
  }

  private struct State {
    var completed: Int64 = 0
    var expected: Int64?
    /// The total of the last attempt whose body was complete, for the final event.
    var attemptTotal: Int64?
    var lastEmission: ContinuousClock.Instant?
    var finished = false
    var emitted = 0
  }

  /// The events; read by one task.
  public let events: AsyncStream<Event>
  /// The shortest time between two events, except before the final one.
  public let minimumInterval: Duration

  private let continuation: AsyncStream<Event>.Continuation
  private let state = Mutex(State())

  /// Creates a progress object.
  ///
  /// - Parameter minimumInterval: The shortest time between two events; default 1/60 s.
  public init(minimumInterval: Duration = .nanoseconds(16_666_667)) {
    self.minimumInterval = minimumInterval
    // 128 events cover two seconds of a reader that is not keeping up; older ones go first.
    (events, continuation) = AsyncStream.makeStream(
      of: Event.self, bufferingPolicy: .bufferingNewest(128))
  }

  /// The last state reported: bytes so far and the total when known.
  public var latest: Event {
    state.withLock { Event(completed: $0.completed, expected: $0.expected, isFinal: $0.finished) }
  }

  /// How many events were emitted so far.
  public var emittedCount: Int { state.withLock { $0.emitted } }

  /// Reports `completed` bytes of `expected` in the current attempt; emitted when
  /// ``minimumInterval`` has passed since the last event. Transports call it.
  public func update(completed: Int64, expected: Int64?) {
    let now = ContinuousClock.now
    let event = state.withLock { state -> Event? in
      guard !state.finished else { return nil }
      if let expected { state.expected = expected }
      guard completed > state.completed else { return nil }
      state.completed = completed
      if let last = state.lastEmission, now - last < minimumInterval { return nil }
      state.lastEmission = now
      state.emitted += 1
      return Event(completed: state.completed, expected: state.expected)
    }
    if let event { continuation.yield(event) }
  }

  /// Reports the current attempt's body complete at `total` bytes: emitted at once (whatever
  /// the throttle) when it moves ``Event/completed`` on, but not as the final event, and the
  /// stream stays open — a retry may send or receive the body again. Transports call it when
  /// an attempt's body has been sent (upload) or received (download).
  public func completeAttempt(total: Int64) {
    let now = ContinuousClock.now
    let event = state.withLock { state -> Event? in
      guard !state.finished else { return nil }
      state.attemptTotal = total
      state.expected = total
      guard total > state.completed else { return nil }
      state.completed = total
      state.lastEmission = now
      state.emitted += 1
      return Event(completed: state.completed, expected: state.expected)
    }
    if let event { continuation.yield(event) }
  }

  /// Emits the final event — the last attempt's total (``completeAttempt(total:)``), or what
  /// was reported so far when no attempt completed a body — and ends the stream. Later calls
  /// do nothing. ``Client`` calls it when the request ends with a response; call it yourself
  /// only when you send through a transport directly.
  public func complete() {
    let event = state.withLock { state -> Event? in
      guard !state.finished else { return nil }
      state.finished = true
      // The last attempt's body, even when an earlier one (a retried error page) was longer.
      state.completed = state.attemptTotal ?? state.completed
      state.expected = state.completed
      state.emitted += 1
      return Event(completed: state.completed, expected: state.expected, isFinal: true)
    }
    if let event {
      continuation.yield(event)
      continuation.finish()
    }
  }

  /// Ends the stream without a final event (the request failed); does nothing after
  /// ``complete()``.
  public func finish() {
    let first = state.withLock { state -> Bool in
      defer { state.finished = true }
      return !state.finished
    }
    if first { continuation.finish() }
  }
}
