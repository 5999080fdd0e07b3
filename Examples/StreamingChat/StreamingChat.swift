import Courier
import CourierTesting
import Foundation
import Synchronization

/// `streaming-chat`: reads a chat-style answer streamed as Server-Sent Events from an embedded
/// `MockServer` on 127.0.0.1, so it runs offline, and prints each token as it arrives.
///
/// The server drops the connection in the middle of the answer (after the third token, inside
/// the fourth event). `Client.events` waits the server's `retry:` interval, reconnects with
/// `Last-Event-ID: 3`, and the server goes on from the fourth token: the answer arrives whole,
/// each token once.
@main
struct StreamingChat {
  static let tokens = ["Streams", " survive", " a", " dropped", " connection", "."]

  static func main() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let connections = Mutex<[String]>([])
    server.setDispatcher { request in
      let resumeAfter = request.header("Last-Event-ID").flatMap { Int($0) } ?? 0
      let first = connections.withLock { seen -> Bool in
        seen.append(request.header("Last-Event-ID") ?? "none")
        return seen.count == 1
      }
      return Self.reply(after: resumeAfter, droppingMidway: first)
    }

    let client = Client.standard(baseURL: server.baseURL)
    var answer = ""
    for try await event in client.events(Endpoint<Void>(.post, "chat")) {
      if event.event == "done" { break }
      answer += event.data
      print("token \(event.id ?? "?"): \(event.data.debugDescription)")
    }
    for (index, lastEventID) in connections.withLock({ $0 }).enumerated() {
      print("connection \(index + 1): Last-Event-ID \(lastEventID)")
    }
    print("answer: \(answer)")
  }

  /// The events after token number `after` (1-based ids), then a `done` event; the first
  /// connection is cut inside the fourth token's event.
  static func reply(after: Int, droppingMidway: Bool) -> MockResponse {
    var text = "retry: 50\n\n"
    var cut: Int?
    for (index, token) in tokens.enumerated() where index >= after {
      if droppingMidway && index == 3 { cut = text.utf8.count + 8 }
      text += "id: \(index + 1)\ndata: \(token)\n\n"
    }
    text += "event: done\ndata: \n\n"
    let body = Data(text.utf8)
    return MockResponse(
      headers: [MockHeader(name: "Content-Type", value: "text/event-stream")], body: body,
      fault: cut.map { .closeAfterBodyBytes($0) })
  }
}
