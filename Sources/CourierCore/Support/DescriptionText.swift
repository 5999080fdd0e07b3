/// Short texts for the one-line descriptions middleware and transports give
/// ``Client/chainDescription``.
package enum DescriptionText {
  /// A duration as a person writes it: `30 s`, `0.5 s`, `250 ms`, `2 min`.
  package static func duration(_ duration: Duration) -> String {
    let milliseconds = duration.inSeconds * 1_000
    if milliseconds < 1_000 { return "\(number(milliseconds)) ms" }
    if milliseconds >= 120_000, milliseconds.truncatingRemainder(dividingBy: 60_000) == 0 {
      return "\(number(milliseconds / 60_000)) min"
    }
    return "\(number(milliseconds / 1_000)) s"
  }

  /// A byte count in the largest binary unit that keeps it whole or short: `1 KiB`,
  /// `32 MiB`, `1.5 KiB`, `100 bytes`.
  package static func bytes(_ count: Int) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB"]
    var value = Double(count)
    var unit = 0
    while value >= 1_024, unit < units.count - 1 {
      value /= 1_024
      unit += 1
    }
    return "\(number(value)) \(units[unit])"
  }

  /// A number with at most two decimals and no trailing zeros: `3`, `0.5`, `1.25`.
  package static func number(_ value: Double) -> String {
    guard value.isFinite else { return "\(value)" }
    let rounded = (value * 100).rounded() / 100
    if rounded == rounded.rounded(), abs(rounded) < 1e15 { return String(Int(rounded)) }
    return String(rounded)
  }

  /// `text` when it is at most `limit` UTF-8 bytes long, else its first `limit` characters,
  /// `…` and its length: a server's text in a debug description stays one log line.
  package static func clipped(_ text: String, to limit: Int) -> String {
    let length = text.utf8.count
    guard length > limit else { return text }
    return String(text.prefix(limit)) + "… (\(length) bytes in all)"
  }

  /// A type's name without its module: `URLSessionTransport`.
  package static func typeName(of value: Any) -> String {
    String(describing: type(of: value))
  }

  /// `value`'s own description when it has one, else its type name — never a reflection of
  /// its stored properties, which could hold a credential.
  package static func summary(of value: Any) -> String {
    if let described = value as? any CustomStringConvertible { return described.description }
    return typeName(of: value)
  }
}
