import Foundation

/// The body of a ``Request``: nothing, bytes in memory, or a file streamed from disk.
///
/// A struct with static members rather than an enum, so more kinds of body (streams) can be
/// added later without breaking code that inspects it.
public struct RequestBody: Sendable, Hashable {
  enum Storage: Sendable, Hashable {
    case empty
    case data(Data)
    case file(URL)
  }

  let storage: Storage

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

  /// Whether the body can be sent again unchanged (for retries). Every body kind that exists
  /// today can; a future one-shot stream will not.
  public var isReplayable: Bool { true }
}
