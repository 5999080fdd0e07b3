// swift-tools-version: 6.2
import Foundation
import PackageDescription

// libFuzzer targets for Courier, kept out of the root package so that its `swift build`,
// `swift test` and consumers never see them. Build and run one with `Scripts/fuzz.sh TARGET
// SECONDS`, which passes `-sanitize=fuzzer,address` so that Courier's modules are instrumented
// too. Each target is one file defining `LLVMFuzzerTestOneInput`; libFuzzer supplies `main`.

/// The root package's identity is the name of the directory holding it (a path dependency),
/// which differs between checkouts (`Courier`, `wt-fuzz`, a CI workspace).
let courier = URL(fileURLWithPath: #filePath)
  .deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let fuzzSettings: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"])]

/// Fuzz target name → the Courier products it exercises.
let fuzzTargets: [(name: String, products: [String])] = [
  ("FuzzGzip", ["CourierGzip", "CourierCore"]),
  ("FuzzEnvelope", ["CourierCore"]),
  ("FuzzHeaders", ["CourierCore"]),
  ("FuzzURLBuilder", ["CourierCore"]),
  ("FuzzRequestReader", ["CourierTesting", "CourierCore"]),
]

let package = Package(
  name: "CourierFuzz",
  platforms: [.macOS(.v15)],
  products: fuzzTargets.map { .executable(name: $0.name, targets: [$0.name]) },
  dependencies: [.package(path: "..")],
  targets: fuzzTargets.map { target in
    .executableTarget(
      name: target.name,
      dependencies: target.products.map { .product(name: $0, package: courier) },
      path: "Sources/\(target.name)",
      swiftSettings: fuzzSettings
    )
  },
  swiftLanguageModes: [.v6]
)
