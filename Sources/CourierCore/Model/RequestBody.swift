import Foundation

/// The body of a ``Request``: nothing, bytes in memory, a file streamed from disk, or the
/// chunks of an `AsyncSequence` (``stream(length:_:)``, ``stream(_:length:)``).
///
/// A struct with static members rather than an enum, so more kinds of body can be added
/// without breaking code that inspects it.
///
/// Two bodies are equal when they hold the same bytes or file; two stream bodies are equal
/// only when they are copies of one ``stream(length:_:)`` or ``stream(_:length:)`` call
/// (compared by identity: their bytes are not known until they are sent).
public struct RequestBody: Sendable, Hashable {
  enum Storage: Sendable, Hashable {
    case empty
    case data(Data)
    case file(URL)
    case stream(BodyStreamSource)
  }

  let storage: Storage
  /// The owner of a temporary file body: the file is deleted when the last copy of this body
  /// (and so of every request carrying it) is gone.
  let temporaryFile: TemporaryFile?

  init(storage: Storage, temporaryFile: TemporaryFile? = nil) {
    self.storage = storage
    self.temporaryFile = temporaryFile
  }

  /// No body.
  public static let empty = RequestBody(storage: .empty)

  /// A body held in memory.
  public static func data(_ data: Data) -> RequestBody {
    RequestBody(storage: .data(data))
  }

  /// A body read from a local file when the request is sent; the file is not loaded into
  /// memory by Courier.
  public static func file(_ url: URL) -> RequestBody {
    RequestBody(storage: .file(url))
  }

  /// A body read from a temporary file that Courier deletes once no copy of this body is left:
  /// when the request carrying it, every retry of it, and the ``Response`` and
  /// ``CourierError`` that keep the request are all released. A body that a ``Client`` built
  /// from an endpoint (a ``MultipartForm`` with file parts) is deleted earlier: as soon as
  /// `send` returns or throws.
  ///
  /// ``MultipartForm`` uses it for forms with file parts. For a file you keep, use
  /// ``file(_:)``.
  public static func temporaryFile(_ url: URL) -> RequestBody {
    RequestBody(storage: .file(url), temporaryFile: TemporaryFile(url))
  }

  /// Whether the file is deleted when the body is released (see ``temporaryFile(_:)``).
  public var isTemporaryFile: Bool { temporaryFile != nil }

  /// Whether there is no body.
  public var isEmpty: Bool {
    if case .empty = storage { return true }
    if case .data(let data) = storage { return data.isEmpty }
    return false
  }

  /// The bytes, when the body is held in memory.
  public var data: Data? {
    if case .data(let data) = storage { return data }
    return nil
  }

  /// The file, when the body is streamed from disk.
  public var fileURL: URL? {
    if case .file(let url) = storage { return url }
    return nil
  }

  /// Whether the body can be sent again (for retries, and for a `307`/`308` redirect that
  /// resends it): every kind can, except a one-shot stream (``stream(_:length:)``), whose
  /// sequence is read once. `RetryMiddleware` does not retry a request whose body is not
  /// replayable.
  public var isReplayable: Bool {
    if case .stream(let source) = storage { return source.isReplayable }
    return true
  }
}
