import CourierCore
import Foundation

extension MockResponse {
  /// A `text/event-stream` answer carrying `events` in the Server-Sent Events format (each
  /// field on its own line, multi-line data as several `data:` lines, a blank line after each
  /// event), after a `retry:` line when `retry` is set.
  ///
  /// With `droppingInside`, the connection closes in the middle of that event (0-based): the
  /// events before it arrive whole, its half is never dispatched, as when a network drops a
  /// stream. What a client that resumes should ask for next is the id of the event before it.
  ///
  /// ```swift
  /// let events = [ServerSentEvent(id: "1", data: "one"), ServerSentEvent(id: "2", data: "two")]
  /// server.enqueue(.events(events, droppingInside: 1))
  /// ```
  public static func events(
    _ events: [ServerSentEvent], retry: Duration? = nil, droppingInside dropped: Int? = nil
  ) -> MockResponse {
    var text = ""
    if let retry {
      let milliseconds =
        retry.components.seconds * 1000 + retry.components.attoseconds / 1_000_000_000_000_000
      text += "retry: \(milliseconds)\n\n"
    }
    var cut: Int?
    for (index, event) in events.enumerated() {
      let encoded = encode(event)
      if index == dropped { cut = text.utf8.count + max(1, encoded.utf8.count / 2) }
      text += encoded
    }
    let body = Data(text.utf8)
    return MockResponse(
      headers: [
        MockHeader(name: "Content-Type", value: "text/event-stream"),
        MockHeader(name: "Cache-Control", value: "no-cache"),
      ],
      body: body, fault: cut.map { .closeAfterBodyBytes(min($0, body.count - 1)) })
  }

  /// One event in the wire format: its fields, then a blank line.
  static func encode(_ event: ServerSentEvent) -> String {
    var lines: [String] = []
    if let id = event.id { lines.append("id: \(id)") }
    if event.event != "message" { lines.append("event: \(event.event)") }
    for line in event.data.split(separator: "\n", omittingEmptySubsequences: false) {
      lines.append("data: \(line)")
    }
    return lines.joined(separator: "\n") + "\n\n"
  }
}
