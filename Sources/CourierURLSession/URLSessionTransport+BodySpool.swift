import CourierCore
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension URLSessionTransport {
  /// Runs `send` with `body` as URLSession can send it: a stream body (`RequestBody.stream`)
  /// is first written whole to a temporary file (``BodySpool``), sent as a file body with its
  /// `Content-Length`, and deleted when `send` returns or throws; any other body is passed as
  /// it is. Each call makes the stream's sequence anew, so each hop that resends the body
  /// reads it again (a one-shot stream fails there, as on `CurlTransport`).
  ///
  /// Why not `httpBodyStream`, which would send the body while it is produced: URLSession on
  /// Linux reads the stream on its one work queue, shared by every session, and takes a
  /// stream with no bytes available at that moment for the end of the body, so a producer
  /// that is not ready would end the body short, and a stream that blocks until it is would
  /// stall every session of the process.
  func withSendableBody<T>(
    _ body: RequestBody, of request: Request,
    _ send: (RequestBody) async throws -> T
  ) async throws -> T {
    guard body.isStream else { return try await send(body) }
    let file = try await BodySpool.spool(body, for: request, lifecycle: lifecycle)
    defer { unlink(file.path) }
    return try await send(.file(file))
  }
}

/// Writes a stream request body to a temporary file for ``URLSessionTransport``: `0600` in the
/// temporary directory, one chunk at a time (memory holds a chunk, never the body).
enum BodySpool {
  /// Writes one send of `body`'s sequence to a new temporary file and returns it; on any
  /// failure the file is deleted. Cancelling the calling task or the request
  /// (``RequestCancellation``), or shutting the transport down (`lifecycle`), cancels the task
  /// that reads the sequence.
  static func spool(
    _ body: RequestBody, for request: Request, lifecycle: Lifecycle
  ) async throws(CourierError) -> URL {
    func failure(_ kind: CourierError.Kind, _ message: String) -> CourierError {
      CourierError(
        kind: kind, debugMessage: message, request: request, attempts: 1, stage: "transport")
    }
    let chunks: RequestBody.Chunks
    do {
      chunks = try body.makeChunks()
    } catch {
      var error = error
      error.request = request
      error.attempts = 1
      error.stage = "transport"
      throw error
    }
    let file = FileManager.default.temporaryDirectory
      .appendingPathComponent("courier-body-\(UUID().uuidString)")
    let descriptor = open(file.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else {
      throw failure(
        .transport,
        "the stream body could not be written to a temporary file before it is sent: "
          + String(cString: strerror(errno)))
    }
    // Untyped: a `throws(CourierError)` task closure crashes the Swift 6.3.1 compiler.
    let reader = Task { () throws -> Void in
      defer { close(descriptor) }
      for try await chunk in chunks {
        if let problem = Self.append(chunk, to: descriptor) {
          throw failure(
            .transport,
            "the stream body could not be written to its temporary file before it is sent: "
              + problem)
        }
      }
      // A sequence may end early when its task is cancelled: that is no whole body.
      if Task.isCancelled {
        throw failure(.cancelled, "the request was cancelled while its stream body was read")
      }
    }
    let spool = lifecycle.beginSpool { reader.cancel() }
    defer { lifecycle.endSpool(spool) }
    do {
      try await RequestCancellation.withCancellationHandler {
        try await reader.value
      } onCancel: {
        reader.cancel()
      }
      // Shut down while the body was read to its end: the session is going, send nothing.
      if lifecycle.isShutDown {
        throw failure(
          .cancelled, "the transport was shut down while the stream body was read; not sent")
      }
    } catch {
      unlink(file.path)
      var error = error as? CourierError ?? CourierError(error, otherwise: .invalidRequest)
      error.request = request
      error.attempts = 1
      error.stage = "transport"
      throw error
    }
    return file
  }

  /// Writes all of `chunk` to `descriptor`; why it could not, or `nil`.
  private static func append(_ chunk: Data, to descriptor: Int32) -> String? {
    chunk.withUnsafeBytes { bytes -> String? in
      guard let base = bytes.baseAddress else { return nil }
      var offset = 0
      while offset < bytes.count {
        let written = write(descriptor, base + offset, bytes.count - offset)
        if written < 0 {
          if errno == EINTR { continue }
          return String(cString: strerror(errno))
        }
        offset += written
      }
      return nil
    }
  }
}
