/// An incremental parser for `text/event-stream` bodies: feed it the body's bytes in pieces
/// of any size, as they arrive, and it returns the events that each piece completes.
///
/// It interprets the stream as the WHATWG HTML Standard's "Interpreting an event stream"
/// says:
/// - The bytes are UTF-8; invalid sequences become U+FFFD. One byte order mark at the very
///   start of the stream is skipped, also when it arrives split over several pieces; a later
///   one is text.
/// - A line ends at CRLF, at a lone LF or at a lone CR; a CR ending one piece and an LF
///   starting the next are one line end.
/// - A line starting with `:` is a comment and is ignored. Otherwise the field name runs up
///   to the first `:` and the value follows it, less one leading space; a line without `:` is
///   a field name with an empty value. Field names are case-sensitive.
/// - `event` sets the event type; `data` appends its value and a line feed to the data;
///   `id` sets the last event ID (an empty value resets it) unless the value contains
///   U+0000; `retry` sets ``reconnectionTime`` in milliseconds when the value is all ASCII
///   digits (an empty or other value is ignored). Other fields are ignored.
/// - An empty line dispatches the event: ``lastEventID`` takes the last event ID; with no
///   data nothing is dispatched, otherwise one trailing line feed is removed from the data
///   and the event goes out with type `"message"` when none was given. The data and the
///   type start afresh; the last event ID and the reconnection time carry over.
/// - An event not ended by an empty line when the stream ends is never dispatched: the
///   parser returns only complete events, and the bytes after the last empty line are simply
///   never completed.
///
/// Two limits protect memory against a server that never ends a line or an event: a line
/// longer than ``maximumLineLength`` bytes, or an event whose data grows past
/// ``maximumDataLength`` bytes, makes ``feed(_:into:)`` throw a ``CourierError`` of kind
/// ``CourierError/Kind/badResponse``. Neither is buffered past its limit. After an error the
/// parser throws the same error for every further piece.
///
/// One parser reads one stream. To resume after a disconnection, send ``lastEventID`` as
/// the `Last-Event-ID` header and read the new response with a new parser.
public struct ServerSentEventParser: Sendable {
  /// The longest line accepted, in bytes, not counting its line end.
  public let maximumLineLength: Int

  /// The most data one event may gather, in bytes: its `data` values and the line feeds
  /// between them.
  public let maximumDataLength: Int

  /// The stream's last event ID as of the last dispatch (the last empty line): what a client
  /// sends as `Last-Event-ID` when it reconnects, unless it is empty.
  public private(set) var lastEventID = ""

  /// The reconnection time the stream set with its most recent valid `retry` field; `nil`
  /// until it sets one.
  public private(set) var reconnectionTime: Duration?

  /// The bytes of a line whose end has not arrived yet.
  private var line: [UInt8] = []
  /// The data buffer: each `data` value followed by a line feed.
  private var data: [UInt8] = []
  private var eventType = ""
  private var lastEventIDBuffer = ""
  /// How many bytes of a leading byte order mark have arrived; `nil` once the stream's start
  /// has been decided.
  private var byteOrderMarkMatched: Int? = 0
  /// The previous piece ended with a CR: an LF starting this one belongs to that line end.
  private var afterCarriageReturn = false
  private var failure: CourierError?

  /// Creates a parser for one stream.
  ///
  /// - Parameters:
  ///   - maximumLineLength: The longest line accepted, in bytes; a negative value counts
  ///     as 0.
  ///   - maximumDataLength: The most data one event may gather, in bytes; a negative value
  ///     counts as 0.
  public init(maximumLineLength: Int = 1 << 20, maximumDataLength: Int = 16 << 20) {
    self.maximumLineLength = max(0, maximumLineLength)
    self.maximumDataLength = max(0, maximumDataLength)
  }

  /// Parses the next piece of the stream and appends the events it completes to `events`.
  ///
  /// Events completed before a limit is exceeded are appended before the error is thrown,
  /// so splitting a stream differently never changes what comes out of it.
  public mutating func feed<Bytes: Collection>(
    _ bytes: Bytes, into events: inout [ServerSentEvent]
  ) throws(CourierError) where Bytes.Element == UInt8 {
    if let failure { throw failure }
    let done: Void? = bytes.withContiguousStorageIfAvailable { consume($0, into: &events) }
    if done == nil {
      Array(bytes).withUnsafeBufferPointer { consume($0, into: &events) }
    }
    if let failure { throw failure }
  }

  /// Parses the next piece of the stream and returns the events it completes.
  public mutating func feed<Bytes: Collection>(
    _ bytes: Bytes
  ) throws(CourierError) -> [ServerSentEvent] where Bytes.Element == UInt8 {
    var events: [ServerSentEvent] = []
    try feed(bytes, into: &events)
    return events
  }

  // MARK: - Lines

  private static let lineFeed = UInt8(ascii: "\n")
  private static let carriageReturn = UInt8(ascii: "\r")
  private static let colon = UInt8(ascii: ":")
  private static let space = UInt8(ascii: " ")
  private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
  /// Buffers that grew past this many bytes are freed after use rather than kept.
  private static let keptCapacity = 64 << 10

  /// Splits `bytes` into lines; a line that ends inside the piece is processed straight from
  /// it, a line that does not is kept in ``line`` until its end arrives.
  private mutating func consume(
    _ bytes: UnsafeBufferPointer<UInt8>, into events: inout [ServerSentEvent]
  ) {
    var index = 0
    while index < bytes.count {
      if let matched = byteOrderMarkMatched {
        if bytes[index] == Self.byteOrderMark[matched] {
          index += 1
          byteOrderMarkMatched = matched + 1 < Self.byteOrderMark.count ? matched + 1 : nil
          continue
        }
        // Not a byte order mark after all: the bytes that looked like one are text.
        line.append(contentsOf: Self.byteOrderMark[..<matched])
        byteOrderMarkMatched = nil
      }
      if afterCarriageReturn {
        afterCarriageReturn = false
        if bytes[index] == Self.lineFeed {
          index += 1
          continue
        }
      }
      var end = index
      while end < bytes.count, bytes[end] != Self.lineFeed, bytes[end] != Self.carriageReturn {
        end += 1
      }
      let piece = UnsafeBufferPointer(rebasing: bytes[index..<end])
      guard line.count + piece.count <= maximumLineLength else {
        failure = CourierError(
          kind: .badResponse,
          debugMessage: "an event stream line is longer than the limit of "
            + "\(maximumLineLength) bytes")
        return
      }
      guard end < bytes.count else {
        line.append(contentsOf: piece)
        return
      }
      afterCarriageReturn = bytes[end] == Self.carriageReturn
      index = end + 1
      if line.isEmpty {
        process(piece, into: &events)
      } else {
        line.append(contentsOf: piece)
        var whole: [UInt8] = []
        swap(&whole, &line)
        whole.withUnsafeBufferPointer { process($0, into: &events) }
        if whole.capacity <= Self.keptCapacity {
          whole.removeAll(keepingCapacity: true)
          swap(&whole, &line)
        }
      }
      if failure != nil { return }
    }
  }

  /// Interprets one complete line, without its line end.
  private mutating func process(
    _ line: UnsafeBufferPointer<UInt8>, into events: inout [ServerSentEvent]
  ) {
    guard let first = line.first else {
      dispatch(into: &events)
      return
    }
    if first == Self.colon { return }
    let name: UnsafeBufferPointer<UInt8>
    let value: UnsafeBufferPointer<UInt8>
    if let colon = line.firstIndex(of: Self.colon) {
      name = UnsafeBufferPointer(rebasing: line[..<colon])
      var start = colon + 1
      if start < line.count, line[start] == Self.space { start += 1 }
      value = UnsafeBufferPointer(rebasing: line[start...])
    } else {
      name = line
      value = UnsafeBufferPointer(rebasing: line[line.count...])
    }
    if name.elementsEqual("data".utf8) {
      guard data.count + value.count <= maximumDataLength else {
        failure = CourierError(
          kind: .badResponse,
          debugMessage: "an event stream event's data passed the limit of "
            + "\(maximumDataLength) bytes before an empty line ended the event")
        return
      }
      data.append(contentsOf: value)
      data.append(Self.lineFeed)
    } else if name.elementsEqual("event".utf8) {
      eventType = String(decoding: value, as: UTF8.self)
    } else if name.elementsEqual("id".utf8) {
      if !value.contains(0) { lastEventIDBuffer = String(decoding: value, as: UTF8.self) }
    } else if name.elementsEqual("retry".utf8) {
      if let milliseconds = Self.milliseconds(value) {
        reconnectionTime = .milliseconds(milliseconds)
      }
    }
  }

  /// The value of a `retry` field: base-ten ASCII digits only, at least one; a number too
  /// large for `Int64` counts as `Int64.max`.
  private static func milliseconds(_ value: UnsafeBufferPointer<UInt8>) -> Int64? {
    guard !value.isEmpty, value.allSatisfy(ASCII.isDigit) else { return nil }
    var result: Int64 = 0
    for digit in value {
      let (tens, overflowed) = result.multipliedReportingOverflow(by: 10)
      let (sum, carried) = tens.addingReportingOverflow(Int64(digit &- UInt8(ascii: "0")))
      if overflowed || carried { return .max }
      result = sum
    }
    return result
  }

  /// Dispatches the event gathered since the last empty line, if it has data.
  private mutating func dispatch(into events: inout [ServerSentEvent]) {
    lastEventID = lastEventIDBuffer
    guard !data.isEmpty else {
      eventType = ""
      return
    }
    if data.last == Self.lineFeed { data.removeLast() }
    events.append(
      ServerSentEvent(
        id: lastEventID.isEmpty ? nil : lastEventID,
        event: eventType.isEmpty ? "message" : eventType,
        data: String(decoding: data, as: UTF8.self),
        retry: reconnectionTime))
    data.removeAll(keepingCapacity: data.capacity <= Self.keptCapacity)
    eventType = ""
  }
}
