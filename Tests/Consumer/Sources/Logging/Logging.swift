// A stand-in for swift-log 1.6 (https://github.com/apple/swift-log), which cannot be fetched
// here: only the declarations Courier's documented adapters call, with swift-log's own
// signatures, so `.ci/consumer-check` compiles those adapters and fails when they drift from
// the API they were written for. It records nothing.

/// swift-log's `Logger`, as far as the adapters use it.
public struct Logger: Sendable {
  /// swift-log's levels.
  public enum Level: String, Sendable, CaseIterable, Codable {
    case trace, debug, info, notice, warning, error, critical
  }

  /// swift-log's message: text built by string interpolation.
  public struct Message: ExpressibleByStringLiteral, ExpressibleByStringInterpolation, Sendable,
    CustomStringConvertible
  {
    /// As in swift-log.
    public var description: String

    /// Creates it, as swift-log does.
    public init(stringLiteral value: String) {
      description = value
    }
  }

  /// swift-log's metadata.
  public typealias Metadata = [String: MetadataValue]

  /// swift-log's metadata value.
  public enum MetadataValue: Sendable {
    case string(String)
    case stringConvertible(any CustomStringConvertible & Sendable)
    case dictionary(Metadata)
    case array([MetadataValue])
  }

  /// As in swift-log.
  public let label: String
  /// As in swift-log.
  public var logLevel: Level = .info

  /// Creates it, as swift-log does.
  public init(label: String) {
    self.label = label
  }

  /// As in swift-log.
  public func log(
    level: Level,
    _ message: @autoclosure () -> Message,
    metadata: @autoclosure () -> Metadata? = nil,
    source: @autoclosure () -> String? = nil,
    file: String = #fileID,
    function: String = #function,
    line: UInt = #line
  ) {}
}
