import Foundation
import Testing

@testable import CourierEndpointsGenerator

/// A small valid spec, one line per element, so that each bad case below changes one line
/// and knows where its diagnostic must point.
let validLines = [
  #"{"#,  // 1
  #"  "version": 1,"#,  // 2
  #"  "endpoints": ["#,  // 3
  #"    {"#,  // 4
  #"      "name": "User.check","#,  // 5
  #"      "method": "GET","#,  // 6
  #"      "path": "user/check/{phone}","#,  // 7
  #"      "parameters": [{ "name": "phone" }],"#,  // 8
  #"      "response": "PhoneCheck""#,  // 9
  #"    }"#,  // 10
  #"  ]"#,  // 11
  #"}"#,  // 12
]

/// `validLines` with line `number` (from 1) replaced by `replacement` (which may hold
/// several lines).
func spec(replacing number: Int, with replacement: String) -> String {
  var lines = validLines
  lines[number - 1] = replacement
  return lines.joined(separator: "\n") + "\n"
}

/// One bad spec and the diagnostic it must produce.
struct BadSpec: Sendable, CustomTestStringConvertible {
  var name: String
  var text: String
  var line: Int
  var column: Int
  var message: String
  var testDescription: String { name }
}

let badSpecs: [BadSpec] = [
  BadSpec(
    name: "unknown key", text: spec(replacing: 6, with: #"      "method": "GET", "retries": 3,"#),
    line: 6, column: 24, message: "unknown key 'retries' in an endpoint; expected one of: name, doc"
  ),
  BadSpec(
    name: "duplicate endpoint name",
    text: spec(
      replacing: 10,
      with: """
            },
            { "name": "User.check", "method": "POST", "path": "user/check", "response": "Void" }
        """),
    line: 11, column: 5,
    message: "duplicate endpoint name 'User.check' (first declared at line 4)"),
  BadSpec(
    name: "path parameter not declared",
    text: spec(replacing: 7, with: #"      "path": "user/check/{phone}/{kind}","#),
    line: 7, column: 35, message: "path parameter '{kind}' is not declared in 'parameters'"),
  BadSpec(
    name: "declared parameter the path never uses",
    text: spec(
      replacing: 8, with: #"      "parameters": [{ "name": "phone" }, { "name": "id" }],"#),
    line: 8, column: 53,
    message: "parameter 'id' is declared but the path 'user/check/{phone}' never uses it"),
  BadSpec(
    name: "invalid method", text: spec(replacing: 6, with: #"      "method": "FETCH","#),
    line: 6, column: 17,
    message: "invalid method 'FETCH'; expected one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS"),
  BadSpec(
    name: "invalid JSON: missing comma", text: spec(replacing: 6, with: #"      "method": "GET""#),
    line: 7, column: 7, message: "invalid JSON: expected ',' or '}' in an object, found '\"'"),
  BadSpec(
    name: "invalid JSON: trailing comma",
    text: spec(replacing: 9, with: #"      "response": "PhoneCheck","#),
    line: 10, column: 5, message: "invalid JSON: expected a key in quotes, found '}'"),
  BadSpec(
    name: "unsupported version", text: spec(replacing: 2, with: #"  "version": 2,"#),
    line: 2, column: 14,
    message: "unsupported spec version 2; this courier-endpoints reads version 1"),
  BadSpec(
    name: "missing key", text: spec(replacing: 9, with: #"      "doc": "no response""#),
    line: 4, column: 5, message: "missing key 'response' in endpoint 'User.check'"),
  BadSpec(
    name: "not a Swift type",
    text: spec(replacing: 9, with: #"      "response": "Phone Check!""#),
    line: 9, column: 19, message: "response 'Phone Check!' is not a Swift type name"),
  BadSpec(
    name: "a control character in a doc",
    text: spec(replacing: 6, with: #"      "method": "GET", "doc": "a\u0007b","#),
    line: 6, column: 31,
    message: "the doc holds the control character U+0007; a doc may hold line breaks and tabs"),
  BadSpec(
    name: "a line break in a path",
    text: spec(replacing: 7, with: #"      "path": "user/check/{phone}\r","#),
    line: 7, column: 15,
    message: "path holds the control character U+000D, which cannot be part of it"),
  BadSpec(
    name: "a namespace that hides the response type",
    text: spec(replacing: 9, with: #"      "response": "User""#),
    line: 9, column: 19,
    message: "the response type 'User': 'User' means the namespace API.User in the generated "
      + "code, not a type; rename the namespace, or write the type with its module's name"),
  BadSpec(
    name: "a namespace named like a module the generated code names",
    text: spec(replacing: 5, with: #"      "name": "Foundation.check","#),
    line: 5, column: 15,
    message: "namespace 'Foundation' of 'Foundation.check' would hide the module Foundation"),
  BadSpec(
    name: "one header twice, in different case",
    text: spec(
      replacing: 8,
      with:
        #"      "parameters": [{ "name": "phone" }], "headers": { "Accept": "a", "accept": "b" },"#
    ),
    line: 8, column: 72,
    message:
      "header 'accept' is given twice (as 'Accept' at line 8); header names compare without "
      + "regard to case"),
  BadSpec(
    name: "a non-ASCII header value",
    text: spec(
      replacing: 8,
      with: #"      "parameters": [{ "name": "phone" }], "headers": { "X-Name": "é" },"#
    ),
    line: 8, column: 67,
    message:
      "header 'X-Name' has a non-ASCII character in its value; header values are sent as ASCII"
  ),
]

@Suite("courier-endpoints, run as a command", .timeLimit(.minutes(5)))
struct ToolTests {
  let workDirectory: URL

  init() throws {
    workDirectory = try temporaryDirectory("courier-endpoints-tool")
  }

  func tool() throws -> URL {
    try #require(toolURL(), "courier-endpoints was not built next to the tests (run swift build)")
  }

  @Test("each bad spec fails with file:line:column: error: on the right line", arguments: badSpecs)
  func badSpec(_ bad: BadSpec) async throws {
    defer { try? FileManager.default.removeItem(at: workDirectory) }
    let specURL = workDirectory.appendingPathComponent("Bad.endpoints.json")
    let outputURL = workDirectory.appendingPathComponent("Bad.swift")
    try Data(bad.text.utf8).write(to: specURL)
    let result = try await run(try tool(), [specURL.path, "--output", outputURL.path])
    #expect(result.status == 1)
    let expected = "\(specURL.path):\(bad.line):\(bad.column): error: \(bad.message)"
    #expect(
      result.error.split(separator: "\n").contains { $0.hasPrefix(expected) },
      "stderr was:\n\(result.error)")
    #expect(!FileManager.default.fileExists(atPath: outputURL.path))
  }

  @Test("the valid spec generates code, to a file or to standard output")
  func valid() async throws {
    defer { try? FileManager.default.removeItem(at: workDirectory) }
    let specURL = workDirectory.appendingPathComponent("Good.endpoints.json")
    try Data(validLines.joined(separator: "\n").utf8).write(to: specURL)
    let outputURL = workDirectory.appendingPathComponent("nested/Good.swift")
    let written = try await run(try tool(), [specURL.path, "--output", outputURL.path])
    #expect(written.status == 0)
    #expect(written.combined.isEmpty)
    let file = try String(contentsOf: outputURL, encoding: .utf8)
    #expect(
      file.contains("static func check(phone: Swift.String) -> CourierCore.Endpoint<PhoneCheck> {"))
    let printed = try await run(try tool(), [specURL.path])
    #expect(printed.status == 0)
    #expect(printed.output == file)
  }

  @Test("the golden spec generates the golden file")
  func golden() async throws {
    defer { try? FileManager.default.removeItem(at: workDirectory) }
    let outputURL = workDirectory.appendingPathComponent("Golden.swift")
    let result = try await run(
      try tool(),
      [fixtures.appendingPathComponent("Golden.endpoints.json").path, "-o", outputURL.path])
    #expect(result.status == 0)
    let golden = try String(
      contentsOf: fixtures.appendingPathComponent("Golden.swift.txt"), encoding: .utf8)
    #expect(try String(contentsOf: outputURL, encoding: .utf8) == golden)
  }

  @Test("bad arguments print the usage and exit 2")
  func usage() async throws {
    defer { try? FileManager.default.removeItem(at: workDirectory) }
    let none = try await run(try tool(), [])
    #expect(none.status == 2)
    #expect(none.error.contains("usage: courier-endpoints"))
    let missing = try await run(try tool(), ["/nonexistent/x.endpoints.json"])
    #expect(missing.status == 1)
    #expect(missing.error.contains("cannot read /nonexistent/x.endpoints.json"))
  }
}

@Suite("Spec checks, in process", .timeLimit(.minutes(5)))
struct SpecReaderTests {
  func diagnostics(_ text: String) -> [String] {
    do {
      _ = try SpecReader.read(Array(text.utf8))
      return []
    } catch {
      return error.all.map { "\($0.location): \($0.message)" }
    }
  }

  @Test("every problem is reported, in file order, not just the first")
  func allProblems() {
    let text = spec(replacing: 6, with: #"      "method": "FETCH", "retries": 3,"#)
    let found = diagnostics(text)
    #expect(found.count == 2)
    #expect(found.first?.hasPrefix("6:17: invalid method 'FETCH'") == true)
    #expect(found.last?.hasPrefix("6:26: unknown key 'retries'") == true)
  }

  @Test("names, labels and types that would not compile or lint are refused")
  func names() {
    #expect(diagnostics(spec(replacing: 5, with: #"      "name": "user.Check","#)).count == 1)
    #expect(
      diagnostics(spec(replacing: 8, with: #"      "parameters": [{ "name": "1st" }],"#))
        .contains { $0.hasPrefix("8:32: '1st' is not a Swift name; add a 'label'") })
    #expect(
      diagnostics(
        spec(replacing: 8, with: #"      "parameters": [{ "name": "phone", "type": "Int?" }],"#)
      )
      .contains { $0.contains("(write optional: true instead of '?')") })
    #expect(SwiftNames.lowerCamel(from: "page_size") == "pageSize")
    #expect(SwiftNames.lowerCamel(from: "X-Request-ID") == "xRequestID")
    #expect(SwiftNames.lowerCamel(from: "default") == nil)
    #expect(SwiftNames.isTypeName("[String: [Device]]?"))
    #expect(SwiftNames.isTypeName("Result<Foo.Bar, Never>"))
    #expect(!SwiftNames.isTypeName("Foo; import Bar"))
    // `_` is a type placeholder, which `Endpoint<_>` and a parameter cannot use.
    for type in ["_", "[Int: _]", "Result<_, Never>", "_?"] {
      #expect(
        diagnostics(spec(replacing: 9, with: #"      "response": "\#(type)""#))
          == ["9:19: response '\(type)' is not a Swift type name"])
    }
    #expect(
      diagnostics(
        spec(replacing: 8, with: #"      "parameters": [{ "name": "phone", "type": "_" }],"#))
        == ["8:49: type '_' is not a Swift type name"])
    #expect(
      diagnostics(spec(replacing: 2, with: #"  "version": 1, "imports": ["_"],"#)).count == 1)
    #expect(SwiftNames.isTypeName("_Private.Item"))
  }

  @Test("a path written with escapes still gets a diagnostic, at the string")
  func escapedPath() {
    let found = diagnostics(
      spec(replacing: 7, with: #"      "path": "user\/check\/{phone}\/{x}","#))
    #expect(found == ["7:15: path parameter '{x}' is not declared in 'parameters'"])
  }
}
