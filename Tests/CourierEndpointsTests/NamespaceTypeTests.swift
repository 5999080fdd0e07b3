import Foundation
import Testing

@testable import CourierEndpointsGenerator

@Suite("Namespaces named like the types the generated code names", .timeLimit(.minutes(5)))
struct NamespaceTypeTests {
  @Test("namespaces named like Courier's, Foundation's and Swift's types compile")
  func builtinTypeNames() async throws {
    let spec = """
      {
        "version": 1,
        "imports": ["CourierCore"],
        "access": "public",
        "endpoints": [
          { "name": "Data.upload", "method": "PUT", "path": "data/{id}",
            "parameters": [{ "name": "id" }],
            "body": { "encoding": "data", "contentType": "image/png" }, "response": "Void" },
          { "name": "Endpoint.get", "method": "GET", "path": "e", "query": [{ "name": "q" }],
            "response": "Fixture.User" },
          { "name": "MultipartForm.send", "method": "POST", "path": "m",
            "body": { "encoding": "multipart" }, "response": "Void" },
          { "name": "EnvelopeRule.check", "method": "GET", "path": "r", "response": "[Device]",
            "envelope": { "code": "code", "success": [0], "message": "message" } },
          { "name": "RetryPolicy.list", "method": "GET", "path": "p", "response": "Void",
            "retry": { "maximumAttempts": 2 } },
          { "name": "String.find", "method": "GET", "path": "s/{name}",
            "parameters": [{ "name": "name" }], "response": "[Device]" },
          { "name": "User.get", "method": "GET", "path": "u", "response": "Fixture.User" }
        ]
      }
      """
    let parsed = try SpecReader.read(Array(spec.utf8))
    let source = Generator.generate(parsed, specFileName: "API.endpoints.json")
    let compiled = try await typecheck(["API.swift": source, "Models.swift": typecheckModels])
    #expect(compiled.status == 0, "swiftc said:\n\(compiled.combined)\nfor:\n\(source)")
  }

  /// The diagnostics of a spec with the given endpoints (written inside `"endpoints": [ ]`,
  /// from line 4).
  func diagnostics(namespace: String = "API", endpoints: String) -> [String] {
    let text = """
      {
        "version": 1,
        "namespace": "\(namespace)",
        "endpoints": [\(endpoints)]
      }
      """
    do {
      _ = try SpecReader.read(Array(text.utf8))
      return []
    } catch {
      return error.all.map { "\($0.location): \($0.message)" }
    }
  }

  @Test("a namespace that would hide a type of the endpoint is reported at the type")
  func hiddenTypes() {
    #expect(
      diagnostics(
        endpoints: #"{ "name": "User.get", "method": "GET", "path": "u", "response": "User" }"#)
        == [
          "4:81: the response type 'User': 'User' means the namespace API.User in the generated "
            + "code, not a type; rename the namespace, or write the type with its module's name "
            + "(such as MyModule.User)"
        ])
    // Hidden from an inner namespace too, in a generic argument, a body and a parameter.
    let found = diagnostics(
      endpoints: """
        { "name": "Users.Device.list", "method": "POST", "path": "d/{n}",
          "parameters": [{ "name": "n", "type": "Users" }],
          "body": { "type": "[Device]" }, "response": "Result<Device, Never>" },
        { "name": "Never.x", "method": "GET", "path": "x", "response": "Void" }
        """)
    #expect(found.count == 4, "\(found)")
    #expect(found.contains { $0.hasPrefix("5:41: path parameter 'n' type 'Users': 'Users' means") })
    #expect(found.contains { $0.hasPrefix("6:21: the body type '[Device]': 'Device' means") })
    #expect(
      found.contains { $0.hasPrefix("6:47: the response type 'Result<Device, Never>': 'Device'") })
    #expect(
      found.contains { $0.hasPrefix("6:47: the response type 'Result<Device, Never>': 'Never'") })
    // The top namespace hides a type of its own name.
    #expect(
      diagnostics(
        namespace: "Account",
        endpoints: #"{ "name": "me", "method": "GET", "path": "u", "response": "Account" }"#
      )
      .first?.hasPrefix("4:75: the response type 'Account': 'Account' means the namespace") == true)
    // A namespace elsewhere in the tree hides nothing, and a qualified type is not hidden.
    #expect(
      diagnostics(
        endpoints: """
          { "name": "User.get", "method": "GET", "path": "u", "response": "MyApp.User" },
          { "name": "Admin.Device.get", "method": "GET", "path": "d", "response": "Void" },
          { "name": "Other.get", "method": "GET", "path": "o", "response": "Device" }
          """
      ).isEmpty)
  }

  @Test("a namespace named like a module the generated code qualifies with is reported")
  func moduleNames() {
    for module in ["Swift", "Foundation", "CourierCore"] {
      #expect(
        diagnostics(
          endpoints:
            #"{ "name": "\#(module).get", "method": "GET", "path": "u", "response": "Void" }"#
        ) == [
          "4:27: namespace '\(module)' of '\(module).get' would hide the module \(module), whose "
            + "types the generated code names; choose another name"
        ])
      #expect(
        diagnostics(
          namespace: module,
          endpoints: #"{ "name": "get", "method": "GET", "path": "u", "response": "Void" }"#) == [
            "3:16: namespace '\(module)' would hide the module \(module), whose types the "
              + "generated code names; choose another name"
          ])
    }
  }
}
