import Foundation

/// Parses the `Retry-After` header (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
///
/// What the server says is clamped to ``maximumWait``, so a header such as
/// `Retry-After: 9223372036854775807` or a date in the year 9999 gives a wait of one day, not a
/// number that overflows when it is converted, added to a clock or shown in a reason.
public enum RetryAfter {
  /// The longest wait ``parse(_:now:)`` returns: one day (86,400 seconds).
  ///
  /// A server that asks a client to wait longer than a day is broken or hostile; no retry or
  /// user interface should act on it as given. One day keeps every derived number small (it
  /// fits in milliseconds as `Int32`, and reads as a plain number of seconds in a reason)
  /// while still telling the caller "much later".
  public static let maximumWait: Duration = .seconds(maximumWaitSeconds)

  /// ``maximumWait`` in whole seconds.
  static let maximumWaitSeconds: Int64 = 86_400

  /// The wait the header asks for, at most ``maximumWait``, or `nil` when it is malformed.
  ///
  /// - delay-seconds: one or more ASCII digits (`"120"`), as RFC 9110 defines it. Any number
  ///   of digits is accepted and clamped to ``maximumWait``. A sign, a fraction, an exponent or
  ///   other text is malformed (`"-5"`, `"+5"`, `"1.5"`, `"1e3"`, `"soon"`).
  /// - HTTP-date: IMF-fixdate and the two obsolete forms (see `httpDate(_:)`). A date in the
  ///   past is a zero wait; a date more than ``maximumWait`` ahead is ``maximumWait``.
  ///
  /// - Parameters:
  ///   - value: The header value, such as `"120"` or `"Wed, 21 Oct 2015 07:28:00 GMT"`.
  ///   - now: The current time, injectable for tests.
  public static func parse(_ value: String, now: Date = Date()) -> Duration? {
    let trimmed = value.trimmingCharacters(in: .whitespaces)
    guard !trimmed.isEmpty else { return nil }
    if trimmed.utf8.allSatisfy(ASCII.isDigit) {
      return delay(seconds: trimmed.utf8)
    }
    guard let date = httpDate(trimmed) else { return nil }
    return wait(until: date, now: now)
  }

  /// The wait from `now` until `date`: zero for the past, at most ``maximumWait``, rounded up
  /// to the millisecond. Never traps, whatever the dates.
  static func wait(until date: Date, now: Date) -> Duration {
    let interval = date.timeIntervalSince(now)
    // `!(interval > 0)` also catches NaN.
    guard interval > 0 else { return .zero }
    guard interval < Double(maximumWaitSeconds) else { return maximumWait }
    // interval < 86,400, so the milliseconds are below 86,400,000 and fit any integer type.
    return .milliseconds(Int64((interval * 1000).rounded(.up)))
  }

  /// Decimal digits as seconds, saturating at ``maximumWait`` instead of overflowing.
  private static func delay(seconds digits: String.UTF8View) -> Duration {
    var seconds: Int64 = 0
    for digit in digits {
      // seconds < 86,400 here, so seconds * 10 + 9 cannot overflow.
      seconds = seconds * 10 + Int64(digit &- UInt8(ascii: "0"))
      if seconds >= maximumWaitSeconds { return maximumWait }
    }
    return .seconds(seconds)
  }

  /// Parses IMF-fixdate, and the obsolete RFC 850 and asctime forms RFC 9110 §5.6.7 requires
  /// recipients to accept.
  static func httpDate(_ text: String) -> Date? {
    for format in [
      "EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz",
      "EEE MMM d HH:mm:ss yyyy",
    ] {
      let formatter = DateFormatter()
      formatter.locale = Locale(identifier: "en_US_POSIX")
      formatter.timeZone = TimeZone(identifier: "GMT")
      formatter.dateFormat = format
      if let date = formatter.date(from: text) { return date }
    }
    return nil
  }
}
