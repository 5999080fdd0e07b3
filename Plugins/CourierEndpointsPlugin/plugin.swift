import Foundation
import PackagePlugin

/// Generates typed Courier endpoints from every `*.endpoints.json` file of a target, at build
/// time: one Swift file per spec, compiled with the target's own sources.
///
/// The plugin only finds the specs and declares each one's input and output, so that SwiftPM
/// (and Xcode) rerun the generator exactly when a spec changes. The work is done by the
/// `courier-endpoints` tool, which reports a bad spec as `file:line:column: error: …` on the
/// spec's line and fails the build.
@main
struct CourierEndpointsPlugin: BuildToolPlugin {
  /// One build command per spec of `target`.
  func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
    guard let target = target as? SourceModuleTarget else { return [] }
    let tool = try context.tool(named: "courier-endpoints")
    return target.sourceFiles(withSuffix: ".endpoints.json").map { file in
      let name = file.url.lastPathComponent
      let base = String(name.dropLast(".endpoints.json".count))
      let output = context.pluginWorkDirectoryURL.appending(path: "\(base).endpoints.swift")
      return .buildCommand(
        displayName: "Generating Courier endpoints from \(name)",
        executable: tool.url,
        arguments: [file.url.path, "--output", output.path],
        inputFiles: [file.url],
        outputFiles: [output]
      )
    }
  }
}
