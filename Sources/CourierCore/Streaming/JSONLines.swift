import Foundation

/// The values of a JSON Lines (NDJSON) body, decoded one line at a time as the body arrives.
///
/// Lines end at LF; a CR before the LF is dropped, so CRLF bodies read the same. Lines that
/// are empty or hold only JSON white space are skipped, and a last line without a line end
/// is still decoded. Line numbers in errors count every line from 1, skipped ones included,
/// so they match an editor's.
///
/// A line longer than ``maximumLineLength`` bytes (its CR included, its LF not) throws a
/// ``CourierError`` of kind ``CourierError/Kind/bodyTooLarge`` as soon as its length passes
/// the limit: a server that never ends a line cannot make the client buffer it whole. A line
/// that does not decode throws kind ``CourierError/Kind/decoding`` with the `DecodingError`
/// as its underlying error. An error from the body is rethrown as a ``CourierError``. After
/// an error the sequence ends.
public struct JSONLines<Value: Decodable, Base: AsyncSequence>: AsyncSequence
where Base.Element == Data {
  /// Each line's value, in body order.
  public typealias Element = Value
  /// Every error is a ``CourierError``.
  public typealias Failure = CourierError

  private let base: Base
  private let decoder: JSONDecoder

  /// The longest line accepted, in bytes, not counting its LF.
  public let maximumLineLength: Int

  /// Decodes each line of `base` as a `Value` with `decoder`.
  ///
  /// - Parameter maximumLineLength: The longest line accepted, in bytes; a negative value
  ///   counts as 0.
  public init(
    _ base: Base, of type: Value.Type = Value.self, decoder: JSONDecoder = JSONDecoder(),
    maximumLineLength: Int = 1 << 20
  ) {
    self.base = base
    self.decoder = decoder
    self.maximumLineLength = Swift.max(0, maximumLineLength)
  }

  /// Starts reading the body.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(
      base: base.makeAsyncIterator(), decoder: decoder, maximumLineLength: maximumLineLength)
  }

  /// Reads pieces of the body until a line with a value is complete.
  public struct AsyncIterator: AsyncIteratorProtocol {
    /// Each line's value, in body order.
    public typealias Element = Value
    /// Every error is a ``CourierError``.
    public typealias Failure = CourierError

    private var base: Base.AsyncIterator
    private let decoder: JSONDecoder
    private let maximumLineLength: Int
    /// The piece being split into lines, and where its unread bytes start.
    private var piece = Data()
    private var position = 0
    /// The start of a line whose end has not arrived yet.
    private var line = Data()
    /// How many lines have ended so far.
    private var lineNumber = 0
    private var finished = false

    init(base: Base.AsyncIterator, decoder: JSONDecoder, maximumLineLength: Int) {
      self.base = base
      self.decoder = decoder
      self.maximumLineLength = maximumLineLength
    }

    /// The next line's value, or `nil` when the body has ended.
    public mutating func next() async throws(CourierError) -> Value? {
      try await next(isolation: nil)
    }

    /// The next line's value, or `nil` when the body has ended, reading the body on `actor`.
    public mutating func next(
      isolation actor: isolated (any Actor)?
    ) async throws(CourierError) -> Value? {
      while !finished {
        if position < piece.endIndex {
          let lineFeed = piece.withUnsafeBytes { bytes in
            bytes[(position - piece.startIndex)...].firstIndex(of: UInt8(ascii: "\n"))
          }
          guard let lineFeed else {
            let rest = piece[position...]
            try checkLength(line.count + rest.count)
            line.append(rest)
            position = piece.endIndex
            continue
          }
          let end = piece.startIndex + lineFeed
          let text = piece[position..<end]
          position = end + 1
          try checkLength(line.count + text.count)
          lineNumber += 1
          let value: Value?
          if line.isEmpty {
            value = try decode(text)
          } else {
            line.append(text)
            value = try decode(line)
            clearLine()
          }
          if let value { return value }
          continue
        }
        let next: Data?
        do {
          next = try await base.next(isolation: actor)
        } catch {
          finished = true
          throw CourierError(error)
        }
        guard let next else {
          finished = true
          guard !line.isEmpty else { return nil }
          lineNumber += 1
          let value = try decode(line)
          clearLine()
          return value
        }
        piece = next
        position = next.startIndex
      }
      return nil
    }

    /// Throws when the line being read, `length` bytes so far, is past the limit.
    private mutating func checkLength(_ length: Int) throws(CourierError) {
      guard length > maximumLineLength else { return }
      finished = true
      throw CourierError(
        kind: .bodyTooLarge,
        debugMessage: "JSON Lines: line \(lineNumber + 1) is longer than the limit of "
          + "\(maximumLineLength) bytes")
    }

    /// The value of line ``lineNumber``, or `nil` when the line is blank.
    private mutating func decode(_ text: Data) throws(CourierError) -> Value? {
      var content = text
      if content.last == UInt8(ascii: "\r") { content = content.dropLast() }
      guard content.contains(where: { !Self.isWhitespace($0) }) else { return nil }
      do {
        return try decoder.decode(Value.self, from: content)
      } catch {
        finished = true
        let detail =
          (error as? DecodingError).map(CourierError.describe) ?? String(describing: error)
        throw CourierError(
          kind: .decoding,
          debugMessage: "line \(lineNumber): could not decode \(Value.self): "
            + detail,
          underlying: error)
      }
    }

    /// Empties ``line``, keeping its storage unless a long line made it large.
    private mutating func clearLine() {
      if line.count <= 64 << 10 {
        line.removeAll(keepingCapacity: true)
      } else {
        line = Data()
      }
    }

    /// JSON's white space: space, tab, LF and CR.
    private static func isWhitespace(_ byte: UInt8) -> Bool {
      byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
  }
}

extension JSONLines: Sendable where Base: Sendable {}

extension AsyncSequence where Element == Data {
  /// The body's JSON Lines (NDJSON), each line decoded as a `V` as it arrives.
  ///
  /// - Parameters:
  ///   - type: The type of each line's value.
  ///   - decoder: The decoder for each line.
  ///   - maximumLineLength: The longest line accepted, in bytes.
  public func jsonLines<V: Decodable>(
    of type: V.Type, decoder: JSONDecoder = JSONDecoder(), maximumLineLength: Int = 1 << 20
  ) -> JSONLines<V, Self> {
    JSONLines(self, decoder: decoder, maximumLineLength: maximumLineLength)
  }
}
