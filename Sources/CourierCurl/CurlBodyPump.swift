internal import CCourierCurl
import CourierCore
import Foundation

/// Carries a stream request body (`RequestBody.stream`) from its sequence to libcurl while it
/// is produced: a task of its own iterates the sequence into a bounded buffer, and the
/// transfer's read callback, on the loop thread, takes what is there.
///
/// - Backpressure: the producer waits while ``capacity`` bytes are buffered, and goes on once
///   libcurl has taken half of them; memory stays within the buffer and one chunk.
/// - Nothing ready: the read callback pauses the transfer (`CURL_READFUNC_PAUSE`), and the
///   next chunk, the end or a failure calls `onReady`, which asks the loop thread to let the
///   transfer go on (``CurlEventLoop/resumeUpload(_:)``).
/// - With a declared length, the last byte is held back until the sequence has ended: a
///   sequence that produces more than its length fails (``RequestBody/Chunks``) before the
///   server has had a body that looks whole.
/// - ``stop()``, when the transfer ends however it ends, drops the buffer, wakes a waiting
///   producer and cancels its task: nothing outlives the transfer.
///
/// The state is behind a ``PThreadLock``: the producer's continuation passes from the
/// producing task to the loop thread, and ThreadSanitizer sees a `pthread` mutex's edges.
final class CurlBodyPump: Sendable {
  /// The most bytes buffered ahead of libcurl before the producer waits: 256 KiB.
  static let capacity = 256 * 1024

  /// What the read callback hands libcurl.
  enum Read: Equatable {
    /// Bytes copied (0: the body ended).
    case bytes(Int)
    /// Nothing ready yet: pause the transfer until `onReady`.
    case pause
    /// The body failed (``failure``): abort the transfer.
    case abort
  }

  private struct State {
    var chunks: [Data] = []
    /// The first chunk not taken whole, and the bytes of it taken.
    var head = 0
    var offset = 0
    var buffered = 0
    var delivered: Int64 = 0
    var ended = false
    var failure: CourierError?
    /// The read callback paused the transfer for want of bytes: the next write wakes it.
    var readerPaused = false
    var stopped = false
    var producer: UnsafeContinuation<Void, Never>?
    var task: Task<Void, Never>?
  }

  private let state = PThreadLock(State())
  private let chunks: RequestBody.Chunks
  private let onReady: @Sendable () -> Void

  /// The body's declared length, if it has one.
  var length: Int64? { chunks.length }

  init(chunks: RequestBody.Chunks, onReady: @escaping @Sendable () -> Void) {
    self.chunks = chunks
    self.onReady = onReady
  }

  /// Starts the task that reads the sequence.
  func start() {
    let chunks = self.chunks
    let task = Task { [self] in await produce(chunks) }
    let stopped = state.withLock { state -> Bool in
      if !state.stopped { state.task = task }
      return state.stopped
    }
    if stopped { task.cancel() }
  }

  /// The body's bytes handed to libcurl so far.
  var delivered: Int64 { state.withLock { $0.delivered } }

  /// Why the body failed: the sequence threw, or did not keep its declared length.
  var failure: CourierError? { state.withLock { $0.failure } }

  /// Ends the body's reading: drops what is buffered, wakes a waiting producer and cancels
  /// its task. Called when the transfer ends, however it ends; idempotent.
  func stop() {
    let (producer, task) = state.withLock {
      state -> (UnsafeContinuation<Void, Never>?, Task<Void, Never>?) in
      state.stopped = true
      state.chunks = []
      state.head = 0
      state.offset = 0
      state.buffered = 0
      defer {
        state.producer = nil
        state.task = nil
      }
      return (state.producer, state.task)
    }
    producer?.resume()
    task?.cancel()
  }

  // MARK: The producer's side

  private func produce(_ chunks: RequestBody.Chunks) async {
    do throws(CourierError) {
      for try await chunk in chunks {
        guard await write(chunk) else { return }
      }
      end(nil)
    } catch {
      end(error)
    }
  }

  /// Buffers `chunk`, waiting while the buffer is full; `false` once the transfer ended.
  private func write(_ chunk: Data) async -> Bool {
    enum Step {
      case stop, wait
      case written(wakesReader: Bool)
    }
    while true {
      let step = state.withLock { state -> Step in
        if state.stopped { return .stop }
        if state.buffered >= Self.capacity { return .wait }
        guard !chunk.isEmpty else { return .written(wakesReader: false) }
        state.chunks.append(chunk)
        state.buffered += chunk.count
        defer { state.readerPaused = false }
        return .written(wakesReader: state.readerPaused)
      }
      switch step {
      case .stop: return false
      case .written(let wakesReader):
        if wakesReader { onReady() }
        return true
      case .wait:
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
          let now = state.withLock { state -> Bool in
            if state.stopped || state.buffered < Self.capacity { return true }
            state.producer = continuation
            return false
          }
          if now { continuation.resume() }
        }
      }
    }
  }

  /// The sequence ended, or failed with `error`.
  private func end(_ error: CourierError?) {
    let wakesReader = state.withLock { state -> Bool in
      guard !state.stopped else { return false }
      state.ended = true
      state.failure = error
      defer { state.readerPaused = false }
      return state.readerPaused
    }
    if wakesReader { onReady() }
  }

  // MARK: libcurl's side (the read callback, under the engine lock)

  /// Copies up to `count` buffered bytes to `target` for libcurl.
  func read(into target: UnsafeMutableRawPointer, count: Int) -> Read {
    let (read, producer) = state.withLock { state -> (Read, UnsafeContinuation<Void, Never>?) in
      if state.failure != nil { return (.abort, nil) }
      var allowed = min(count, state.buffered)
      if let length = chunks.length, !state.ended {
        // The last byte waits for the end: a sequence longer than its length must fail
        // before the body looks whole to the server.
        allowed = min(allowed, Int(max(0, length - state.delivered - 1)))
      }
      guard allowed > 0 else {
        if state.ended { return (.bytes(0), nil) }
        state.readerPaused = true
        return (.pause, nil)
      }
      Self.take(allowed, from: &state, into: target)
      guard state.buffered < Self.capacity / 2, let producer = state.producer else {
        return (.bytes(allowed), nil)
      }
      state.producer = nil
      return (.bytes(allowed), producer)
    }
    producer?.resume()
    return read
  }

  /// Moves `count` buffered bytes (there are as many) to `target`.
  private static func take(
    _ count: Int, from state: inout State, into target: UnsafeMutableRawPointer
  ) {
    var copied = 0
    while copied < count {
      let chunk = state.chunks[state.head]
      let piece = min(count - copied, chunk.count - state.offset)
      chunk.withUnsafeBytes { source in
        guard let base = source.baseAddress else { return }
        (target + copied).copyMemory(from: base + state.offset, byteCount: piece)
      }
      copied += piece
      state.offset += piece
      if state.offset == chunk.count {
        state.chunks[state.head] = Data()
        state.head += 1
        state.offset = 0
      }
    }
    state.buffered -= count
    state.delivered += Int64(count)
    if state.head == state.chunks.count {
      state.chunks.removeAll(keepingCapacity: true)
      state.head = 0
    } else if state.head >= 64, state.head * 2 >= state.chunks.count {
      state.chunks.removeFirst(state.head)
      state.head = 0
    }
  }

  /// Whether libcurl may rewind the body to `offset`: only to its start, before any byte was
  /// taken (a sequence cannot be read again).
  func canRewind(to offset: Int64) -> Bool {
    offset == 0 && state.withLock { $0.delivered == 0 }
  }
}
