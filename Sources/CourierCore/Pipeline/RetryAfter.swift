import Foundation

/// Parses the `Retry-After` header (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
public enum RetryAfter {
  /// The wait the header asks for, or `nil` when it is malformed. A date in the past is a
  /// zero wait.
  ///
  /// - Parameters:
  ///   - value: The header value, such as `"120"` or `"Wed, 21 Oct 2015 07:28:00 GMT"`.
  ///   - now: The current time, injectable for tests.
  public static func parse(_ value: String, now: Date = Date()) -> Duration? {
    let trimmed = value.trimmingCharacters(in: .whitespaces)
    if let seconds = Int(trimmed) {
      return seconds >= 0 ? .seconds(seconds) : nil
    }
    guard let date = httpDate(trimmed) else { return nil }
    let interval = date.timeIntervalSince(now)
    return interval <= 0 ? .zero : .milliseconds(Int64((interval * 1000).rounded(.up)))
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
