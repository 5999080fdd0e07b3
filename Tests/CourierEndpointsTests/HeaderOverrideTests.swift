import Foundation
import Testing

@testable import CourierEndpointsGenerator

@Suite("Spec-wide and endpoint headers", .timeLimit(.minutes(5)))
struct HeaderOverrideTests {
  @Test("an endpoint's header replaces the spec's header of the same name, in any case")
  func endpointReplacesSpecHeader() throws {
    let text = """
      {
        "version": 1,
        "headers": { "Accept": "application/json", "X-Client": "app" },
        "endpoints": [
          { "name": "csv", "method": "GET", "path": "c", "response": "Data",
            "headers": { "accept": "text/csv" } },
          { "name": "json", "method": "GET", "path": "j", "response": "Data" }
        ]
      }
      """
    let source = Generator.generate(try SpecReader.read(Array(text.utf8)), specFileName: "A")
    let functions = source.components(separatedBy: "static func ")
    let csv = try #require(functions.first { $0.hasPrefix("csv(") })
    let json = try #require(functions.first { $0.hasPrefix("json(") })
    let headers = { (code: String) in
      code.split(separator: "\n").filter { $0.contains(".header(") }.map {
        $0.trimmingCharacters(in: .whitespaces)
      }
    }
    #expect(headers(csv) == [#".header("X-Client", "app")"#, #".header("accept", "text/csv")"#])
    #expect(
      headers(json) == [#".header("Accept", "application/json")"#, #".header("X-Client", "app")"#])
  }
}
