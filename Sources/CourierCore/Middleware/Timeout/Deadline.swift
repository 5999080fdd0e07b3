/// The moment a logical request must be over by, across all its attempts and waits.
///
/// `TimeoutMiddleware` sets it as the request's ``DeadlineAttribute``; ``RetryMiddleware``
/// reads it and starts no backoff wait or attempt that would end past it.
public struct Deadline: Sendable, CustomStringConvertible {
  /// The overall limit the deadline was made from.
  public let limit: Duration
  private let end: End

  /// When the deadline is: an instant of the system's continuous clock, held inline (no
  /// allocation per request), or a closure over any other clock (a test clock).
  private enum End: Sendable {
    case continuous(ContinuousClock.Instant)
    case other(@Sendable () -> Duration)
  }

  /// A deadline `limit` from now on `clock`.
  public init<C: Clock>(after limit: Duration, clock: C) where C.Duration == Duration {
    self.limit = limit
    let end = clock.now.advanced(by: limit)
    if let instant = end as? ContinuousClock.Instant {
      self.end = .continuous(instant)
    } else {
      self.end = .other { clock.now.duration(to: end) }
    }
  }

  /// The time left; zero once the deadline has passed.
  public var remaining: Duration {
    let left =
      switch end {
      case .continuous(let instant): ContinuousClock.now.duration(to: instant)
      case .other(let remaining): remaining()
      }
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
