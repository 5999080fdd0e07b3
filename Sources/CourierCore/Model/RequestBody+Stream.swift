import Foundation

extension RequestBody {
  /// A body read from an `AsyncSequence` of byte chunks while the request is sent, made anew
  /// for every send: each attempt (a retry) and each redirect hop that resends the body calls
  /// `makeSequence` again, so the body is replayable (``isReplayable``).
  ///
  /// ```swift
  /// let body = RequestBody.stream(length: 3 * 65_536) {
  ///   AsyncStream<Data> { continuation in
  ///     for _ in 0..<3 { continuation.yield(Data(repeating: 0x61, count: 65_536)) }
  ///     continuation.finish()
  ///   }
  /// }
  /// ```
  ///
  /// With a `length`, the body goes out with that `Content-Length`, and a sequence that
  /// produces fewer or more bytes fails the attempt with ``CourierError/Kind/invalidRequest``
  /// (the server never gets a body cut short as if it were whole). Without one, the transport
  /// frames it itself: `CurlTransport` sends it as it is produced, with
  /// `Transfer-Encoding: chunked` over HTTP/1.1; `URLSessionTransport` first writes it all to
  /// a temporary file and sends that with a `Content-Length` (see its documentation for why).
  ///
  /// A sequence that throws fails the attempt with ``CourierError/Kind/invalidRequest``, the
  /// sequence's error as ``CourierError/underlying``; cancelling the request cancels the
  /// task that reads the sequence.
  ///
  /// - Parameters:
  ///   - length: The number of bytes the sequence produces, when known.
  ///   - makeSequence: Makes the sequence for one send; called once per send, on the task
  ///     that reads it.
  public static func stream<S: AsyncSequence & Sendable>(
    length: Int64? = nil, _ makeSequence: @escaping @Sendable () -> S
  ) -> RequestBody where S.Element == Data {
    RequestBody(
      storage: .stream(
        BodyStreamSource(length: length, replayable: true) {
          IteratorBox(makeSequence().makeAsyncIterator())
        }))
  }

  /// A body read from `sequence` while the request is sent, once: the body is not replayable
  /// (``isReplayable`` is `false`), so `RetryMiddleware` does not retry the request, and a
  /// second send of it (a retry of your own, a `307`/`308` redirect that resends the body)
  /// fails with ``CourierError/Kind/invalidRequest`` and says how to make it replayable.
  ///
  /// Prefer ``stream(length:_:)`` when the sequence can be made again: the request can then
  /// be retried. `length` and errors work as there.
  ///
  /// - Parameters:
  ///   - sequence: The chunks of the body, read by the first send only.
  ///   - length: The number of bytes the sequence produces, when known.
  public static func stream<S: AsyncSequence & Sendable>(
    _ sequence: S, length: Int64? = nil
  ) -> RequestBody where S.Element == Data {
    RequestBody(
      storage: .stream(
        BodyStreamSource(length: length, replayable: false) {
          IteratorBox(sequence.makeAsyncIterator())
        }))
  }

  /// Whether the body is read from an `AsyncSequence` (``stream(length:_:)``,
  /// ``stream(_:length:)``): a transport reads it with ``makeChunks()``.
  public var isStream: Bool {
    if case .stream = storage { return true }
    return false
  }

  /// The length given to a stream body, when one was; `nil` for a stream of unknown length
  /// and for every other kind of body (``data`` and ``fileURL`` have theirs).
  public var streamLength: Int64? {
    if case .stream(let source) = storage { return source.length }
    return nil
  }

  /// The chunks of a stream body for one send: what a transport iterates to send it, once.
  ///
  /// A replayable stream makes a new sequence on each call. A one-shot stream
  /// (``stream(_:length:)``) gives its sequence to the first call; every later call throws
  /// ``CourierError/Kind/invalidRequest`` with a message that says how to make the body
  /// replayable. A body that is not a stream gives no chunks (an empty sequence): read
  /// ``data`` or ``fileURL`` instead, or ``collect(upTo:)`` for any kind.
  ///
  /// - Throws: ``CourierError/Kind/invalidRequest`` for a one-shot stream read already, or
  ///   a negative length.
  public func makeChunks() throws(CourierError) -> Chunks {
    guard case .stream(let source) = storage else { return Chunks(length: 0, source: nil) }
    return try source.makeChunks()
  }

  /// The whole body in memory, at most `limit` bytes: the bytes of a data body, the contents
  /// of a file body, or the chunks of one send of a stream body (a one-shot stream is used up
  /// by it). For a transport that needs the body whole, such as a test double.
  ///
  /// - Throws: ``CourierError/Kind/bodyTooLarge`` past `limit` (a stream stops being read
  ///   there), ``CourierError/Kind/invalidRequest`` for a file that cannot be read or a
  ///   stream that cannot be (see ``makeChunks()`` and ``Chunks``).
  public func collect(upTo limit: Int) async throws(CourierError) -> Data {
    func tooLarge(_ what: String) -> CourierError {
      CourierError(
        kind: .bodyTooLarge,
        debugMessage: "the request body (\(what)) passed the limit of "
          + "\(DescriptionText.bytes(limit)) given to RequestBody.collect(upTo:)")
    }
    switch storage {
    case .empty: return Data()
    case .data(let data):
      guard data.count <= limit else { throw tooLarge("\(data.count) bytes in memory") }
      return data
    case .file(let url):
      switch RegularFile.check(url) {
      case .problem(let problem):
        throw CourierError(
          kind: .invalidRequest, debugMessage: "the file body cannot be read: \(problem)")
      case .sendable(let size):
        guard size <= Int64(limit) else { throw tooLarge("a file of \(size) bytes") }
      }
      do {
        let data = try Data(contentsOf: url)
        guard data.count <= limit else { throw tooLarge("a file of \(data.count) bytes") }
        return data
      } catch let error as CourierError {
        throw error
      } catch {
        throw CourierError(
          kind: .invalidRequest,
          debugMessage: "the file body \(url.lastPathComponent) cannot be read: \(error)",
          underlying: error)
      }
    case .stream:
      var data = Data()
      for try await chunk in try makeChunks() {
        guard data.count + chunk.count <= limit else { throw tooLarge("a stream") }
        data.append(chunk)
      }
      return data
    }
  }

  /// The chunks of one send of a stream body (``makeChunks()``), in the order the body's
  /// sequence produced them: iterate it once.
  ///
  /// It checks the body as it goes, so that every transport fails the same way: the
  /// sequence's error becomes ``CourierError/Kind/invalidRequest`` (a `CancellationError`,
  /// ``CourierError/Kind/cancelled``, as is an end that comes when the reading task was
  /// cancelled) with the error as ``CourierError/underlying``, and
  /// with a length given, a sequence that produces more bytes throws at the first chunk
  /// past it, one that produces fewer throws at its end; both
  /// ``CourierError/Kind/invalidRequest``, naming both numbers.
  public struct Chunks: AsyncSequence, Sendable {
    /// A chunk of the body.
    public typealias Element = Data
    /// What the iterator throws.
    public typealias Failure = CourierError

    /// The length the body was given, if any.
    public let length: Int64?
    /// Makes the sequence's iterator; `nil` for a body with no chunks.
    private let source: (@Sendable () -> any ChunkIterating)?

    init(length: Int64?, source: (@Sendable () -> any ChunkIterating)?) {
      self.length = length
      self.source = source
    }

    /// Starts reading the sequence.
    public func makeAsyncIterator() -> AsyncIterator {
      AsyncIterator(base: source?(), length: length)
    }

    /// Reads the chunks of a ``Chunks``.
    public struct AsyncIterator: AsyncIteratorProtocol {
      /// What the iterator throws.
      public typealias Failure = CourierError

      private var base: (any ChunkIterating)?
      private let length: Int64?
      private var produced: Int64 = 0

      init(base: (any ChunkIterating)?, length: Int64?) {
        self.base = base
        self.length = length
      }

      /// The next chunk, or `nil` after the last.
      public mutating func next() async throws(CourierError) -> Data? {
        guard let base else { return nil }
        let chunk: Data?
        do {
          chunk = try await base.next()
        } catch {
          self.base = nil
          throw Self.failure(error)
        }
        guard let chunk else {
          self.base = nil
          // Many sequences (`AsyncStream` among them) end when their reader's task is
          // cancelled: that end is no end of the body.
          if Task.isCancelled {
            throw CourierError(
              kind: .cancelled,
              debugMessage: "reading the request body's sequence was cancelled after "
                + "\(produced) bytes; the body was not sent whole")
          }
          if let length, produced != length {
            throw CourierError(
              kind: .invalidRequest,
              debugMessage: "the request body's sequence ended after \(produced) bytes, short "
                + "of the \(length) bytes it was declared to have (RequestBody.stream(length:)); "
                + "the body was not sent whole")
          }
          return nil
        }
        produced += Int64(chunk.count)
        if let length, produced > length {
          self.base = nil
          throw CourierError(
            kind: .invalidRequest,
            debugMessage: "the request body's sequence produced \(produced) bytes or more, past "
              + "the \(length) bytes it was declared to have (RequestBody.stream(length:)); "
              + "the body was not sent whole")
        }
        return chunk
      }

      /// The sequence's `error` as the attempt's failure.
      private static func failure(_ error: any Error) -> CourierError {
        if error is CancellationError {
          return CourierError(
            kind: .cancelled, debugMessage: "reading the request body's sequence was cancelled",
            underlying: error)
        }
        if let error = error as? CourierError, error.kind == .cancelled { return error }
        return CourierError(
          kind: .invalidRequest,
          debugMessage: "the request body's sequence threw \(String(reflecting: error)); the "
            + "body was not sent whole",
          underlying: error)
      }
    }
  }
}

/// An `AsyncSequence`'s iterator behind a protocol, so that ``RequestBody/Chunks`` holds any.
protocol ChunkIterating: AnyObject {
  /// The sequence's next chunk.
  func next() async throws -> Data?
}

/// Holds the iterator of one sequence: a class, so the iterator's state is kept between calls.
final class IteratorBox<Base: AsyncIteratorProtocol>: ChunkIterating where Base.Element == Data {
  private var base: Base

  init(_ base: Base) {
    self.base = base
  }

  func next() async throws -> Data? {
    try await base.next()
  }
}

/// Where a stream body's chunks come from: a maker of sequences (replayable), or one sequence
/// given to the first send only. Compared by identity: a body's copies share it.
final class BodyStreamSource: Sendable, Hashable {
  let length: Int64?
  let isReplayable: Bool
  private let make: @Sendable () -> any ChunkIterating
  /// A one-shot source was read.
  private let taken = PThreadLock(false)

  init(length: Int64?, replayable: Bool, make: @escaping @Sendable () -> any ChunkIterating) {
    self.length = length
    self.isReplayable = replayable
    self.make = make
  }

  /// The chunks for one send; see ``RequestBody/makeChunks()``.
  func makeChunks() throws(CourierError) -> RequestBody.Chunks {
    if let length, length < 0 {
      throw CourierError(
        kind: .invalidRequest,
        debugMessage: "the stream body's length is \(length); give its length in bytes, or nil "
          + "when it is not known")
    }
    if !isReplayable {
      let first = taken.withLock { taken in
        defer { taken = true }
        return !taken
      }
      guard first else {
        throw CourierError(
          kind: .invalidRequest,
          debugMessage: "the request's one-shot stream body (RequestBody.stream(_:length:)) "
            + "was read already, by an earlier attempt or a redirect hop that resends the body; "
            + "to send it again, make it with RequestBody.stream(length:_:), whose closure "
            + "makes a new sequence for each send")
      }
    }
    return RequestBody.Chunks(length: length, source: make)
  }

  static func == (lhs: BodyStreamSource, rhs: BodyStreamSource) -> Bool { lhs === rhs }

  func hash(into hasher: inout Hasher) {
    hasher.combine(ObjectIdentifier(self))
  }
}
