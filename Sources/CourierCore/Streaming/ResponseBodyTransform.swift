import Foundation

/// A step a streamed body passes through on its way to the reader: a decoder, a counter, a
/// checksum.
///
/// ## When to use one
/// When a middleware must change or observe a body that is read while it arrives
/// (``ResponseBodyStream``), which it cannot hold in memory: `GzipMiddleware` decodes a
/// streamed `Content-Encoding: gzip` body this way, within its size and ratio limits counted
/// over the whole stream.
///
/// ## How to use one
/// Replace the stream with ``ResponseBodyStream/transformed(by:)`` (a middleware sets the
/// result as the response's ``Response/bodyStream``); the chunks are transformed as the reader
/// asks for them, so the pace and an early stop still reach the transport.
///
/// ## How to write one
/// A value type (or a class owned by one stream) with two methods. ``transform(_:)`` gets each
/// chunk in order and returns what the reader gets for it: the same bytes, other bytes, or
/// none yet. ``finish()`` runs once after the last chunk and returns what is left; throw from
/// either to fail the read with a ``CourierError``.
///
/// ```swift
/// struct ByteCounter: ResponseBodyTransform {
///   var count = 0
///   mutating func transform(_ chunk: Data) throws(CourierError) -> Data {
///     count += chunk.count
///     return chunk
///   }
///   mutating func finish() throws(CourierError) -> Data {
///     print("\(count) bytes")
///     return Data()
///   }
/// }
///
/// let streamed = try await client.stream(Endpoint<Void>(.get, "export"))
/// for try await chunk in streamed.body.transformed(by: ByteCounter()) {
///   FileHandle.standardOutput.write(chunk)
/// }
/// ```
public protocol ResponseBodyTransform {
  /// What the reader gets for `chunk`, the next chunk of the body; empty for nothing yet.
  mutating func transform(_ chunk: Data) throws(CourierError) -> Data
  /// What is left after the last chunk; throws when the body cannot end here (a truncated
  /// compressed stream).
  mutating func finish() throws(CourierError) -> Data
}

/// A stream read through a ``ResponseBodyTransform``: the upstream iterator and the transform
/// behind a `pthread` lock, taken out by the one reader while it awaits the next chunk and put
/// back after, so neither is ever used by two tasks at once.
final class TransformedBody: Sendable {
  private struct State {
    var upstream: ResponseBodyStream.AsyncIterator?
    var transform: (any ResponseBodyTransform)?
    var readerMade = false
    /// The reader stopped, or the body ended or failed: nothing more is read.
    var done = false
  }

  private let state: PThreadLock<State>
  /// The buffer the chunks come from, under every transform.
  let root: StreamCore

  init<Transform: ResponseBodyTransform>(
    upstream: ResponseBodyStream.AsyncIterator, root: StreamCore, transform: sending Transform
  ) {
    self.root = root
    state = PThreadLock(State(upstream: upstream, transform: transform))
  }

  /// Kept by the one iterator: when it goes, the upstream reading stops at once.
  final class Reader: Sendable {
    let body: TransformedBody
    init(body: TransformedBody) { self.body = body }
    deinit { body.close() }
  }

  func makeReader() -> Reader? {
    let first = state.withLock { state -> Bool in
      defer { state.readerMade = true }
      return !state.readerMade
    }
    return first ? Reader(body: self) : nil
  }

  /// Drops the upstream iterator (which ends its transfer when it had not ended).
  func close() {
    let dropped = state.withLock { state -> ResponseBodyStream.AsyncIterator? in
      state.done = true
      state.transform = nil
      defer { state.upstream = nil }
      return state.upstream
    }
    _ = dropped
  }

  func next() async throws(CourierError) -> Data? {
    while true {
      let taken = state.withLock {
        state -> (ResponseBodyStream.AsyncIterator, any ResponseBodyTransform)? in
        guard !state.done, let upstream = state.upstream, let transform = state.transform else {
          return nil
        }
        state.upstream = nil
        state.transform = nil
        return (upstream, transform)
      }
      guard var (upstream, transform) = taken else { return nil }
      let output: Data
      do {
        guard let chunk = try await upstream.next() else {
          finishReading()
          let tail = try transform.finish()
          return tail.isEmpty ? nil : tail
        }
        output = try transform.transform(chunk)
      } catch {
        finishReading()
        throw error
      }
      state.withLock { state in
        // A reader that stopped meanwhile closed the body: what was taken out is dropped.
        guard !state.done else { return }
        state.upstream = upstream
        state.transform = transform
      }
      if !output.isEmpty { return output }
    }
  }

  private func finishReading() {
    state.withLock { $0.done = true }
  }
}
