import Foundation

/// The events of a `text/event-stream` body, parsed from its pieces as they arrive.
///
/// Wraps any asynchronous sequence of body pieces (a streamed response body) and yields each
/// ``ServerSentEvent`` as soon as the empty line that ends it arrives, parsed by a
/// ``ServerSentEventParser``. An event left unfinished when the body ends is dropped, as
/// browsers drop it. An error from the body is rethrown as a ``CourierError``, as is a line
/// or an event past the parser's limits; after an error the sequence ends.
public struct ServerSentEvents<Base: AsyncSequence>: AsyncSequence where Base.Element == Data {
  /// Each event, in stream order.
  public typealias Element = ServerSentEvent
  /// Every error is a ``CourierError``.
  public typealias Failure = CourierError

  private let base: Base
  private let maximumLineLength: Int
  private let maximumDataLength: Int

  /// Parses the events of `base`.
  ///
  /// - Parameters:
  ///   - maximumLineLength: The longest line accepted, in bytes.
  ///   - maximumDataLength: The most data one event may gather, in bytes.
  public init(
    _ base: Base, maximumLineLength: Int = 1 << 20, maximumDataLength: Int = 16 << 20
  ) {
    self.base = base
    self.maximumLineLength = maximumLineLength
    self.maximumDataLength = maximumDataLength
  }

  /// Starts reading the body.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(
      base: base.makeAsyncIterator(),
      parser: ServerSentEventParser(
        maximumLineLength: maximumLineLength, maximumDataLength: maximumDataLength))
  }

  /// Reads pieces of the body until the parser completes an event.
  public struct AsyncIterator: AsyncIteratorProtocol {
    /// Each event, in stream order.
    public typealias Element = ServerSentEvent
    /// Every error is a ``CourierError``.
    public typealias Failure = CourierError

    private var base: Base.AsyncIterator
    private var parser: ServerSentEventParser
    /// Events parsed from the last piece and not returned yet.
    private var ready: [ServerSentEvent] = []
    private var readyIndex = 0
    /// An error to throw once ``ready`` is drained.
    private var failure: CourierError?
    private var finished = false

    init(base: Base.AsyncIterator, parser: ServerSentEventParser) {
      self.base = base
      self.parser = parser
    }

    /// The next event, or `nil` when the body has ended.
    public mutating func next() async throws(CourierError) -> ServerSentEvent? {
      try await next(isolation: nil)
    }

    /// The next event, or `nil` when the body has ended, reading the body on `actor`.
    public mutating func next(
      isolation actor: isolated (any Actor)?
    ) async throws(CourierError) -> ServerSentEvent? {
      while true {
        if readyIndex < ready.count {
          readyIndex += 1
          return ready[readyIndex - 1]
        }
        if let failure {
          self.failure = nil
          finished = true
          throw failure
        }
        if finished { return nil }
        ready.removeAll(keepingCapacity: true)
        readyIndex = 0
        let piece: Data?
        do {
          piece = try await base.next(isolation: actor)
        } catch {
          finished = true
          throw CourierError(error)
        }
        guard let piece else {
          finished = true
          return nil
        }
        do {
          try parser.feed(piece, into: &ready)
        } catch {
          failure = error
        }
      }
    }
  }
}

extension ServerSentEvents: Sendable where Base: Sendable {}

extension AsyncSequence where Element == Data {
  /// The body's server-sent events, parsed as they arrive, with the default limits.
  public var serverSentEvents: ServerSentEvents<Self> {
    ServerSentEvents(self)
  }

  /// The body's server-sent events, parsed as they arrive.
  ///
  /// - Parameters:
  ///   - maximumLineLength: The longest line accepted, in bytes.
  ///   - maximumDataLength: The most data one event may gather, in bytes.
  public func serverSentEvents(
    maximumLineLength: Int = 1 << 20, maximumDataLength: Int = 16 << 20
  ) -> ServerSentEvents<Self> {
    ServerSentEvents(
      self, maximumLineLength: maximumLineLength, maximumDataLength: maximumDataLength)
  }
}
