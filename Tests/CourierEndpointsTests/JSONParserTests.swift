import Testing

@testable import CourierEndpointsGenerator

@Suite("JSON parser with positions", .timeLimit(.minutes(5)))
struct JSONParserTests {
  func parse(_ text: String) throws(Diagnostic) -> JSONNode {
    try JSONParser.parse(Array(text.utf8))
  }

  @Test("records the line and column of every key and value")
  func positions() throws {
    let node = try parse("{\n  \"a\": [1, true],\n  \"bé\": \"x\", \"c\": null\n}")
    guard case .object(let members) = node.value else {
      Issue.record("not an object")
      return
    }
    #expect(members.map(\.key) == ["a", "bé", "c"])
    #expect(
      members.map(\.keyLocation) == [
        .init(line: 2, column: 3), .init(line: 3, column: 3), .init(line: 3, column: 15),
      ])
    #expect(members[1].value.location == SourceLocation(line: 3, column: 10))  // é is two bytes
    #expect(members[1].value.plainStringStart == SourceLocation(line: 3, column: 11))
    guard case .array(let elements) = members[0].value.value else {
      Issue.record("not an array")
      return
    }
    #expect(elements.map(\.location.column) == [9, 12])
  }

  @Test("unescapes strings, including surrogate pairs")
  func escapes() throws {
    let node = try parse(#"["a\"b\\c\/\n\u00e9\ud83d\ude00"]"#)
    guard case .array(let elements) = node.value, case .string(let text) = elements.first?.value
    else {
      Issue.record("not an array of a string")
      return
    }
    #expect(text == "a\"b\\c/\né😀")
    #expect(elements.first?.plainStringStart == nil)
  }

  @Test(
    "invalid JSON is reported where it goes wrong",
    arguments: [
      ("{\"a\": 1,}", 1, 9, "expected a key in quotes, found '}'"),
      ("{\"a\": 1\n \"b\": 2}", 2, 2, "expected ',' or '}' in an object"),
      ("[1, 2", 1, 6, "unexpected end of file"),
      ("{\"a\": 01}", 1, 7, "a number cannot start with 0"),
      ("{\"a\": tru}", 1, 7, "expected a value"),
      ("{\"a\": \"x\n\"}", 1, 9, "control character in a string"),
      ("{\"a\": 1, \"a\": 2}", 1, 10, "duplicate key 'a'"),
      ("{} {}", 1, 4, "after the document"),
      ("[\"\\ud800\"]", 1, 9, "unpaired surrogate"),
    ])
  func invalid(text: String, line: Int, column: Int, message: String) {
    #expect {
      _ = try parse(text)
    } throws: { error in
      guard let diagnostic = error as? Diagnostic else { return false }
      return diagnostic.location == SourceLocation(line: line, column: column)
        && diagnostic.message.contains(message)
    }
  }

  @Test("nesting is bounded, so a hostile file cannot overflow the stack")
  func depth() {
    let text = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
    #expect(throws: Diagnostic.self) { _ = try parse(text) }
    #expect(throws: Never.self) {
      _ = try parse(String(repeating: "[", count: 60) + String(repeating: "]", count: 60))
    }
  }
}
