import Testing

@testable import CourierCore

@Suite("Received header lines: parsed into fields as a transport read them")
struct ReceivedHeaderLinesTests {
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

  @Test("headers from lines: values trimmed, bad values and names dropped, folds joined")
  func headersFromLines() {
    let lines = Array(
      "Content-Encoding: gzip \nX-Folded: a\n b\nX-Bad: a\u{7F}\nBad Name: 1\n".utf8)
    let headers = HTTPHeaders(receivedLines: lines)
    #expect(headers[.contentEncoding] == "gzip")
    #expect(headers["X-Folded"] == "a b")
    #expect(headers["X-Bad"] == nil)
    #expect(headers.count == 2)
  }
}
