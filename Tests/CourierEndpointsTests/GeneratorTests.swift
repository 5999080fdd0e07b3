import Foundation
import Testing

@testable import CourierEndpointsGenerator

@Suite("Generated code", .timeLimit(.minutes(5)))
struct GeneratorTests {
  @Test("the golden spec generates exactly the golden file")
  func golden() throws {
    let spec = try SpecReader.read(
      Array(try Data(contentsOf: fixtures.appendingPathComponent("Golden.endpoints.json"))))
    let generated = Generator.generate(spec, specFileName: "Golden.endpoints.json")
    let golden = try String(
      contentsOf: fixtures.appendingPathComponent("Golden.swift.txt"), encoding: .utf8)
    #expect(generated == golden)
  }

  @Test("the generated code passes swift format lint --strict with the repository's settings")
  func lint() async throws {
    let swift = try #require(swiftURL(), "no swift driver on PATH or in /opt/swift")
    let directory = try temporaryDirectory("courier-endpoints-lint")
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("Golden.swift")
    try FileManager.default.copyItem(
      at: fixtures.appendingPathComponent("Golden.swift.txt"), to: file)
    let result = try await run(
      swift,
      [
        "format", "lint", "--strict", "--configuration",
        repositoryRoot.appendingPathComponent(".swift-format").path, file.path,
      ])
    #expect(result.status == 0, "swift format lint said:\n\(result.combined)")
    #expect(result.combined.isEmpty, "swift format lint said:\n\(result.combined)")
  }

  @Test("string literals are escaped, so a spec cannot inject code")
  func literals() {
    #expect(Generator.literal("say \"hi\"\\\n") == #""say \"hi\"\\\n""#)
    #expect(Generator.literal("\u{0}\u{7F}é") == #""\u{0}\u{7F}é""#)
  }
}
