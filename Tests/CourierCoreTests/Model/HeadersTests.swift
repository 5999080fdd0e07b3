import CourierCore
import Testing

@Suite("HTTP headers", .timeLimit(.minutes(5)))
struct HeadersTests {
  @Test(
    "values with CR, LF, NUL or other controls are rejected",
    arguments: ["a\r\nEvil: 1", "a\nb", "a\rb", "a\u{0}b", "a\u{7F}b", "\u{1B}[31m"])
  func rejectsControlCharacters(value: String) throws {
    var headers = HTTPHeaders()
    let error = #expect(throws: CourierError.self) { try headers.add("X-Test", value) }
    #expect(error?.kind == .invalidRequest)
    #expect(throws: CourierError.self) { try headers.set(.accept, value) }
    #expect(throws: CourierError.self) { try HTTPHeaders([("X-Test", value)]) }
    #expect(headers.isEmpty)
  }

  @Test("names must be tokens", arguments: ["", "Bad Name", "X:Y", "X\r\nY", "Ünicode"])
  func rejectsBadNames(name: String) {
    let error = #expect(throws: CourierError.self) { try HTTPHeaders.Name(name) }
    #expect(error?.kind == .invalidRequest)
  }

  @Test("tabs are allowed inside values and optional white space is trimmed")
  func trimsWhitespace() throws {
    var headers = HTTPHeaders()
    try headers.add("X-Tab", "  a\tb \t")
    #expect(headers["x-tab"] == "a\tb")
  }

  /// Found by Fuzz/FuzzHeaders: white space was trimmed by `Character`, and a space followed
  /// by a combining mark is one `Character` that is not `" "`, so it stayed. Values to send
  /// are ASCII now, so this applies to received values.
  @Test("white space before or after a combining mark is trimmed too (fuzzing regression)")
  func trimsWhitespaceBesideCombiningMarks() throws {
    let received = HTTPHeaders(received: [
      ("X-Combining", " \u{301}x\u{301} "), ("X-Tabs", "\t\u{301}\t"), ("X-Set", "  \u{308}  "),
      ("X-Received", " \u{301}a "),
    ])
    #expect(Array(received["X-Combining"]?.utf8 ?? "".utf8) == Array("\u{301}x\u{301}".utf8))
    #expect(Array(received["X-Tabs"]?.utf8 ?? "".utf8) == Array("\u{301}".utf8))
    #expect(Array(received["X-Set"]?.utf8 ?? "".utf8) == Array("\u{308}".utf8))
    #expect(Array(received["X-Received"]?.utf8 ?? "".utf8) == Array("\u{301}a".utf8))
  }

  @Test(
    "values to send must be ASCII; received values keep their bytes",
    arguments: ["caf\u{E9}", " \u{301}x", "Jörg's phone", "\u{1F600}", "\u{A0}"])
  func rejectsNonASCIIValuesToSend(value: String) throws {
    var headers = HTTPHeaders()
    let error = #expect(throws: CourierError.self) { try headers.add("X-Test", value) }
    #expect(error?.kind == .invalidRequest)
    #expect(error?.debugDescription.contains("non-ASCII") == true)
    #expect(throws: CourierError.self) { try headers.set("X-Test", value) }
    #expect(throws: CourierError.self) { try HTTPHeaders([("X-Test", value)]) }
    #expect(headers.isEmpty)
    let received = HTTPHeaders(received: [("X-Test", "v\(value)")])
    #expect(received["X-Test"] == "v\(value)")
  }

  @Test("lookup ignores case; order and repeated names are kept")
  func orderedAndCaseInsensitive() throws {
    var headers = try HTTPHeaders([("Vary", "Accept"), ("X-One", "1"), ("vary", "Origin")])
    #expect(headers["VARY"] == "Accept")
    #expect(headers.values(for: try .init("vary")) == ["Accept", "Origin"])
    #expect(headers.map(\.name.rawName) == ["Vary", "X-One", "vary"])
    try headers.set("VARY", "Cookie")
    #expect(headers.values(for: try .init("Vary")) == ["Cookie"])
    #expect(headers.map(\.name.rawName) == ["VARY", "X-One"])
    headers.remove("x-one")
    #expect(headers.count == 1)
    #expect(HTTPHeaders.Name.contentType == (try HTTPHeaders.Name("content-TYPE")))
  }

  @Test("methods accept any token and reject others")
  func methods() throws {
    #expect(try HTTPMethod("PROPFIND").rawValue == "PROPFIND")
    #expect(throws: CourierError.self) { try HTTPMethod("GET /x") }
    #expect(throws: CourierError.self) { try HTTPMethod("") }
    #expect(HTTPMethod.put.isIdempotent && !HTTPMethod.post.isIdempotent)
  }
}
