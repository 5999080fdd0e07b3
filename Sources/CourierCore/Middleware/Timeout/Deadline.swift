/// The moment a logical request must be over by, across all its attempts and waits.
///
/// `TimeoutMiddleware` sets it as the request's ``DeadlineAttribute``; ``RetryMiddleware``
/// reads it and starts no backoff wait or attempt that would end past it.
public struct Deadline: Sendable, CustomStringConvertible {
  /// The overall limit the deadline was made from.
  public let limit: Duration

  /// When the deadline is on the system's continuous clock, as the time since ``origin``;
  /// read only when `other` is nil.
  ///
  /// A `Duration` rather than a `ContinuousClock.Instant`: `Duration` is frozen (two
  /// integers), while `Instant` is resilient, so every copy of a deadline holding one went
  /// through the runtime's value witnesses and a metadata lookup — several per request.
  private let end: Duration
  /// The time left on any other clock (a test clock); `nil` on the continuous clock.
  private let other: (@Sendable () -> Duration)?

  /// The instant continuous-clock deadlines are measured from: the first time one is made.
  private static let origin = ContinuousClock.now

  /// A deadline `limit` from now on `clock`.
  public init<C: Clock>(after limit: Duration, clock: C) where C.Duration == Duration {
    if C.self == ContinuousClock.self {
      self.init(after: limit)
    } else {
      let end = clock.now.advanced(by: limit)
      self.init(limit: limit, end: .zero, other: { clock.now.duration(to: end) })
    }
  }

  /// A deadline `limit` from now on the system's continuous clock. No allocation.
  public init(after limit: Duration) {
    self.init(limit: limit, end: Self.sinceOrigin() + limit, other: nil)
  }

  private init(limit: Duration, end: Duration, other: (@Sendable () -> Duration)?) {
    self.limit = limit
    self.end = end
    self.other = other
  }

  /// The continuous clock's time since ``origin``.
  private static func sinceOrigin() -> Duration {
    origin.duration(to: ContinuousClock.now)
  }

  /// The time left; zero once the deadline has passed.
  public var remaining: Duration {
    let left = other?() ?? (end - Self.sinceOrigin())
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
