/// A W3C Trace Context (`traceparent: 00-<trace id>-<parent id>-<flags>`).
///
/// The ids are held as integers and written as hex only when asked for, so making a context
/// allocates nothing.
public struct TraceContext: Sendable, Hashable, CustomStringConvertible {
  private let traceHigh: UInt64
  private let traceLow: UInt64
  private let parent: UInt64
  private let flagBits: UInt8

  /// 32 lower-case hex digits, never all zero: the id of the whole trace.
  public var traceID: String { Self.hex(traceHigh, traceLow) }
  /// 16 lower-case hex digits, never all zero: the id of this request within the trace.
  public var parentID: String { Self.hex(parent) }
  /// The trace flags; `01` means sampled.
  public var flags: String { Self.hex(byte: flagBits) }

  /// A context with fresh ids, sampled.
  ///
  /// The ids come from ``TraceIDGenerator``: unique within the process and unpredictable
  /// enough to join logs, not secrets.
  public static func random() -> TraceContext {
    TraceContext(
      traceHigh: TraceIDGenerator.next() | 1, traceLow: TraceIDGenerator.next(),
      parent: TraceIDGenerator.next() | 1, flags: 0x01)
  }

  /// Parses a `traceparent` value; `nil` when it is not version `00` with valid ids.
  public init?(traceparent: String) {
    let parts = traceparent.split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 4, parts[0] == "00", parts[1].utf8.count == 32,
      let high = Self.parseHex(parts[1].prefix(16)), let low = Self.parseHex(parts[1].suffix(16)),
      high | low != 0, let parent = Self.parseHex(parts[2]), parts[2].utf8.count == 16,
      parent != 0, let flags = Self.parseHex(parts[3]), parts[3].utf8.count == 2
    else { return nil }
    self.init(
      traceHigh: high, traceLow: low, parent: parent, flags: UInt8(truncatingIfNeeded: flags))
  }

  private init(traceHigh: UInt64, traceLow: UInt64, parent: UInt64, flags: UInt8) {
    self.traceHigh = traceHigh
    self.traceLow = traceLow
    self.parent = parent
    self.flagBits = flags
  }

  /// The same trace with a new parent id: the next hop of a continued trace.
  public func child() -> TraceContext {
    TraceContext(
      traceHigh: traceHigh, traceLow: traceLow, parent: TraceIDGenerator.next() | 1,
      flags: flagBits)
  }

  /// The `traceparent` header value.
  public var traceparent: String {
    // Written in place: one allocation, where interpolation would make several.
    String(unsafeUninitializedCapacity: 55) { buffer in
      Self.write("00-", into: buffer, at: 0)
      Self.writeHex(traceHigh, into: buffer, at: 3)
      Self.writeHex(traceLow, into: buffer, at: 19)
      Self.write("-", into: buffer, at: 35)
      Self.writeHex(parent, into: buffer, at: 36)
      Self.write("-", into: buffer, at: 52)
      Self.writeHex(UInt64(flagBits), digits: 2, into: buffer, at: 53)
      return 55
    }
  }

  /// The trace id.
  public var description: String { traceID }

  /// The value of 1 to 16 lower-case hex digits; `nil` for anything else.
  private static func parseHex(_ text: Substring) -> UInt64? {
    guard !text.isEmpty, text.utf8.count <= 16 else { return nil }
    var value: UInt64 = 0
    for byte in text.utf8 {
      let digit: UInt8
      if ASCII.isDigit(byte) {
        digit = byte &- UInt8(ascii: "0")
      } else if byte &- UInt8(ascii: "a") < 6 {
        digit = byte &- UInt8(ascii: "a") &+ 10
      } else {
        return nil
      }
      value = value << 4 | UInt64(digit)
    }
    return value
  }

  /// `high` (and `low`) as 16 (32) lower-case hex digits, written straight into the string.
  private static func hex(_ high: UInt64, _ low: UInt64? = nil) -> String {
    let count = low == nil ? 16 : 32
    return String(unsafeUninitializedCapacity: count) { buffer in
      writeHex(high, into: buffer, at: 0)
      if let low { writeHex(low, into: buffer, at: 16) }
      return count
    }
  }

  private static func hex(byte: UInt8) -> String {
    String(unsafeUninitializedCapacity: 2) { buffer in
      writeHex(UInt64(byte), digits: 2, into: buffer, at: 0)
      return 2
    }
  }

  private static func write(
    _ text: StaticString, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int
  ) {
    text.withUTF8Buffer { bytes in
      for (index, byte) in bytes.enumerated() { buffer[offset + index] = byte }
    }
  }

  private static func writeHex(
    _ word: UInt64, digits: Int = 16, into buffer: UnsafeMutableBufferPointer<UInt8>,
    at offset: Int
  ) {
    for index in 0..<digits {
      let nibble = UInt8(truncatingIfNeeded: word >> UInt64((digits - 1 - index) * 4)) & 0xF
      buffer[offset + index] = nibble < 10 ? nibble &+ UInt8(ascii: "0") : nibble &+ 87
    }
  }
}
