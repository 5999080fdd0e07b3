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

  @Test("the one-pass parse gives the fields the general path gives, for any bytes")
  func onePassAgreesWithGeneralPath() {
    // Bytes drawn from what matters to the rules: token and non-token characters, colons,
    // spaces, tabs, LF (line ends and folds), control characters, DEL and non-ASCII.
    let alphabet = Array("aZ-_:: \t\n\n".utf8) + [0x01, 0x0D, 0x7F, 0xC3, 0xA9, 0xFF, 0x28]
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    func next() -> Int {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int(truncatingIfNeeded: state >> 33)
    }
    var checked = 0
    for _ in 0..<3_000 {
      let lines = (0..<(next() % 40)).map { _ in alphabet[next() % alphabet.count] }
      let general = HTTPHeaders(received: ReceivedHeaderLines.parse(lines))
      let onePass = HTTPHeaders(receivedLines: lines)
      #expect(onePass == general, "\(lines)")
      if !general.isEmpty { checked += 1 }
    }
    #expect(checked > 100, "too few blocks with a valid field: \(checked)")
  }

  @Test("typical heads parse the same way both ways, folded or not")
  func typicalHeads() {
    for block in [
      "Server: nginx\nContent-Type: application/json\nContent-Length: 290\n",
      "content-encoding:   gzip  \nContent-Encoding: br\n",
      "X-Folded: first\n  second\nContent-Encoding: gzip\n",
      "Content-Encoding : gzip\nBroken line without colon\nContent-Type:\n",
      "X-Bad: a\u{01}b\nX-Tab:\tvalue\t\n:empty\n",
      "X-UTF8: héllo\nContent-Encoding:gzip",
      "",
    ] {
      let lines = Array(block.utf8)
      #expect(
        HTTPHeaders(receivedLines: lines)
          == HTTPHeaders(received: ReceivedHeaderLines.parse(lines)),
        "\(block.debugDescription)")
    }
  }
}
