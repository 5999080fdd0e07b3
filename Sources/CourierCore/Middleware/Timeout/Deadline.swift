/// The moment a logical request must be over by, across all its attempts and waits.
///
/// `TimeoutMiddleware` sets it as the request's ``DeadlineAttribute``; ``RetryMiddleware``
/// reads it and starts no backoff wait or attempt that would end past it.
public struct Deadline: Sendable, CustomStringConvertible {
  /// The overall limit the deadline was made from.
  public let limit: Duration

  /// When the deadline is, on the system's continuous clock; read only when `other` is nil.
  private let instant: ContinuousClock.Instant
  /// The time left on any other clock (a test clock); `nil` on the continuous clock.
  ///
  /// Two plain fields rather than an enum with two payloads: a copy is then a few words and
  /// one retain of a usually nil pointer, where the enum's copies and tag reads went through
  /// runtime calls (`swift_getEnumCaseMultiPayload`), several per request.
  private let other: (@Sendable () -> Duration)?

  /// A deadline `limit` from now on `clock`.
  public init<C: Clock>(after limit: Duration, clock: C) where C.Duration == Duration {
    if C.self == ContinuousClock.self {
      self.init(limit: limit, instant: ContinuousClock.now.advanced(by: limit), other: nil)
    } else {
      let end = clock.now.advanced(by: limit)
      self.init(
        limit: limit, instant: ContinuousClock.now, other: { clock.now.duration(to: end) })
    }
  }

  /// A deadline `limit` from now on the system's continuous clock. No allocation.
  public init(after limit: Duration) {
    self.init(limit: limit, instant: ContinuousClock.now.advanced(by: limit), other: nil)
  }

  private init(
    limit: Duration, instant: ContinuousClock.Instant, other: (@Sendable () -> Duration)?
  ) {
    self.limit = limit
    self.instant = instant
    self.other = other
  }

  /// The time left; zero once the deadline has passed.
  public var remaining: Duration {
    let left = other?() ?? ContinuousClock.now.duration(to: instant)
    return max(.zero, left)
  }

  /// Whether the deadline has passed.
  public var hasPassed: Bool { remaining <= .zero }

  /// `"<remaining> of <limit> left"`.
  public var description: String { "\(remaining) of \(limit) left" }
}

/// The overall deadline of a logical request, when one was set.
public enum DeadlineAttribute: RequestAttributeKey {
  /// No deadline.
  public static let defaultValue: Deadline? = nil
}
