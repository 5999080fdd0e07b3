import Foundation
import Testing

@testable import CourierEndpointsGenerator

/// Promises of the Generated endpoints article (the spec format's table) that no other test
/// held (see `Docs/Promises.md`).
@Suite("Promises: generated endpoints", .timeLimit(.minutes(5)))
struct PromisesGeneratorTests {
  /// The diagnostics for `text`, as `line:column: message`; empty when the spec is valid.
  func diagnostics(_ text: String) -> [String] {
    do {
      _ = try SpecReader.read(Array(text.utf8))
      return []
    } catch {
      return error.all.map { "\($0.location): \($0.message)" }
    }
  }

  @Test("without namespace, access and imports: enum API, internal, import Courier")
  func topLevelDefaults() throws {
    let text = validLines.joined(separator: "\n")
    let generated = Generator.generate(try SpecReader.read(Array(text.utf8)), specFileName: "a")
    #expect(generated.contains("\nimport Courier\n"))
    #expect(!generated.contains("import CourierCore"))
    #expect(generated.contains("\nenum API {\n"))
    #expect(!generated.contains("public "))
    #expect(!generated.contains("package "))
    // Without an envelope, retry, timeout or headers, none is written.
    #expect(!generated.contains(".envelope("))
    #expect(!generated.contains(".retry("))
    #expect(!generated.contains(".timeout("))
    #expect(!generated.contains(".header("))
  }

  @Test("a body is refused on GET and HEAD, at the key", arguments: ["GET", "HEAD"])
  func noBodyOnGetOrHead(method: String) {
    let found = diagnostics(
      spec(
        replacing: 6,
        with:
          #"      "method": "\#(method)", "body": { "encoding": "data", "contentType": "image/png" },"#
      ))
    #expect(found == ["6:\(21 + method.count): a \(method) endpoint cannot have a body"])
  }

  @Test("a path may hold no ? or #", arguments: ["user/check/{phone}?x=1", "user/{phone}#top"])
  func pathWithoutQueryOrFragment(path: String) {
    let found = diagnostics(spec(replacing: 7, with: #"      "path": "\#(path)","#))
    #expect(found.count == 1)
    #expect(found.first?.hasPrefix("7:15: ") == true, "\(found)")
  }

  @Test("basePath is joined with one / to relative paths, never to absolute ones")
  func basePathJoining() throws {
    for (basePath, path) in [
      ("/v1/", "/v1/user/check/{phone}"), ("v1", "v1/user/check/{phone}"),
      ("v1/", "v1/user/check/{phone}"),
    ] {
      let text = validLines.joined(separator: "\n")
        .replacingOccurrences(
          of: #""version": 1,"#, with: #""version": 1, "basePath": "\#(basePath)","#)
      let generated = Generator.generate(try SpecReader.read(Array(text.utf8)), specFileName: "a")
      #expect(generated.contains(#"(.get, "\#(path)")"#), "\(basePath)")
    }
    let text = validLines.joined(separator: "\n")
      .replacingOccurrences(of: #""version": 1,"#, with: #""version": 1, "basePath": "/v1/","#)
    let absolute = text.replacingOccurrences(
      of: #""path": "user/check/{phone}","#, with: #""path": "https://h.test/c/{phone}","#)
    let kept = Generator.generate(try SpecReader.read(Array(absolute.utf8)), specFileName: "a")
    #expect(kept.contains(#"(.get, "https://h.test/c/{phone}")"#))
  }

  @Test("timeout and deadline are seconds in whole milliseconds, up to a day")
  func durations() throws {
    let text = spec(
      replacing: 6, with: #"      "method": "GET", "timeout": 0.25, "deadline": 2,"#)
    let generated = Generator.generate(try SpecReader.read(Array(text.utf8)), specFileName: "a")
    #expect(generated.contains(".timeout(.milliseconds(250))"))
    #expect(generated.contains(".deadline(.seconds(2))"))
    for value in ["0.0015", "0", "-1", "86401"] {
      let found = diagnostics(
        spec(replacing: 6, with: #"      "method": "GET", "timeout": \#(value),"#))
      #expect(
        found.count == 1
          && found[0].hasSuffix(
            "'timeout' must be between 0.001 and 86400 seconds, in whole milliseconds"),
        "\(value): \(found)")
    }
  }
}
