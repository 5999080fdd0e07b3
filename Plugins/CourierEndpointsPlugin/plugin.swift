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
    return Self.commands(
      specs: target.sourceFiles(withSuffix: ".endpoints.json").map(\.url),
      tool: try context.tool(named: "courier-endpoints").url,
      workDirectory: context.pluginWorkDirectoryURL)
  }

  /// A command per spec: `courier-endpoints SPEC --output WORK/<name>.endpoints.swift`. Two
  /// specs of the same name in different folders get their folder's name in front
  /// (`Admin_API.endpoints.swift`), since one module cannot compile two files of one name.
  static func commands(specs: [URL], tool: URL, workDirectory: URL) -> [Command] {
    let names = specs.map(\.lastPathComponent)
    return specs.map { spec in
      let name = spec.lastPathComponent
      var base = String(name.dropLast(".endpoints.json".count))
      if names.filter({ $0 == name }).count > 1 {
        base = spec.deletingLastPathComponent().lastPathComponent + "_" + base
      }
      let output = workDirectory.appending(path: "\(base).endpoints.swift")
      return .buildCommand(
        displayName: "Generating Courier endpoints from \(name)",
        executable: tool,
        arguments: [spec.path, "--output", output.path],
        inputFiles: [spec],
        outputFiles: [output]
      )
    }
  }
}

#if canImport(XcodeProjectPlugin)
  import XcodeProjectPlugin

  extension CourierEndpointsPlugin: XcodeBuildToolPlugin {
    /// The same commands for a target of an Xcode project.
    func createBuildCommands(context: XcodePluginContext, target: XcodeTarget) throws -> [Command] {
      Self.commands(
        specs: target.inputFiles.map(\.url).filter {
          $0.lastPathComponent.hasSuffix(".endpoints.json")
        },
        tool: try context.tool(named: "courier-endpoints").url,
        workDirectory: context.pluginWorkDirectoryURL)
    }
  }
#endif
