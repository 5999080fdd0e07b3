import CourierCore
import Foundation
import Testing

/// What parsing a whole stream gave: the events, the error that stopped it, and the stream
/// state at the end.
private struct Outcome: Equatable {
  var events: [ServerSentEvent] = []
  var error: String?
  var lastEventID = ""
  var reconnectionTime: Duration?
}

/// Feeds `pieces` to `parser` one after another, stopping at the first error.
private func run<Piece: Collection<UInt8>>(
  _ pieces: [Piece], _ parser: ServerSentEventParser
) -> Outcome {
  var parser = parser
  var outcome = Outcome()
  for piece in pieces {
    do {
      try parser.feed(piece, into: &outcome.events)
    } catch {
      outcome.error = "\(error.kind): \(error.debugMessage)"
      break
    }
  }
  outcome.lastEventID = parser.lastEventID
  outcome.reconnectionTime = parser.reconnectionTime
  return outcome
}

/// Parses `bytes` whole (as bytes and as `Data`), byte by byte, and split in two at every
/// position; expects every way to give the same outcome, and returns it.
private func parsed(
  _ bytes: [UInt8], maximumLineLength: Int = 1 << 20, maximumDataLength: Int = 16 << 20,
  sourceLocation: SourceLocation = #_sourceLocation
) -> Outcome {
  let parser = ServerSentEventParser(
    maximumLineLength: maximumLineLength, maximumDataLength: maximumDataLength)
  let whole = run([bytes], parser)
  #expect(run([Data(bytes)], parser) == whole, "as Data", sourceLocation: sourceLocation)
  #expect(run(bytes.map { [$0] }, parser) == whole, "byte by byte", sourceLocation: sourceLocation)
  for cut in 0...bytes.count {
    let split = run([Array(bytes[..<cut]), Array(bytes[cut...])], parser)
    if split != whole {
      Issue.record("split at \(cut): \(split) != \(whole)", sourceLocation: sourceLocation)
      break
    }
  }
  return whole
}

private func parsed(
  _ text: String, maximumLineLength: Int = 1 << 20, maximumDataLength: Int = 16 << 20,
  sourceLocation: SourceLocation = #_sourceLocation
) -> Outcome {
  parsed(
    Array(text.utf8), maximumLineLength: maximumLineLength,
    maximumDataLength: maximumDataLength, sourceLocation: sourceLocation)
}

/// The data of each event.
private func data(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> [String] {
  parsed(text, sourceLocation: sourceLocation).events.map(\.data)
}

@Suite("Server-sent events: the WHATWG event stream interpretation")
struct ServerSentEventParserTests {
  // MARK: - The specification's examples

  @Test("the stock example: three data lines make one message")
  func stockExample() {
    let outcome = parsed("data: YHOO\ndata: +2\ndata: 10\n\n")
    #expect(outcome.events == [ServerSentEvent(id: nil, event: "message", data: "YHOO\n+2\n10")])
    #expect(outcome.lastEventID == "")
  }

  @Test("first, second and third event: comment, id, id reset, one space stripped")
  func firstSecondThirdEvent() {
    let outcome = parsed(
      ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\n"
        + "data:  third event\n\n")
    #expect(
      outcome.events == [
        ServerSentEvent(id: "1", data: "first event"),
        ServerSentEvent(id: nil, data: "second event"),
        ServerSentEvent(id: nil, data: " third event"),
      ])
    #expect(outcome.lastEventID == "")
  }

  @Test("\"data\" lines give an empty and a newline event; the unended last one is dropped")
  func emptyAndNewlineEvents() {
    #expect(data("data\n\ndata\ndata\n\ndata:") == ["", "\n"])
  }

  @Test("a space after the colon is optional: both lines give \"test\"")
  func optionalSpace() {
    #expect(data("data:test\n\ndata: test\n\n") == ["test", "test"])
  }

  @Test("event types from the introduction's add and remove example")
  func eventTypes() {
    let events = parsed(
      "event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\nevent: add\ndata: 113411\n\n"
    ).events
    #expect(events.map(\.event) == ["add", "remove", "add"])
    #expect(events.map(\.data) == ["73857293", "2153", "113411"])
  }

  // MARK: - Line ends

  @Test("LF, CR, CRLF and mixed line ends give the same events")
  func lineEnds() {
    let expected = ["a\nb", "c"]
    #expect(data("data: a\ndata: b\n\ndata: c\n\n") == expected)
    #expect(data("data: a\rdata: b\r\rdata: c\r\r") == expected)
    #expect(data("data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n") == expected)
    #expect(data("data: a\rdata: b\n\r\ndata: c\n\r") == expected)
  }

  @Test("CR LF is one line end, LF CR is two")
  func crlfIsOneLineEnd() {
    // CR CRLF: two line ends, so the empty line between them dispatches.
    #expect(data("data: a\r\r\ndata: b\n\n") == ["a", "b"])
    #expect(data("data: a\r\ndata: b\n\n") == ["a\nb"])
    #expect(data("data: a\n\rdata: b\n\n") == ["a", "b"])
  }

  @Test("a CR at the end of one piece and an LF at the start of the next end one line")
  func carriageReturnSplitAcrossPieces() throws {
    var parser = ServerSentEventParser()
    #expect(try parser.feed(Array("data: a\r".utf8)).isEmpty)
    #expect(try parser.feed(Array("\ndata: b\r".utf8)).isEmpty)
    #expect(try parser.feed(Array("\n".utf8)).isEmpty)
    #expect(try parser.feed(Array("\r".utf8)) == [ServerSentEvent(data: "a\nb")])
    // The LF after that CR is part of the same line end, not a second empty line.
    #expect(try parser.feed(Array("\ndata: c\n\n".utf8)) == [ServerSentEvent(data: "c")])
  }

  // MARK: - Byte order mark and UTF-8

  @Test("a leading byte order mark is skipped, also split across pieces")
  func leadingByteOrderMark() throws {
    #expect(data("\u{FEFF}data: x\n\n") == ["x"])
    var parser = ServerSentEventParser()
    #expect(try parser.feed([0xEF]).isEmpty)
    #expect(try parser.feed([0xBB]).isEmpty)
    #expect(try parser.feed([0xBF] + Array("data: x\n\n".utf8)) == [ServerSentEvent(data: "x")])
  }

  @Test("only the first byte order mark is skipped; later ones are text")
  func secondByteOrderMark() {
    // The second mark makes the field name "\u{FEFF}data", which is unknown.
    #expect(data("\u{FEFF}\u{FEFF}data: x\n\n").isEmpty)
    #expect(
      data("\u{FEFF}data: x\n\n\u{FEFF}data: y\n\ndata: \u{FEFF}z\n\n") == ["x", "\u{FEFF}z"])
    // A mark that is not at the start of the stream is text even at the start of a line.
    #expect(data(":\n\u{FEFF}data: y\n\n").isEmpty)
  }

  @Test("the start of a byte order mark that goes on otherwise is text")
  func partialByteOrderMark() {
    // EF BB then LF: a line whose field name is one U+FFFD, ignored; the event after it stays.
    #expect(parsed([0xEF, 0xBB, 0x0A] + Array("data: y\n\n".utf8)).events.map(\.data) == ["y"])
    // Kept as text, the bytes make the field name "\u{FFFD}data", which is unknown.
    #expect(parsed([0xEF, 0xBB] + Array("data: y\n\n".utf8)).events.isEmpty)
    #expect(parsed([0xEF] + Array("data: y\n\n".utf8)).events.isEmpty)
    // A whole mark, then the start of another: only the first is skipped.
    #expect(parsed([0xEF, 0xBB, 0xBF, 0xEF, 0xBB] + Array("data: y\n\n".utf8)).events.isEmpty)
    #expect(
      parsed([0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0x0A] + Array("data: y\n\n".utf8)).events.map(\.data)
        == ["y"])
  }

  @Test("characters split across pieces arrive whole")
  func utf8AcrossPieces() {
    let outcome = parsed("event: café\nid: 日本\ndata: héllo 🌍\n\n")
    #expect(outcome.events == [ServerSentEvent(id: "日本", event: "café", data: "héllo 🌍")])
  }

  @Test("invalid UTF-8 becomes U+FFFD in data, type and id")
  func invalidUTF8() {
    let bytes =
      Array("data: a".utf8) + [0xFF] + Array("b\ndata: ".utf8) + [0xE2, 0x82] + Array("\n".utf8)
      + Array("data: ".utf8) + [0xC0, 0xAF] + Array("\nevent: ".utf8) + [0x80]
      + Array("\nid: ".utf8) + [0xF0, 0x9F, 0x8C] + Array("\n\n".utf8)
    let outcome = parsed(bytes)
    #expect(
      outcome.events == [
        ServerSentEvent(
          id: "\u{FFFD}", event: "\u{FFFD}", data: "a\u{FFFD}b\n\u{FFFD}\n\u{FFFD}\u{FFFD}")
      ])
  }

  // MARK: - Fields

  @Test("an id containing U+0000 is ignored")
  func idWithNull() {
    let outcome = parsed("id: 1\ndata: a\n\nid: 2\u{0}3\ndata: b\n\n")
    #expect(outcome.events.map(\.id) == ["1", "1"])
    #expect(outcome.lastEventID == "1")
  }

  @Test("an empty id resets the last event ID, with or without a colon")
  func emptyIDResets() {
    let withColon = parsed("id: 1\ndata: a\n\nid:\ndata: b\n\n")
    #expect(withColon.events.map(\.id) == ["1", nil])
    #expect(withColon.lastEventID == "")
    let bare = parsed("id: 1\ndata: a\n\nid\ndata: b\n\n")
    #expect(bare.events.map(\.id) == ["1", nil])
  }

  @Test("the last event ID carries over to later events and is set at each empty line")
  func lastEventIDCarriesOver() throws {
    #expect(parsed("id: 7\ndata: a\n\ndata: b\n\n").events.map(\.id) == ["7", "7"])
    var parser = ServerSentEventParser()
    _ = try parser.feed(Array("id: 9\n".utf8))
    #expect(parser.lastEventID == "")
    // An empty line without data dispatches nothing but still sets the last event ID.
    #expect(try parser.feed(Array("\n".utf8)).isEmpty)
    #expect(parser.lastEventID == "9")
    #expect(try parser.feed(Array("data: x\n\n".utf8)) == [ServerSentEvent(id: "9", data: "x")])
  }

  @Test("retry takes only ASCII digits, as milliseconds, in effect at once")
  func retry() {
    let outcome = parsed("retry: 1500\ndata: a\n\n")
    #expect(outcome.events == [ServerSentEvent(data: "a", retry: .milliseconds(1500))])
    #expect(outcome.reconnectionTime == .milliseconds(1500))
    let ignored = parsed(
      "retry: 100\nretry: 15x\nretry: -1\nretry: 1.5\nretry:\nretry\nretry:  10\nretry: 0x1\n"
        + "retry: ١\ndata: a\n\n")
    #expect(ignored.events.map(\.retry) == [.milliseconds(100)])
    let changed = parsed("retry: 100\ndata: a\nretry: 200\n\ndata: b\n\n")
    #expect(changed.events.map(\.retry) == [.milliseconds(200), .milliseconds(200)])
    #expect(parsed("retry: 007\n").reconnectionTime == .milliseconds(7))
    #expect(parsed("data: a\n\n").events.map(\.retry) == [nil])
  }

  @Test("a retry too large for 64 bits counts as the largest")
  func hugeRetry() {
    #expect(
      parsed("retry: 99999999999999999999999999\n").reconnectionTime == .milliseconds(Int64.max))
  }

  @Test("unknown fields and differently cased names are ignored")
  func unknownFields() {
    let outcome = parsed("foo: bar\ndata: a\nDATA: b\nData: c\n data: d\ndata : e\nEvent: x\n\n")
    #expect(outcome.events == [ServerSentEvent(data: "a")])
  }

  @Test("a line without a colon is a field with an empty value")
  func fieldWithoutColon() {
    #expect(parsed("event: x\nevent\ndata\n\n").events == [ServerSentEvent(data: "")])
  }

  @Test("exactly one space after the colon is stripped, and nothing else")
  func oneSpaceStripped() {
    #expect(data("data:  two\n\ndata:\tx\n\ndata: \n\ndata: a \n\n") == [" two", "\tx", "", "a "])
    #expect(data("data: a:b: c\n\n") == ["a:b: c"])
  }

  @Test("comments are ignored and do not end an event")
  func comments() {
    #expect(data(":\n: hi\n:data: x\n\n").isEmpty)
    #expect(data("data: a\n: keep-alive\ndata: b\n\n") == ["a\nb"])
  }

  @Test("the event type resets after each empty line, even without data")
  func eventTypeResets() {
    let events = parsed(
      "event: a\n\ndata: b\n\nevent: c\ndata: d\n\ndata: e\n\nevent:\ndata: f\n\n"
    )
    .events
    #expect(events.map(\.event) == ["message", "c", "message", "message"])
  }

  @Test("empty lines alone dispatch nothing")
  func emptyLines() {
    #expect(parsed("\n\r\n\r\n\n").events.isEmpty)
  }

  @Test("an event not ended by an empty line is never dispatched")
  func incompleteFinalEvent() {
    #expect(data("data: a\n\ndata: b\n") == ["a"])
    #expect(data("data: a\n\ndata: b") == ["a"])
    #expect(parsed("data: a\n\nid: 5\n").lastEventID == "")
  }

  // MARK: - Limits

  @Test("a line past the length limit throws badResponse, after the events before it")
  func lineLengthLimit() throws {
    let fits = parsed("data: 1234\n\n", maximumLineLength: 10)
    #expect(fits.events.map(\.data) == ["1234"])
    #expect(fits.error == nil)
    let long = parsed("data: a\n\ndata: 12345\n\n", maximumLineLength: 10)
    #expect(long.events.map(\.data) == ["a"])
    #expect(
      long.error == "badResponse: an event stream line is longer than the limit of 10 bytes")
    // The limit holds before the line ends, and the parser stays failed.
    var parser = ServerSentEventParser(maximumLineLength: 10)
    let error = #expect(throws: CourierError.self) {
      try parser.feed(Array(repeating: UInt8(ascii: "x"), count: 11))
    }
    #expect(error?.kind == .badResponse)
    #expect(throws: CourierError.self) { try parser.feed(Array("\n\n".utf8)) }
  }

  @Test("a line end or a leading byte order mark does not count toward the limit")
  func lineLengthExcludesEnds() {
    #expect(data("\u{FEFF}data: 1234\r\n\r\n") == ["1234"])
    #expect(parsed("\u{FEFF}data: 1234\r\n\r\n", maximumLineLength: 10).error == nil)
  }

  @Test("an event's data past the data limit throws badResponse")
  func dataLimit() {
    let fits = parsed("data: abc\ndata: d\n\n", maximumDataLength: 5)
    #expect(fits.events.map(\.data) == ["abc\nd"])
    let long = parsed("data: abc\ndata: de\n\n", maximumDataLength: 5)
    #expect(long.events.isEmpty)
    #expect(long.error?.hasPrefix("badResponse: an event stream event's data passed") == true)
  }

  // MARK: - Input and decoding

  @Test("bytes without contiguous storage parse the same")
  func nonContiguousBytes() throws {
    var parser = ServerSentEventParser()
    let bytes = Array("id: 1\ndata: a\n\n".utf8)
    #expect(try parser.feed(bytes.lazy.map { $0 }) == [ServerSentEvent(id: "1", data: "a")])
  }

  private struct Price: Decodable, Equatable {
    let symbol: String
    let change: Int
  }

  @Test("decode reads data as JSON; a failure names the event")
  func decode() throws {
    let event = ServerSentEvent(id: "4", event: "price", data: #"{"symbol":"YHOO","change":2}"#)
    #expect(try event.decode(Price.self) == Price(symbol: "YHOO", change: 2))
    let bad = ServerSentEvent(id: "5", event: "price", data: #"{"symbol":"YHOO"}"#)
    let error = #expect(throws: CourierError.self) { try bad.decode(Price.self) }
    #expect(error?.kind == .decoding)
    #expect(error?.underlying is DecodingError)
    #expect(error?.debugMessage.contains(#"event "price" id "5""#) == true)
    #expect(error?.debugMessage.contains("change") == true)
  }
}

// MARK: - The asynchronous sequence

private struct BaseFailure: Error {}

/// A body that delivers `pieces`, then ends or fails with `error`.
private func body(
  _ pieces: [String], error: (any Error)? = nil
) -> AsyncThrowingStream<
  Data, any Error
> {
  AsyncThrowingStream { continuation in
    for piece in pieces { continuation.yield(Data(piece.utf8)) }
    continuation.finish(throwing: error)
  }
}

private func requireSendable<T: Sendable>(_: T) {}

@Suite("Server-sent events: parsed from a body's pieces", .timeLimit(.minutes(5)))
struct ServerSentEventsTests {
  @Test("events come out as their empty lines arrive; an unended last event is dropped")
  func events() async throws {
    let stream = AsyncStream<Data> { continuation in
      for piece in ["retry: 3000\nid: 1\nda", "ta: a\n", "\ndata: b\r", "\n\r\ndata: c\n"] {
        continuation.yield(Data(piece.utf8))
      }
      continuation.finish()
    }
    var events: [ServerSentEvent] = []
    for try await event in stream.serverSentEvents { events.append(event) }
    #expect(
      events == [
        ServerSentEvent(id: "1", data: "a", retry: .seconds(3)),
        ServerSentEvent(id: "1", data: "b", retry: .seconds(3)),
      ])
    requireSendable(stream.serverSentEvents)
  }

  @Test("an error from the body comes out as a CourierError, after the events before it")
  func baseError() async throws {
    var iterator = body(["data: a\n\ndata: b\n"], error: BaseFailure()).serverSentEvents
      .makeAsyncIterator()
    #expect(try await iterator.next() == ServerSentEvent(data: "a"))
    let error = await #expect(throws: CourierError.self) { try await iterator.next() }
    #expect(error?.underlying is BaseFailure)
    #expect(try await iterator.next() == nil)
  }

  @Test("a CourierError from the body is kept as it is")
  func baseCourierError() async throws {
    let thrown = CourierError(kind: .connectionLost, debugMessage: "reset by peer")
    var iterator = body([], error: thrown).serverSentEvents.makeAsyncIterator()
    let error = await #expect(throws: CourierError.self) { try await iterator.next() }
    #expect(error?.kind == .connectionLost)
    #expect(error?.debugMessage == "reset by peer")
  }

  @Test("a line past the limit ends the sequence with badResponse, after earlier events")
  func limit() async throws {
    var iterator = body(["data: a\n\ndata: b\n\ndata: 12345678"]).serverSentEvents(
      maximumLineLength: 10
    ).makeAsyncIterator()
    #expect(try await iterator.next()?.data == "a")
    #expect(try await iterator.next()?.data == "b")
    let error = await #expect(throws: CourierError.self) { try await iterator.next() }
    #expect(error?.kind == .badResponse)
    #expect(try await iterator.next() == nil)
  }
}
