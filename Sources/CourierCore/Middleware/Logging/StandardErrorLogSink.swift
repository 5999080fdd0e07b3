import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Writes each event as one human-readable line to standard error:
/// `2026-11-30T16:40:00Z info courier: GET https://api.test/users → 200 (12 ms) attempt=1 …`.
///
/// Field values that hold line breaks (headers, bodies) are written with `\n` escapes, so an
/// event never spans two lines.
public struct StandardErrorLogSink: LogSink {
  /// Default ``LogSeverity/debug``: the middleware's level already decides what is built.
  public var logLevel: LogSeverity
  /// Added to every line.
  public var metadata: [String: String]

  /// Creates the sink.
  public init(logLevel: LogSeverity = .debug, metadata: [String: String] = [:]) {
    self.logLevel = logLevel
    self.metadata = metadata
  }

  /// Writes `event` as one line.
  public func log(_ event: LogEvent) {
    var line = Self.line(for: event, metadata: metadata) + "\n"
    // One write(2) per line, so lines from concurrent requests do not interleave.
    line.withUTF8 { buffer in
      var offset = 0
      while offset < buffer.count {
        let written = write(2, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
        guard written > 0 else { return }
        offset += written
      }
    }
  }

  /// The line for `event`, without the line break.
  public static func line(for event: LogEvent, metadata: [String: String] = [:]) -> String {
    var line =
      "\(ISO8601DateFormatter.string(from: event.date, timeZone: .gmt, formatOptions: .withInternetDateTime)) \(event.severity) courier: \(event.message)"
    let fields = event.metadata.merging(metadata) { own, _ in own }
    for key in fields.keys.sorted() {
      guard let value = fields[key] else { continue }
      line += " \(key)=\(escape(value))"
    }
    return line
  }

  private static func escape(_ value: String) -> String {
    let needsQuotes = value.contains { $0 == " " || $0 == "\"" || $0.isNewline }
    guard needsQuotes else { return value }
    var text = "\""
    for character in value {
      switch character {
      case "\"": text += "\\\""
      case "\\": text += "\\\\"
      case "\n", "\r\n": text += "\\n"
      case "\r": text += "\\r"
      default: text.append(character)
      }
    }
    return text + "\""
  }
}
