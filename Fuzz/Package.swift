// swift-tools-version: 5.4
// 5.4 on purpose: from 5.5 on, SwiftPM renames an executable's entry point to `<Module>_main`
// and links with `--defsym main=<Module>_main`, which leaves libFuzzer's own `main` out. The
// targets are still compiled in the Swift 6 language mode (see `fuzzSettings`).
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

let fuzzSettings: [SwiftSetting] = [.unsafeFlags(["-parse-as-library", "-swift-version", "6"])]

/// Fuzz target name → the Courier products it exercises.
let fuzzTargets: [(name: String, products: [String])] = [
  ("FuzzGzip", ["CourierGzip", "CourierCore"]),
  ("FuzzEnvelope", ["CourierCore"]),
  ("FuzzJSONDecoding", ["CourierCore"]),
  ("FuzzHeaders", ["CourierCore"]),
  ("FuzzURLBuilder", ["CourierCore"]),
  ("FuzzRequestReader", ["CourierTesting", "CourierCore"]),
]

let package = Package(
  name: "CourierFuzz",
  products: fuzzTargets.map { .executable(name: $0.name, targets: [$0.name]) },
  dependencies: [.package(path: "..")],
  targets: fuzzTargets.map { target in
    .executableTarget(
      name: target.name,
      dependencies: target.products.map { .product(name: $0, package: courier) },
      path: "Sources/\(target.name)",
      swiftSettings: fuzzSettings
    )
  }
)
