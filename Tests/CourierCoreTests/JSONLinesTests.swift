import CourierCore
import Foundation
import Synchronization
import Testing

private struct Item: Decodable, Equatable {
  let a: Int
}

private struct LineFailure: Error {}

/// A body that delivers `pieces`, then ends or fails with `error`.
private func lines(
  _ pieces: [[UInt8]], error: (any Error)? = nil
) -> AsyncThrowingStream<
  Data, any Error
> {
  AsyncThrowingStream { continuation in
    for piece in pieces { continuation.yield(Data(piece)) }
    continuation.finish(throwing: error)
  }
}

/// What reading a body gave: the values, and the error that stopped it.
private struct Outcome<Value: Equatable>: Equatable {
  var values: [Value] = []
  var error: String?
}

private func read<Value: Decodable & Equatable>(
  _ pieces: [[UInt8]], as type: Value.Type, maximumLineLength: Int
) async -> Outcome<Value> {
  var outcome = Outcome<Value>()
  var iterator = lines(pieces).jsonLines(of: Value.self, maximumLineLength: maximumLineLength)
    .makeAsyncIterator()
  do {
    while let value = try await iterator.next() { outcome.values.append(value) }
  } catch {
    outcome.error = "\(error.kind): \(error.debugMessage)"
    if (try? await iterator.next()) != nil { outcome.error = "values after the error" }
  }
  return outcome
}

/// Reads `text` whole, byte by byte, and split in two at every position; expects every way
/// to give the same outcome, and returns it.
private func decoded<Value: Decodable & Equatable>(
  _ text: String, as type: Value.Type = Item.self, maximumLineLength: Int = 1 << 20,
  sourceLocation: SourceLocation = #_sourceLocation
) async -> Outcome<Value> {
  let bytes = Array(text.utf8)
  let whole = await read([bytes], as: type, maximumLineLength: maximumLineLength)
  let byteByByte = await read(bytes.map { [$0] }, as: type, maximumLineLength: maximumLineLength)
  #expect(byteByByte == whole, "byte by byte", sourceLocation: sourceLocation)
  for cut in 0...bytes.count {
    let split = await read(
      [Array(bytes[..<cut]), Array(bytes[cut...])], as: type, maximumLineLength: maximumLineLength)
    if split != whole {
      Issue.record("split at \(cut): \(split) != \(whole)", sourceLocation: sourceLocation)
      break
    }
  }
  return whole
}

/// Counts the pieces a body has delivered.
private final class PieceCounter: Sendable {
  private let count = Mutex(0)
  func next() -> Int {
    count.withLock {
      $0 += 1; return $0
    }
  }
  var delivered: Int { count.withLock { $0 } }
}

@Suite("JSON Lines: one value per line, decoded as the body arrives", .timeLimit(.minutes(5)))
struct JSONLinesTests {
  @Test("one value per line, LF or CRLF")
  func values() async {
    #expect(
      await decoded(#"{"a":1}"# + "\n" + #"{"a":2}"# + "\n").values == [Item(a: 1), Item(a: 2)])
    let crlf = await decoded(#"{"a":1}"# + "\r\n" + #"{"a":2}"# + "\r\n")
    #expect(crlf == Outcome(values: [Item(a: 1), Item(a: 2)]))
  }

  @Test("empty and white-space lines are skipped")
  func blankLines() async {
    let outcome = await decoded("\n" + #"{"a":1}"# + "\n   \n\t\r\n\r\n" + #" {"a":2} "# + "\n\n")
    #expect(outcome == Outcome(values: [Item(a: 1), Item(a: 2)]))
    #expect(await decoded("", as: Item.self) == Outcome())
    #expect(await decoded("\n \n", as: Item.self) == Outcome())
  }

  @Test("a last line without a line end is still decoded; a blank one is skipped")
  func finalLineWithoutLineFeed() async {
    #expect(await decoded(#"{"a":1}"# + "\n" + #"{"a":2}"#).values == [Item(a: 1), Item(a: 2)])
    #expect(await decoded(#"{"a":1}"# + "\r").values == [Item(a: 1)])
    #expect(await decoded(#"{"a":1}"# + "\n  ") == Outcome(values: [Item(a: 1)]))
  }

  @Test("a line split over many pieces decodes whole")
  func lineOverManyPieces() async throws {
    let line = Array((#"{"a":7,"pad":""# + String(repeating: "é", count: 200) + "\"}\n").utf8)
    let pieces = stride(from: 0, to: line.count, by: 3).map {
      Array(line[$0..<min($0 + 3, line.count)])
    }
    var values: [Item] = []
    for try await value in lines(pieces + pieces).jsonLines(of: Item.self) { values.append(value) }
    #expect(values == [Item(a: 7), Item(a: 7)])
  }

  @Test("a line that does not decode throws decoding with its line number")
  func decodingErrorNamesLine() async throws {
    let outcome = await decoded(#"{"a":1}"# + "\n\n" + #"{"a":"x"}"# + "\n" + #"{"a":3}"# + "\n")
    #expect(outcome.values == [Item(a: 1)])
    #expect(outcome.error?.hasPrefix("decoding: line 3: ") == true)
    #expect(outcome.error?.contains("type mismatch at a") == true)
    let invalid = await decoded(#"{"a":1}"# + "\r\n" + "nope\r\n")
    #expect(invalid.error?.hasPrefix("decoding: line 2: ") == true)
    let last = await decoded("\n\n" + #"{"b":1}"#)
    #expect(last.error?.hasPrefix("decoding: line 3: ") == true)

    var iterator = lines([Array("{}\n".utf8)]).jsonLines(of: Item.self).makeAsyncIterator()
    let error = await #expect(throws: CourierError.self) { try await iterator.next() }
    #expect(error?.kind == .decoding)
    #expect(error?.underlying is DecodingError)
  }

  @Test("a line past the length limit throws bodyTooLarge with its line number")
  func lineTooLong() async {
    let fits = await decoded(#"{"a":1234}"# + "\n", maximumLineLength: 10)
    #expect(fits == Outcome(values: [Item(a: 1234)]))
    let long = await decoded(
      #"{"a":1}"# + "\n\n" + #"{"a":12345}"# + "\n" + #"{"a":2}"# + "\n", maximumLineLength: 10)
    #expect(long.values == [Item(a: 1)])
    #expect(long.error == "bodyTooLarge: JSON Lines: line 3 is longer than the limit of 10 bytes")
  }

  @Test("a line that never ends is refused once it passes the limit, without reading on")
  func endlessLine() async {
    let counter = PieceCounter()
    let endless = AsyncStream<Data> {
      _ = counter.next()
      return Data(repeating: UInt8(ascii: "1"), count: 100)
    }
    var iterator = endless.jsonLines(of: Int.self, maximumLineLength: 1_000).makeAsyncIterator()
    let error = await #expect(throws: CourierError.self) { try await iterator.next() }
    #expect(error?.kind == .bodyTooLarge)
    #expect(error?.debugMessage.contains("line 1 ") == true)
    #expect(counter.delivered == 11)
  }

  @Test("a custom decoder decodes each line")
  func customDecoder() async throws {
    struct User: Decodable, Equatable { let userName: String }
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    var users: [User] = []
    let body = lines([Array((#"{"user_name":"ada"}"# + "\n").utf8)])
    for try await user in body.jsonLines(of: User.self, decoder: decoder) { users.append(user) }
    #expect(users == [User(userName: "ada")])
  }

  @Test("a line of null is a value of an optional type, not a skipped line")
  func optionalValues() async {
    #expect(await decoded("null\n\n1\n", as: Int?.self).values == [nil, 1])
  }

  @Test("an error from the body comes out as a CourierError, after the values before it")
  func baseError() async throws {
    var iterator = lines([Array("1\n2".utf8)], error: LineFailure()).jsonLines(of: Int.self)
      .makeAsyncIterator()
    #expect(try await iterator.next() == 1)
    let error = await #expect(throws: CourierError.self) { try await iterator.next() }
    #expect(error?.underlying is LineFailure)
    #expect(try await iterator.next() == nil)

    let thrown = CourierError(kind: .connectionLost, debugMessage: "reset by peer")
    var failing = lines([], error: thrown).jsonLines(of: Int.self).makeAsyncIterator()
    let kept = await #expect(throws: CourierError.self) { try await failing.next() }
    #expect(kept?.kind == .connectionLost)
  }

  @Test("the sequence is Sendable when its body is")
  func sendable() {
    func requireSendable<T: Sendable>(_: T) {}
    requireSendable(AsyncStream<Data> { nil }.jsonLines(of: Item.self))
  }
}
