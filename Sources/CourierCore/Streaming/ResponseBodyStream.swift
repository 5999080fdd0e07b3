import Foundation

/// A response body read while it arrives: an `AsyncSequence` of byte chunks (`Data`), for
/// bodies too large to hold (an export, a proxied file) or that never end by themselves (a
/// stream of events). `Client.stream` returns one in its ``StreamedResponse``.
///
/// ```swift
/// let streamed = try await client.stream(Endpoint<Void>(.get, "export"))
/// for try await chunk in streamed.body {
///   FileHandle.standardOutput.write(chunk)
/// }
/// ```
///
/// ## Memory and pace
/// The transport writes chunks into a buffer of ``defaultBufferSize`` bytes (or what it was
/// given); when the buffer is full it pauses the transfer (`CurlTransport`
/// pauses libcurl, so TCP's window slows the server) and goes on once at most half of it is
/// left. A slow reader slows the transfer instead of growing memory. A transport that cannot
/// pause (`URLSessionTransport` on Linux) bounds what it keeps ahead of the reader and fails
/// the body with ``CourierError/Kind/bodyTooLarge`` past it.
///
/// ## Reading once, and ending early
/// The body can be iterated once: a second iterator throws
/// ``CourierError/Kind/invalidRequest``. Breaking out of the loop (the iterator is dropped),
/// dropping the stream without iterating it, or cancelling the reading task ends the transfer
/// at once: the transport closes its connection rather than reuse one with a body half read.
///
/// ## Errors
/// A failure after the head, such as the connection lost in mid-body or the transport shut
/// down, is thrown by the iterator as a ``CourierError`` with its kind; a cancelled task gets
/// ``CourierError/Kind/cancelled``.
///
/// ## Making one
/// A transport makes one with ``makeStream(bufferSize:onDemand:onTermination:)`` and writes
/// into its ``Writer``; a test or a transport that buffers wraps a whole body with
/// ``init(_:)``.
public struct ResponseBodyStream: AsyncSequence, Sendable {
  /// A chunk of the body, in the order received.
  public typealias Element = Data
  /// What the iterator throws.
  public typealias Failure = CourierError

  /// The buffer a transport fills ahead of the reader unless told otherwise: 1 MiB.
  public static let defaultBufferSize = 1 << 20

  /// The most a transport reads at once for a stream of `bufferSize` bytes: a quarter of the
  /// buffer, from 16 KiB to 100 KiB (100 KiB for the default 1 MiB), the size `curl` itself
  /// reads with. Larger reads mean fewer turns per megabyte, but once one read asks for more
  /// than 128 KiB the kernel's copy out of the socket costs several times as much per byte
  /// (`Docs/Benchmarks.md`). The stream's segments are at least this large, so that every
  /// read fits one.
  package static func readSize(bufferSize: Int) -> Int {
    Swift.min(Swift.max(bufferSize / 4, 16 * 1024), 100 * 1024)
  }

  /// Where the chunks come from: a buffer a producer fills, or another stream through a
  /// ``ResponseBodyTransform``.
  private enum Backing: Sendable {
    case buffer(Handle)
    case transformed(TransformedBody)
  }

  private let backing: Backing

  /// The buffer at the root of this stream (through its transforms), for the client's hold on
  /// a streamed request: never the handle, so that the client does not keep the stream alive.
  var core: StreamCore {
    switch backing {
    case .buffer(let handle): handle.core
    case .transformed(let body): body.root
    }
  }

  private init(handle: Handle) {
    backing = .buffer(handle)
  }

  /// A body already whole, delivered as one chunk (none when `body` is empty): what a
  /// transport that does not stream gives, and what tests use.
  public init(_ body: Data) {
    let core = StreamCore(bufferSize: Swift.max(1, body.count), onDemand: nil, onTermination: nil)
    if !body.isEmpty { _ = core.write(body) }
    core.finish(with: nil)
    backing = .buffer(Handle(core: core))
  }

  /// Makes a stream and the writer its producer fills.
  ///
  /// - Parameters:
  ///   - bufferSize: The bytes buffered ahead of the reader before ``Writer/write(_:)``
  ///     answers `false` (pause); default ``defaultBufferSize``.
  ///   - onDemand: Called when a producer told to pause may go on (at most half the buffer
  ///     is left), on the reading task or the producer's own. It must not block.
  ///   - onTermination: Called once when the reader stops before the end (it broke out of its
  ///     loop, dropped the stream, or its task was cancelled): the producer should stop the
  ///     transfer. Not called after ``Writer/finish()`` or ``Writer/fail(_:)``. It must not
  ///     block.
  public static func makeStream(
    bufferSize: Int = defaultBufferSize,
    onDemand: (@Sendable () -> Void)? = nil,
    onTermination: (@Sendable () -> Void)? = nil
  ) -> (stream: ResponseBodyStream, writer: Writer) {
    let core = StreamCore(
      bufferSize: Swift.max(1, bufferSize), onDemand: onDemand, onTermination: onTermination)
    return (ResponseBodyStream(handle: Handle(core: core)), Writer(core: core))
  }

  /// Reads the rest of the body into memory, failing with ``CourierError/Kind/bodyTooLarge``
  /// (and ending the transfer) when it passes `limit` bytes.
  public func collect(upTo limit: Int) async throws(CourierError) -> Data {
    var data = Data()
    for try await chunk in self {
      guard data.count + chunk.count <= limit else {
        throw CourierError(
          kind: .bodyTooLarge,
          debugMessage: "the streamed body passed the limit of \(DescriptionText.bytes(limit)) "
            + "given to ResponseBodyStream.collect(upTo:)",
          stage: "transport")
      }
      data.append(chunk)
    }
    return data
  }

  /// Starts reading the body; see the type's documentation for reading it twice.
  public func makeAsyncIterator() -> AsyncIterator {
    switch backing {
    case .buffer(let handle): AsyncIterator(source: handle.core.makeReader().map { .buffer($0) })
    case .transformed(let body): AsyncIterator(source: body.makeReader().map { .transformed($0) })
    }
  }

  /// This body's chunks passed through `transform` (a decoder, a counter), read as the reader
  /// asks for them: the pace and the early stop reach this stream as they would directly.
  /// Read the returned stream, not this one: both share one reading.
  public func transformed(by transform: sending some ResponseBodyTransform) -> ResponseBodyStream {
    ResponseBodyStream(
      backing: .transformed(
        TransformedBody(upstream: makeAsyncIterator(), root: core, transform: transform)))
  }

  private init(backing: Backing) {
    self.backing = backing
  }

  /// Reads the chunks of a ``ResponseBodyStream``.
  public struct AsyncIterator: AsyncIteratorProtocol, Sendable {
    enum Source: Sendable {
      case buffer(Reader)
      case transformed(TransformedBody.Reader)
    }

    let source: Source?

    /// The next chunk, or `nil` after the last.
    public mutating func next() async throws(CourierError) -> Data? {
      try await Self.next(from: source)
    }

    /// The next chunk, or `nil` after the last.
    public mutating func next(
      isolation actor: isolated (any Actor)?
    ) async throws(CourierError) -> Data? {
      try await Self.next(from: source)
    }

    private static func next(from source: Source?) async throws(CourierError) -> Data? {
      switch source {
      case .buffer(let reader): return try await reader.core.next()
      case .transformed(let reader): return try await reader.body.next()
      case nil:
        throw CourierError(
          kind: .invalidRequest,
          debugMessage: "a ResponseBodyStream can be iterated once; it was iterated already",
          stage: "transport")
      }
    }
  }

  /// The producer's side of a ``ResponseBodyStream``: a transport writes the chunks it
  /// receives and ends it once. Safe to call from any thread.
  public final class Writer: Sendable {
    let core: StreamCore

    init(core: StreamCore) {
      self.core = core
    }

    /// Hands the reader `chunk`; `true` while the buffer has room, `false` once it is full:
    /// the producer should pause until `onDemand`. A chunk written after the reader stopped
    /// is dropped (and the answer is `true`: `onTermination` is how the producer hears).
    @discardableResult
    public func write(_ chunk: Data) -> Bool { core.write(chunk) }

    /// Appends `bytes` without waking a waiting reader until ``flush()``: a transport that
    /// receives many pieces in one turn wakes the reader once for all of them. `room` is
    /// ``write(_:)``'s answer; `needsFlush` is `true` the first time a reader waits for them.
    package func append(_ bytes: UnsafeRawBufferPointer) -> (room: Bool, needsFlush: Bool) {
      core.append(bytes)
    }

    /// Wakes a reader waiting for what ``append(_:)`` buffered.
    package func flush() { core.flush() }

    /// Whether the reader stopped before the end: what was written since is dropped.
    public var isTerminated: Bool { core.isTerminated }

    /// Ends the body: the reader gets `nil` after the chunks buffered.
    public func finish() { core.finish(with: nil) }

    /// Ends the body with `error`, thrown by the reader after the chunks buffered.
    public func fail(_ error: CourierError) { core.finish(with: error) }
  }

  /// Kept by every copy of the stream: when the last goes and no iterator was made, the
  /// reader has stopped.
  final class Handle: Sendable {
    let core: StreamCore
    init(core: StreamCore) { self.core = core }
    deinit { core.handleGone() }
  }

  /// Kept by the one iterator: when it goes, the reader has stopped.
  final class Reader: Sendable {
    let core: StreamCore
    init(core: StreamCore) { self.core = core }
    deinit { core.terminate() }
  }
}

/// The shared state of one ``ResponseBodyStream``: the bytes buffered (segments the writes
/// fill, each taken whole by the reader), how the body ended, the reader waiting, and whether
/// the producer was told to pause.
final class StreamCore: Sendable {
  private typealias Waiter = UnsafeContinuation<Result<Data?, CourierError>, Never>

  private struct State {
    var pending: StreamSegments
    var ended = false
    var failure: CourierError?
    /// The error the body ended with, kept (``failure`` is taken by the reader): for
    /// ``StreamCore/endError``.
    var endError: CourierError?
    var waiter: Waiter?
    /// A waiting reader has bytes, to be woken at the producer's ``flush()``.
    var wakeDeferred = false
    var producerPaused = false
    var terminated = false
    var readerMade = false
    var onDemand: (@Sendable () -> Void)?
    var onTermination: (@Sendable () -> Void)?
    /// How the body ended, once it has: `true` when its producer finished it, `false` when it
    /// failed or its reader stopped first.
    var outcome: Bool?
    var onEnd: (@Sendable (Bool) -> Void)?
    /// `onEnd` is running: a reader that finds the end waits for it, so that whoever has
    /// seen the end sees its consequences (the request out of flight, progress complete).
    var endActionRunning = false
    /// What a reader gets once it stopped (``StreamCore/terminate(with:)``).
    var stopError: CourierError?
    /// Every byte the producer wrote, for the client's observers.
    var received = 0
  }

  private let bufferSize: Int
  /// A `pthread` mutex rather than `Mutex`: the reader's continuation passes through it from
  /// the reading task to the transport's thread, and ThreadSanitizer sees the edges of a
  /// `pthread` mutex (not those of `Synchronization.Mutex`, .ci/tsan-suppressions.txt).
  private let state: PThreadLock<State>

  init(
    bufferSize: Int, onDemand: (@Sendable () -> Void)?,
    onTermination: (@Sendable () -> Void)?
  ) {
    self.bufferSize = bufferSize
    // Segments of twice the buffer up to 256 KiB (a buffer's worth of pieces after the
    // first), and never smaller than a transport's read; spares for what the buffer and a
    // read past it hold (4 + 2 for 1 MiB).
    let segmentSize = Swift.max(
      2 * Swift.min(bufferSize, 128 * 1024), ResponseBodyStream.readSize(bufferSize: bufferSize))
    state = PThreadLock(
      State(
        pending: StreamSegments(
          segmentSize: segmentSize, spares: Swift.min(bufferSize / segmentSize + 2, 8)),
        onDemand: onDemand, onTermination: onTermination))
  }

  deinit {
    // Segments the reader never took give their buffers back, and the spares are freed: a
    // chunk the reader keeps must not keep them.
    state.withLock { state in
      state.pending.removeAll()
      return state.pending.pool
    }.close()
  }

  var isTerminated: Bool { state.withLock { $0.terminated } }

  /// The error the body ended with: its producer's failure, or the error it was terminated
  /// with (the client's cancellation or shutdown); `nil` while it goes on, when it ended
  /// whole, or when its reader stopped.
  var endError: CourierError? { state.withLock { $0.endError } }

  /// How many bytes the producer wrote so far (what the reader got once the body ended).
  var bytesReceived: Int { state.withLock { $0.received } }

  /// The buffers the stream's segments use; for tests.
  var segmentPool: StreamSegmentPool { state.withLock { $0.pending.pool } }

  /// Whether a reader is suspended waiting for bytes or the end; for tests.
  var readerIsWaiting: Bool { state.withLock { $0.waiter != nil } }

  /// Calls `action` once when the body ends, with `true` when its producer finished it and
  /// `false` when it failed or its reader stopped first; at once when it has ended already.
  /// What the client uses to keep a streamed request in flight until its body ends.
  func whenEnded(_ action: @escaping @Sendable (Bool) -> Void) {
    let outcome = state.withLock { state -> Bool? in
      if state.outcome == nil { state.onEnd = action }
      return state.outcome
    }
    if let outcome { action(outcome) }
  }

  func write(_ chunk: Data) -> Bool {
    let (waiter, ready, room) = state.withLock { state -> (Waiter?, Data, Bool) in
      guard !state.ended, !state.terminated else { return (nil, Data(), true) }
      // Nothing to hand over: a waiting reader must not wake to an empty chunk.
      guard !chunk.isEmpty else { return (nil, Data(), state.pending.count < bufferSize) }
      state.received += chunk.count
      state.pending.append(chunk)
      return Self.afterWrite(&state, bufferSize: bufferSize, deferringWake: false)
    }
    waiter?.resume(returning: .success(ready))
    return room
  }

  /// Appends `bytes` for the reader without waking it: a waiting reader is woken by the next
  /// ``flush()``, so that every piece one turn of the producer received reaches the reader
  /// in one wake-up. `true` while the buffer has room.
  func append(_ bytes: UnsafeRawBufferPointer) -> (room: Bool, needsFlush: Bool) {
    state.withLock { state in
      guard !state.ended, !state.terminated else { return (true, false) }
      state.pending.append(bytes)
      state.received += bytes.count
      let wasDeferred = state.wakeDeferred
      let (_, _, room) = Self.afterWrite(&state, bufferSize: bufferSize, deferringWake: true)
      return (room, state.wakeDeferred && !wasDeferred)
    }
  }

  /// Wakes a reader that waits for bytes ``append(_:)`` buffered.
  func flush() {
    let (waiter, ready, demand) = state.withLock {
      state -> (Waiter?, Data, (@Sendable () -> Void)?) in
      guard state.wakeDeferred else { return (nil, Data(), nil) }
      state.wakeDeferred = false
      guard let waiter = state.waiter, !state.pending.isEmpty else { return (nil, Data(), nil) }
      state.waiter = nil
      let (data, demand) = Self.takePending(&state, bufferSize: bufferSize)
      return (waiter, data, demand)
    }
    waiter?.resume(returning: .success(ready))
    // The buffer filled before the wake: the producer paused, and at most half is left now.
    demand?()
  }

  /// After bytes were added: hands them to a waiting reader (unless the wake is deferred) or
  /// marks the producer paused when the buffer is full.
  private static func afterWrite(
    _ state: inout State, bufferSize: Int, deferringWake: Bool
  ) -> (Waiter?, Data, Bool) {
    if state.waiter != nil {
      if deferringWake {
        state.wakeDeferred = true
      } else {
        let waiter = state.waiter
        state.waiter = nil
        state.wakeDeferred = false
        // A reader waits only on an empty buffer: it takes this write's segment, and the
        // producer is not paused (nor told to go on).
        state.producerPaused = false
        return (waiter, takePending(&state, bufferSize: bufferSize).data, true)
      }
    }
    guard state.pending.count < bufferSize else {
      state.producerPaused = true
      return (nil, Data(), false)
    }
    return (nil, Data(), true)
  }

  /// Takes the front segment of what is buffered; the producer's `onDemand` when it was paused
  /// and at most half the buffer is left.
  private static func takePending(
    _ state: inout State, bufferSize: Int
  ) -> (data: Data, demand: (@Sendable () -> Void)?) {
    let data = state.pending.takeFirst()
    guard state.producerPaused, state.pending.count <= bufferSize / 2 else { return (data, nil) }
    state.producerPaused = false
    return (data, state.onDemand)
  }

  func finish(with failure: CourierError?) {
    let (waiter, result, onEnd) = state.withLock {
      state -> (Waiter?, Result<Data?, CourierError>, (@Sendable (Bool) -> Void)?) in
      guard !state.ended, !state.terminated else { return (nil, .success(nil), nil) }
      state.ended = true
      state.failure = failure
      state.endError = failure
      state.outcome = failure == nil
      state.onDemand = nil
      state.onTermination = nil
      state.wakeDeferred = false
      let onEnd = state.onEnd
      state.onEnd = nil
      if onEnd != nil { state.endActionRunning = true }
      guard let waiter = state.waiter else { return (nil, .success(nil), onEnd) }
      state.waiter = nil
      // Bytes buffered for a deferred wake go first; the end (or failure) on the next read.
      if !state.pending.isEmpty {
        return (waiter, .success(Self.takePending(&state, bufferSize: bufferSize).data), onEnd)
      }
      defer { state.failure = nil }
      return (waiter, failure.map { .failure($0) } ?? .success(nil), onEnd)
    }
    // The end is recorded (the client's hold released, progress completed) before the
    // reader wakes: a reader that has seen the end sees its consequences too.
    if let onEnd {
      onEnd(failure == nil)
      endActionRan()
    }
    waiter?.resume(returning: result)
  }

  func makeReader() -> ResponseBodyStream.Reader? {
    let first = state.withLock { state -> Bool in
      defer { state.readerMade = true }
      return !state.readerMade
    }
    return first ? ResponseBodyStream.Reader(core: self) : nil
  }

  func handleGone() {
    guard !state.withLock({ $0.readerMade }) else { return }
    terminate()
  }

  /// The reader stopped: drops what is buffered, fails a waiting `next`, and tells the
  /// producer, unless the body had ended.
  func terminate(with error: CourierError? = nil) {
    typealias Taken = (
      waiter: Waiter?, stop: CourierError, onTermination: (@Sendable () -> Void)?,
      onEnd: (@Sendable (Bool) -> Void)?
    )
    let taken = state.withLock { state -> Taken? in
      guard !state.terminated else { return nil }
      state.terminated = true
      let stop = error ?? Self.stoppedError()
      state.stopError = stop
      // A reader that waits while `finish`'s end action runs is left to that action's end.
      let finishActionRunning = state.endActionRunning
      if state.onEnd != nil { state.endActionRunning = true }
      if !state.ended, state.endError == nil { state.endError = error }
      state.pending.removeAll()
      state.wakeDeferred = false
      state.onDemand = nil
      if state.outcome == nil { state.outcome = false }
      let waiter = finishActionRunning ? nil : state.waiter
      if waiter != nil { state.waiter = nil }
      defer {
        state.onTermination = nil
        state.onEnd = nil
      }
      return (waiter, stop, state.ended ? nil : state.onTermination, state.onEnd)
    }
    guard let taken else { return }
    taken.onTermination?()
    if let onEnd = taken.onEnd {
      onEnd(false)
      endActionRan()
    }
    taken.waiter?.resume(returning: .failure(taken.stop))
  }

  /// `onEnd` has run: wakes a reader that found the end while it ran.
  private func endActionRan() {
    let (waiter, result) = state.withLock {
      state -> (Waiter?, Result<Data?, CourierError>?) in
      state.endActionRunning = false
      guard let waiter = state.waiter else { return (nil, nil) }
      state.waiter = nil
      return (waiter, Self.outcome(&state))
    }
    if let waiter, let result { waiter.resume(returning: result) }
  }

  func next() async throws(CourierError) -> Data? {
    if let ready = take() { return try ready.get() }
    let result = await withTaskCancellationHandler {
      await withUnsafeContinuation { continuation in
        if let ready = take(orWait: continuation) { continuation.resume(returning: ready) }
      }
    } onCancel: {
      terminate(
        with: CourierError(
          kind: .cancelled,
          debugMessage: "the task reading the streamed body was cancelled; the transfer ended",
          stage: "transport"))
    }
    // The writer's lock, once: when the writer resumes the continuation before this task has
    // suspended, the runtime runs it on with an atomic ThreadSanitizer does not see, and the
    // chunk built on the writer's thread would look raced (CurlTicket.joinFinish does the same).
    state.withLock { _ in }
    return try result.get()
  }

  /// What the reader gets now (the bytes buffered, the end, the failure), or `nil` when it
  /// must wait; with `waiter`, keeps it to be resumed by the producer.
  private func take(orWait waiter: Waiter? = nil) -> Result<Data?, CourierError>? {
    let (result, demand) = state.withLock {
      state -> (Result<Data?, CourierError>?, (@Sendable () -> Void)?) in
      if !state.pending.isEmpty {
        let (data, demand) = Self.takePending(&state, bufferSize: bufferSize)
        state.wakeDeferred = false
        return (.success(data), demand)
      }
      if !state.endActionRunning, let outcome = Self.outcome(&state) { return (outcome, nil) }
      if let waiter { state.waiter = waiter }
      return (nil, nil)
    }
    demand?()
    return result
  }

  /// The end or the failure a reader gets once nothing is buffered; `nil` while the body
  /// goes on.
  private static func outcome(_ state: inout State) -> Result<Data?, CourierError>? {
    if state.terminated { return .failure(state.stopError ?? stoppedError()) }
    guard state.ended else { return nil }
    // Thrown once; then the end.
    defer { state.failure = nil }
    return state.failure.map { .failure($0) } ?? .success(nil)
  }

  private static func stoppedError() -> CourierError {
    CourierError(
      kind: .cancelled, debugMessage: "the streamed body was stopped by its reader",
      stage: "transport")
  }
}
