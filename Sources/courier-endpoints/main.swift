// `courier-endpoints`: generates typed Courier endpoints from an `.endpoints.json` spec. The
// build-tool plugin `CourierEndpointsPlugin` runs it at build time; run it by hand with
// `swift run courier-endpoints SPEC --output FILE.swift` to commit the generated code instead.
import CourierEndpointsGenerator
import Foundation

let status = Tool.run(
  Array(CommandLine.arguments.dropFirst()),
  standardError: { FileHandle.standardError.write(Data($0.utf8)) },
  standardOutput: { FileHandle.standardOutput.write(Data($0.utf8)) })
exit(status)
