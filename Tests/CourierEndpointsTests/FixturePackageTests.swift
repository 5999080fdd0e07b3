import Foundation
import Testing

/// Set by `.ci/run`: building a package that uses the plugin compiles CourierCore, the tool and
/// the plugin from scratch in a separate scratch path, which takes minutes on a busy machine.
let fixtureBuildsEnabled = ProcessInfo.processInfo.environment["COURIER_FIXTURE_BUILD"] == "1"

/// The Swift source of the fixture's own code: the types the golden spec names, and a main
/// that builds requests from the generated endpoints.
let fixtureModels = """
  import CourierCore
  import Foundation

  public struct PhoneCheck: Decodable, Sendable { public let registered: Bool }
  public struct Registration: Encodable, Sendable { public let phone: String }
  public struct Account: Decodable, Sendable { public let id: Int }
  public struct Device: Decodable, Sendable { public let name: String }
  public struct UploadReceiptWithAVeryLongTypeName: Decodable, Sendable { public let id: Int }
  """

let fixtureMain = """
  import CourierCore
  import Foundation

  let base = URL(string: "https://api.example.test/")
  do {
    let request = try API.Users.check(phone: "+86 138", lang: "zh", pageSize: 20)
      .makeRequest(baseURL: base, encoder: JSONEncoder())
    print(request.method, request.url.absoluteString, request.headers["X-Quote"] ?? "-")
    let remove = try API.Users.Devices.remove(userID: 7, device: "a b")
      .makeRequest(baseURL: base, encoder: JSONEncoder())
    // The endpoint's x-client replaces the spec-wide X-Client: one value is sent.
    print(remove.method, remove.url.absoluteString, try remove.headers.values(for: .init("X-Client")))
  } catch {
    print("error: \\(error)")
  }
  """

/// Builds a package that depends on this checkout by path and uses `CourierEndpointsPlugin`,
/// with `swift build`, as a user's package would. Both tests share one scratch path under
/// `.build/`, so CourierCore is compiled once and later runs reuse it.
@Suite(
  "CourierEndpointsPlugin in a package built with swift build",
  .serialized, .timeLimit(.minutes(10)),
  .enabled(
    if: fixtureBuildsEnabled,
    "slow (builds a separate package): set COURIER_FIXTURE_BUILD=1 to run it, as .ci/run does"))
struct FixturePackageTests {
  static let scratchPath = repositoryRoot.appendingPathComponent(".build/endpoints-fixture")

  /// Writes the fixture package with `spec` as its `.endpoints.json` file.
  func makePackage(spec: Data) throws -> (root: URL, spec: URL) {
    let root = try temporaryDirectory("courier-endpoints-fixture")
      .appendingPathComponent("EndpointsFixture")
    let sources = root.appendingPathComponent("Sources/Fixture")
    try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
    let identity = repositoryRoot.lastPathComponent
    let manifest = """
      // swift-tools-version: 6.2
      import PackageDescription

      let package = Package(
        name: "EndpointsFixture",
        platforms: [.macOS(.v15)],
        dependencies: [.package(path: "\(repositoryRoot.path)")],
        targets: [
          .executableTarget(
            name: "Fixture",
            dependencies: [.product(name: "CourierCore", package: "\(identity)")],
            swiftSettings: [.unsafeFlags(["-warnings-as-errors"])],
            plugins: [.plugin(name: "CourierEndpointsPlugin", package: "\(identity)")]
          )
        ],
        swiftLanguageModes: [.v6]
      )
      """
    try Data(manifest.utf8).write(to: root.appendingPathComponent("Package.swift"))
    try Data(fixtureModels.utf8).write(to: sources.appendingPathComponent("Models.swift"))
    try Data(fixtureMain.utf8).write(to: sources.appendingPathComponent("main.swift"))
    let specURL = sources.appendingPathComponent("Golden.endpoints.json")
    try spec.write(to: specURL)
    return (root, specURL)
  }

  func build(_ root: URL) async throws -> ProcessResult {
    let swift = try #require(swiftURL(), "no swift driver on PATH or in /opt/swift")
    let arguments = ["build", "--package-path", root.path, "--scratch-path", Self.scratchPath.path]
    // At the lowest priority: a package build takes both cores for half a minute, and the
    // tests running beside it measure wall time (a cancellation ending a backoff "at once").
    let nice = URL(fileURLWithPath: "/usr/bin/nice")
    guard FileManager.default.isExecutableFile(atPath: nice.path) else {
      return try await run(swift, arguments)
    }
    return try await run(nice, ["-n", "19", swift.path] + arguments)
  }

  @Test("a good spec builds with no warnings, generates the golden file, and the code runs")
  func goodSpec() async throws {
    let started = ContinuousClock.now
    let spec = try Data(contentsOf: fixtures.appendingPathComponent("Golden.endpoints.json"))
    let package = try makePackage(spec: spec)
    defer { try? FileManager.default.removeItem(at: package.root.deletingLastPathComponent()) }
    let result = try await build(package.root)
    #expect(result.status == 0, "swift build said:\n\(result.combined)")
    #expect(!result.combined.contains("warning:"), "swift build said:\n\(result.combined)")

    let outputs = Self.scratchPath.appendingPathComponent("plugins/outputs")
    let generated = FileManager.default.enumerator(at: outputs, includingPropertiesForKeys: nil)?
      .compactMap { $0 as? URL }
      .filter { $0.lastPathComponent == "Golden.endpoints.swift" && $0.path.contains("Fixture") }
    let file = try #require(generated?.first, "no Golden.endpoints.swift under \(outputs.path)")
    let golden = try String(
      contentsOf: fixtures.appendingPathComponent("Golden.swift.txt"), encoding: .utf8)
    #expect(try String(contentsOf: file, encoding: .utf8) == golden)

    let binary = Self.scratchPath.appendingPathComponent("debug/Fixture")
    let ran = try await run(binary, [])
    #expect(ran.status == 0)
    #expect(
      ran.output == """
        GET https://api.example.test/v2/user/check/%2B86%20138?lang=zh&page_size=20 say "hi"
        DELETE https://api.example.test/v2/users/7/devices/a%20b ["fixture-devices"]

        """)
    print("fixture package, good spec: \(ContinuousClock.now - started)")
  }

  @Test("a bad spec fails swift build with the diagnostic on the spec's line")
  func badSpec() async throws {
    let started = ContinuousClock.now
    var text = try String(
      contentsOf: fixtures.appendingPathComponent("Golden.endpoints.json"), encoding: .utf8)
    // Line 18 of the golden spec is `      "method": "GET",` of Users.check; misspell a key there.
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    #expect(lines[17] == #"      "method": "GET","#)
    lines[17] = #"      "methdo": "GET","#
    text = lines.joined(separator: "\n")
    let package = try makePackage(spec: Data(text.utf8))
    defer { try? FileManager.default.removeItem(at: package.root.deletingLastPathComponent()) }
    let result = try await build(package.root)
    #expect(result.status != 0)
    let spec = package.spec.resolvingSymlinksInPath().path
    #expect(
      result.combined.contains("\(spec):18:7: error: unknown key 'methdo' in an endpoint"),
      "swift build said:\n\(result.combined)")
    #expect(
      result.combined.contains(
        "\(spec):15:5: error: missing key 'method' in endpoint 'Users.check'"),
      "swift build said:\n\(result.combined)")
    print("fixture package, bad spec: \(ContinuousClock.now - started)")
  }
}
