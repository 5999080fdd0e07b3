import Foundation
import Testing

/// The root of this checkout, found from this file's path.
let repositoryRoot = URL(fileURLWithPath: #filePath)
  .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// `Tests/CourierEndpointsTests/Fixtures`.
let fixtures = repositoryRoot.appendingPathComponent("Tests/CourierEndpointsTests/Fixtures")

/// What a finished process wrote and how it ended.
struct ProcessResult: Sendable {
  var status: Int32
  var output: String
  var error: String
  /// Standard output and standard error together, as a build log shows them.
  var combined: String { output + error }
}

/// Runs `executable` with `arguments` without blocking a thread of the cooperative pool;
/// output goes through files, so a chatty process can never fill a pipe and stall.
func run(
  _ executable: URL, _ arguments: [String], in directory: URL? = nil,
  environment: [String: String]? = nil
) async throws -> ProcessResult {
  let scratch = FileManager.default.temporaryDirectory
    .appendingPathComponent("courier-endpoints-run-\(UUID().uuidString)")
  try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: scratch) }
  let outURL = scratch.appendingPathComponent("out")
  let errURL = scratch.appendingPathComponent("err")
  try Data().write(to: outURL)
  try Data().write(to: errURL)
  let out = try FileHandle(forWritingTo: outURL)
  let err = try FileHandle(forWritingTo: errURL)
  let process = Process()
  process.executableURL = executable
  process.arguments = arguments
  if let directory { process.currentDirectoryURL = directory }
  if let environment { process.environment = environment }
  process.standardOutput = out
  process.standardError = err
  let status: Int32 = try await withCheckedThrowingContinuation { continuation in
    process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
    do {
      try process.run()
    } catch {
      process.terminationHandler = nil
      continuation.resume(throwing: error)
    }
  }
  try out.close()
  try err.close()
  return ProcessResult(
    status: status, output: try String(contentsOf: outURL, encoding: .utf8),
    error: try String(contentsOf: errURL, encoding: .utf8))
}

/// The `courier-endpoints` executable that the root package built next to this test binary.
func toolURL() -> URL? {
  var directories: [URL] = []
  if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
    directories.append(URL(fileURLWithPath: executable).deletingLastPathComponent())
  }
  for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
    directories.append(bundle.bundleURL.deletingLastPathComponent())
  }
  directories.append(repositoryRoot.appendingPathComponent(".build/debug"))
  return directories.map { $0.appendingPathComponent("courier-endpoints") }
    .first { FileManager.default.isExecutableFile(atPath: $0.path) }
}

/// The `swift` driver: from `PATH`, else the toolchain this repository is built with.
func swiftURL() -> URL? {
  let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
  let candidates =
    path.split(separator: ":").map {
      URL(fileURLWithPath: String($0)).appendingPathComponent("swift")
    }
    + [URL(fileURLWithPath: "/opt/swift/usr/bin/swift"), URL(fileURLWithPath: "/usr/bin/swift")]
  return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
}

/// A fresh temporary directory; the caller removes it.
func temporaryDirectory(_ name: String) throws -> URL {
  let url = FileManager.default.temporaryDirectory
    .appendingPathComponent("\(name)-\(UUID().uuidString)")
  try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  return url
}

/// The directory the tests were built into (`.build/debug`), which holds `Modules/` with the
/// `CourierCore` module the generated code imports.
func buildProductsDirectory() -> URL? {
  toolURL()?.deletingLastPathComponent()
}

/// The module name generated code is type-checked in, so that a spec can name a type as
/// `Fixture.User`.
let typecheckModule = "Fixture"

/// Types a spec can name, as a target that uses the plugin declares them.
let typecheckModels = """
  import Foundation

  public struct User: Codable, Sendable { public let id: Int }
  public struct Device: Codable, Sendable { public let name: String }
  """

/// Type-checks Swift sources (file name → text) in one module against the `CourierCore` this
/// checkout built, as a target using the plugin compiles them: Swift 6, warnings as errors.
func typecheck(_ files: [String: String]) async throws -> ProcessResult {
  let swift = try #require(swiftURL(), "no swift driver on PATH or in /opt/swift")
  let swiftc = swift.deletingLastPathComponent().appendingPathComponent("swiftc")
  let modules = try #require(
    buildProductsDirectory()?.appendingPathComponent("Modules"),
    "the tests were not built next to courier-endpoints (run swift build --build-tests)")
  #expect(
    FileManager.default.fileExists(
      atPath: modules.appendingPathComponent("CourierCore.swiftmodule").path),
    "no CourierCore.swiftmodule in \(modules.path)")
  let directory = try temporaryDirectory("courier-endpoints-typecheck")
  defer { try? FileManager.default.removeItem(at: directory) }
  var paths: [String] = []
  for (name, text) in files.sorted(by: { $0.key < $1.key }) {
    let url = directory.appendingPathComponent(name)
    try Data(text.utf8).write(to: url)
    paths.append(url.path)
  }
  return try await run(
    swiftc,
    [
      "-typecheck", "-swift-version", "6", "-warnings-as-errors", "-parse-as-library",
      "-module-name", typecheckModule, "-package-name", typecheckModule, "-I", modules.path,
    ] + paths)
}
