import Foundation

/// One event from a `text/event-stream` body (server-sent events), as
/// ``ServerSentEventParser`` dispatches it.
///
/// The fields carry what a browser's `MessageEvent` would: the type, the data, and the stream
/// state in effect when the event was dispatched (its last event ID and reconnection time),
/// so code that handles events one by one can also decide how to resume.
public struct ServerSentEvent: Sendable, Hashable {
  /// The stream's last event ID when this event was dispatched: the value of the most recent
  /// `id` field, which stays in effect for later events until another `id` field replaces it.
  /// `nil` when no `id` was given yet, or an empty `id` field reset it.
  public var id: String?

  /// The event type: the value of the event's `event` field, or `"message"` when it had none
  /// (or an empty one).
  public var event: String

  /// The event's data: the values of its `data` fields joined with line feeds.
  public var data: String

  /// The reconnection time the stream set most recently with a `retry` field, in effect when
  /// this event was dispatched; `nil` when the stream has not set one.
  public var retry: Duration?

  /// Creates an event, for tests and for code that produces events of its own.
  public init(id: String? = nil, event: String = "message", data: String, retry: Duration? = nil) {
    self.id = id
    self.event = event
    self.data = data
    self.retry = retry
  }

  /// Decodes ``data`` as JSON, the common payload of event streams.
  ///
  /// A failure throws a ``CourierError`` of kind ``CourierError/Kind/decoding`` whose debug
  /// message names the event's type and ID, with the decoding error as its underlying error.
  public func decode<T: Decodable>(
    _ type: T.Type, using decoder: JSONDecoder = JSONDecoder()
  ) throws(CourierError) -> T {
    do {
      return try decoder.decode(T.self, from: Data(data.utf8))
    } catch {
      let detail =
        (error as? DecodingError).map(CourierError.describe) ?? String(describing: error)
      let name = "event \(event.debugDescription)" + (id.map { " id \($0.debugDescription)" } ?? "")
      throw CourierError(
        kind: .decoding, debugMessage: "\(name): could not decode \(T.self): \(detail)",
        underlying: error)
    }
  }
}
