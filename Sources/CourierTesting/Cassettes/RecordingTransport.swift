import CourierCore
import Foundation
import Synchronization

/// Wraps any transport and writes each request and what came back to a ``Cassette`` file, so
/// that a test can later run offline against the same answers with ``ReplayTransport``.
///
/// Credentials never reach the file: URLs, headers (URLs inside them included) and JSON, form
/// and multipart bodies of requests and responses are redacted by a ``Redaction`` (default
/// ``Redaction/standard``, the rules logging uses), so a cassette can be committed; a gzip or
/// deflate body is decoded first and recorded plain. The redaction finds secrets by name; a
/// body of no such shape (plain text, HTML) and the bytes of a multipart file part are kept
/// as they were sent, since a replay must serve them back (a multipart part whose name is
/// listed is hidden, file or not). A file body (`RequestBody.file`, a multipart form with
/// file parts) is read whole and recorded as the bytes the wire carries; a body read from a
/// sequence (`RequestBody.stream`) is left to the wrapped transport, unread, and recorded as
/// no body. The file is
/// rewritten atomically after every interaction, so a crash loses nothing that was answered.
///
/// ```swift
/// import Courier
/// import CourierTesting
///
/// func recordOnce() async throws {
///   let cassette = FileManager.default.temporaryDirectory.appendingPathComponent("user.json")
///   let recording = RecordingTransport(wrapping: URLSessionTransport(), cassette: cassette)
///   let client = Client(baseURL: URL(string: "https://api.example.com/")!, transport: recording)
///   _ = try await client.send(Request(url: URL(string: "https://api.example.com/user/7")!))
///   // Later, offline: Client(baseURL: …, transport: try ReplayTransport(cassette: cassette))
/// }
/// ```
public final class RecordingTransport: Transport {
  private let wrapped: any Transport
  private let file: URL
  private let redaction: Redaction
  private let cassette = Mutex(Cassette())

  /// The wrapped transport's figures.
  public var connectionPool: ConnectionPoolFigures? { wrapped.connectionPool }

  /// Records what `wrapped` sends and receives into the file `cassette` (created or
  /// replaced), redacted by `redaction`.
  public init(
    wrapping wrapped: any Transport, cassette file: URL, redaction: Redaction = .standard
  ) {
    self.wrapped = wrapped
    self.file = file
    self.redaction = redaction
  }

  /// What has been recorded so far.
  public var recorded: Cassette { cassette.withLock { $0 } }

  /// Sends through the wrapped transport and records the outcome, response or error.
  public func send(_ request: Request) async throws -> Response {
    let message = Cassette.RecordedMessage(request, redaction: redaction)
    do {
      let response = try await wrapped.send(request)
      try record(
        Cassette.Interaction(
          request: message, response: Cassette.RecordedResponse(response, redaction: redaction)))
      return response
    } catch let error as CourierError where error.stage == "recording" {
      throw error
    } catch {
      let failure = CourierError(error, request: request, stage: "transport")
      try record(
        Cassette.Interaction(
          request: message,
          error: Cassette.RecordedError(
            kind: failure.kind.name,
            // As `debugDescription` writes it: a transport's message may name the URL.
            message: CourierError.redactingURLs(in: failure.debugMessage))))
      throw error
    }
  }

  /// Whatever the wrapped transport says.
  public var observesRequestCancellation: Bool { wrapped.observesRequestCancellation }

  /// Shuts the wrapped transport down.
  public func shutdown() { wrapped.shutdown() }

  private func record(_ interaction: Cassette.Interaction) throws(CourierError) {
    // Written under the lock, so that files on disk follow the order of interactions.
    let failure = cassette.withLock { cassette -> (any Error)? in
      cassette.interactions.append(interaction)
      do {
        try cassette.write(to: file)
        return nil
      } catch {
        return error
      }
    }
    if let failure {
      throw CourierError(
        kind: .transport, debugMessage: "cannot write the cassette \(file.path): \(failure)",
        underlying: failure, stage: "recording")
    }
  }
}
