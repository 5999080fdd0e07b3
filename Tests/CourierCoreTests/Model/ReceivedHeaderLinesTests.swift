import Testing

@testable import CourierCore

@Suite("Received header lines: one field read from the bytes, the same answer as the full list")
struct ReceivedHeaderLinesTests {
  static let blocks: [String] = [
    "Server: nginx\nContent-Type: application/json\nContent-Length: 290\n",
    "content-encoding:   gzip  \nContent-Encoding: br\n",
    "X-Folded: first\n  second\nContent-Encoding: gzip\n",
    "Content-Encoding : gzip\nBroken line without colon\nContent-Type:\n",
    "X-Bad: a\u{01}b\nX-Tab:\tvalue\t\n",
    "Content-Length: 5\nContent-Length: 5\nSet-Cookie: a=1\nSet-Cookie: b=2\n",
    "",
    "X-UTF8: héllo\nContent-Encoding:gzip",
  ]

  static let names = [
    "Content-Encoding", "content-type", "Content-Length", "X-Folded", "X-Bad", "X-Tab",
    "Set-Cookie", "Server", "X-UTF8", "Missing", "Content-Type",
  ]

  @Test("every lookup agrees with the list built from the same lines", arguments: blocks)
  func agrees(_ block: String) {
    let lines = Array(block.utf8)
    for name in Self.names {
      let full = HTTPHeaders(received: ReceivedHeaderLines.parse(lines))
      let lazy = HTTPHeaders(receivedLines: lines)
      #expect(lazy[name] == full[name], "\(name) in \(block.debugDescription)")
      let typed = HTTPHeaders.Name(unchecked: name)
      let lazyTyped = HTTPHeaders(receivedLines: lines)
      #expect(lazyTyped[typed] == full[typed], "\(name) in \(block.debugDescription)")
      #expect(
        HTTPHeaders(receivedLines: lines).contains(typed) == full.contains(typed),
        "\(name) in \(block.debugDescription)")
    }
    #expect(
      HTTPHeaders(receivedLines: lines) == HTTPHeaders(received: ReceivedHeaderLines.parse(lines)))
  }

  @Test("the bytes give the raw value; folded lines and bad values are left to the full rules")
  func fastPath() {
    let lines = Array("Content-Encoding: gzip \nX-Folded: a\n b\nX-Bad: a\u{7F}\n".utf8)
    #expect(ReceivedHeaderLines.firstValue(named: "content-encoding", in: lines) == .some(" gzip "))
    #expect(ReceivedHeaderLines.firstValue(named: "Missing", in: lines) == .some(nil))
    #expect(ReceivedHeaderLines.firstValue(named: "X-Folded", in: lines) == nil)
    #expect(ReceivedHeaderLines.firstValue(named: "X-Bad", in: lines) == .some(" a\u{7F}"))
    let headers = HTTPHeaders(receivedLines: lines)
    #expect(headers[.contentEncoding] == "gzip")
    #expect(headers["X-Folded"] == "a b")
    #expect(headers["X-Bad"] == nil)
    #expect(HTTPHeaders(receivedLines: lines)["Bad Name"] == nil)
  }

  @Test("field names match ignoring case, only when the colon follows at once")
  func valueStart() {
    func start(_ line: String, _ name: String) -> Int? {
      Array(line.utf8).withUnsafeBytes { ReceivedHeaderLines.valueStart(in: $0, named: name) }
    }
    #expect(start("content-LENGTH: 5", "Content-Length") == 15)
    #expect(start("Content-Length : 5", "Content-Length") == nil)
    #expect(start("Content-Lengthy: 5", "Content-Length") == nil)
    #expect(start("Content-Len", "Content-Length") == nil)
    #expect(start("Content-Length:", "Content-Length") == 15)
  }

  @Test("header lines: repeated fields kept apart, obs-fold joined, lines without a colon dropped")
  func parsing() {
    let lines = Array(
      "Set-Cookie: a=1\nSet-Cookie: b=2\nX-Fold: one\n  two\nbroken line\nX-Empty:\n  X-Late: x\n"
        .utf8)
    let fields = ReceivedHeaderLines.parse(lines)
    #expect(fields.map(\.0) == ["Set-Cookie", "Set-Cookie", "X-Fold", "X-Empty"])
    #expect(fields.map(\.1) == ["a=1", "b=2", "one two", " X-Late: x"])
  }

  @Test("a change after a fast read builds the list and keeps every field")
  func changeAfterRead() throws {
    var headers = HTTPHeaders(receivedLines: Array("A: 1\nContent-Encoding: gzip\n".utf8))
    #expect(headers[.contentEncoding] == "gzip")
    headers.remove("Content-Encoding")
    #expect(headers[.contentEncoding] == nil)
    #expect(headers["A"] == "1")
    #expect(headers.count == 1)
  }
}
