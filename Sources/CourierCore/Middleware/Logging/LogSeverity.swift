/// How severe a ``LogEvent`` is.
public enum LogSeverity: Int, Sendable, Comparable, CustomStringConvertible {
  /// Detail for debugging (request lines before they are sent, headers, bodies).
  case debug
  /// A completed exchange.
  case info
  /// An exchange that ended with an error status.
  case warning
  /// An attempt that failed without a response, or was rejected.
  case error

  /// Orders by severity.
  public static func < (lhs: LogSeverity, rhs: LogSeverity) -> Bool { lhs.rawValue < rhs.rawValue }

  /// The lower-case name.
  public var description: String {
    switch self {
    case .debug: "debug"
    case .info: "info"
    case .warning: "warning"
    case .error: "error"
    }
  }
}
