import Foundation

/// The `courier-endpoints` command line: `courier-endpoints SPEC [--output FILE]`.
///
/// Problems in the spec go to standard error as `SPEC:line:column: error: message`, the form
/// Xcode and SwiftPM show on the spec's line, and the exit status is 1. With no `--output`,
/// the Swift source goes to standard output.
package enum Tool {
  /// The help text.
  package static let usage = """
    usage: courier-endpoints SPEC.endpoints.json [--output FILE.swift]

    Generates typed Courier endpoints from a spec (the spec format: Courier's documentation,
    "Generated endpoints", Sources/Courier/Courier.docc/GeneratedEndpoints.md).
    Without --output the Swift source is written to standard output.
    """

  /// Runs the tool with `arguments` (without the program name).
  ///
  /// - Returns: The exit status: 0 on success, 1 for a bad spec, 2 for bad arguments.
  package static func run(
    _ arguments: [String], standardError: (String) -> Void, standardOutput: (String) -> Void
  ) -> Int32 {
    do {
      let (specPath, outputPath) = try parse(
        arguments, standardError: standardError, standardOutput: standardOutput)
      let spec = try readSpec(at: specPath, standardError: standardError)
      let name = URL(fileURLWithPath: specPath).lastPathComponent
      let source = Generator.generate(spec, specFileName: name)
      guard let outputPath else {
        standardOutput(source)
        return 0
      }
      try write(source, to: outputPath, standardError: standardError)
      return 0
    } catch {
      return error.status
    }
  }

  /// Ends a run early with `status`, once its output (help or an error) is written.
  private struct Exit: Error {
    var status: Int32
  }

  /// The spec path and the output path the arguments name.
  private static func parse(
    _ arguments: [String], standardError: (String) -> Void, standardOutput: (String) -> Void
  ) throws(Exit) -> (spec: String, output: String?) {
    var specPath: String?
    var outputPath: String?
    var remaining = arguments[...]
    while let argument = remaining.popFirst() {
      switch argument {
      case "-h", "--help":
        standardOutput(usage + "\n")
        throw Exit(status: 0)
      case "-o", "--output":
        guard let path = remaining.popFirst() else {
          standardError("courier-endpoints: error: \(argument) needs a file path\n\(usage)\n")
          throw Exit(status: 2)
        }
        outputPath = path
      default:
        if argument.hasPrefix("-") || specPath != nil {
          standardError("courier-endpoints: error: unexpected argument '\(argument)'\n\(usage)\n")
          throw Exit(status: 2)
        }
        specPath = argument
      }
    }
    guard let specPath else {
      standardError("courier-endpoints: error: no spec file given\n\(usage)\n")
      throw Exit(status: 2)
    }
    return (specPath, outputPath)
  }

  /// The checked spec in the file at `path`; its problems go to standard error.
  private static func readSpec(
    at path: String, standardError: (String) -> Void
  ) throws(Exit) -> Spec {
    let bytes: [UInt8]
    do {
      bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    } catch {
      standardError(
        "courier-endpoints: error: cannot read \(path): \(error.localizedDescription)\n")
      throw Exit(status: 1)
    }
    do {
      return try SpecReader.read(bytes)
    } catch {
      for diagnostic in error.all {
        standardError(diagnostic.formatted(file: path) + "\n")
      }
      throw Exit(status: 1)
    }
  }

  /// Writes `source` to the file at `path`, making its folder when missing.
  private static func write(
    _ source: String, to path: String, standardError: (String) -> Void
  ) throws(Exit) {
    do {
      let url = URL(fileURLWithPath: path)
      try FileManager.default.createDirectory(
        at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try Data(source.utf8).write(to: url, options: .atomic)
    } catch {
      standardError(
        "courier-endpoints: error: cannot write \(path): \(error.localizedDescription)\n")
      throw Exit(status: 1)
    }
  }
}
