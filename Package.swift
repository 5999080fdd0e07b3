// swift-tools-version: 6.2
import PackageDescription

// MARK: - Settings shared by every target

/// Swift 6 language mode is the package default; these settings add the checks we hold
/// every target to.
let strictSettings: [SwiftSetting] = [
  .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
  name: "Courier",
  platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11)],

  // MARK: - Products

  products: [
    .library(name: "Courier", targets: ["Courier"]),
    .library(name: "CourierCore", targets: ["CourierCore"]),
    .library(name: "CourierGzip", targets: ["CourierGzip"]),
    .library(name: "CourierURLSession", targets: ["CourierURLSession"]),
    .library(name: "CourierCurl", targets: ["CourierCurl"]),
    .library(name: "CourierReachability", targets: ["CourierReachability"]),
    .library(name: "CourierTesting", targets: ["CourierTesting"]),
    .executable(name: "weather-demo", targets: ["WeatherDemo"]),
    .executable(name: "quick-start", targets: ["QuickStart"]),
    .executable(name: "generated-client", targets: ["GeneratedClient"]),
    .executable(name: "streaming-chat", targets: ["StreamingChat"]),
    .executable(name: "courier-bench", targets: ["CourierBench"]),
    .executable(name: "courier-endpoints", targets: ["courier-endpoints"]),
    .plugin(name: "CourierEndpointsPlugin", targets: ["CourierEndpointsPlugin"]),
  ],

  // MARK: - Library targets

  targets: [
    .target(name: "CourierCore", swiftSettings: strictSettings),
    .systemLibrary(
      name: "CCourierZlib",
      pkgConfig: "zlib",
      providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
    ),
    .target(
      name: "CourierGzip",
      dependencies: ["CourierCore", "CCourierZlib"],
      swiftSettings: strictSettings
    ),
    // libcurl's own words for replies that are not valid HTTP, shared by the two transports
    // built on libcurl (directly, and through FoundationNetworking on Linux): kept out of
    // CourierCore, which knows no transport.
    .target(name: "CourierLibcurlSupport", swiftSettings: strictSettings),
    .target(
      name: "CourierURLSession",
      dependencies: ["CourierCore", "CourierLibcurlSupport"],
      swiftSettings: strictSettings
    ),
    // libcurl, loaded at run time (dlopen of libcurl.so.4): Courier declares the part of
    // libcurl's stable ABI it uses, so it builds without libcurl's development headers, and
    // checks those declarations against <curl/curl.h> at compile time wherever it exists.
    .target(name: "CCourierCurl"),
    .target(
      name: "CourierCurl",
      dependencies: ["CourierCore", "CCourierCurl", "CourierLibcurlSupport"],
      swiftSettings: strictSettings
    ),
    // The rtnetlink types and macros Glibc's module lacks, for the Linux path monitor, and the
    // few _GNU_SOURCE calls (setns, pipe2, accept4) that Courier's Linux code needs.
    .target(name: "CCourierLinux"),
    .target(
      name: "CourierReachability",
      dependencies: ["CourierCore", "CCourierLinux"],
      swiftSettings: strictSettings
    ),
    .target(
      name: "Courier",
      dependencies: [
        "CourierCore", "CourierGzip", "CourierReachability", "CourierURLSession", "CourierCurl",
      ],
      swiftSettings: strictSettings
    ),
    .target(
      name: "CourierTesting",
      dependencies: ["CourierCore", "CourierGzip", "CourierReachability", "CCourierLinux"],
      swiftSettings: strictSettings
    ),

    // MARK: - Plugins and their tools

    // Reads `*.endpoints.json` specs (with line and column of every key) and writes Swift.
    .target(name: "CourierEndpointsGenerator", swiftSettings: strictSettings),
    .executableTarget(
      name: "courier-endpoints",
      dependencies: ["CourierEndpointsGenerator"],
      swiftSettings: strictSettings
    ),
    .plugin(
      name: "CourierEndpointsPlugin",
      capability: .buildTool(),
      dependencies: ["courier-endpoints"]
    ),

    // MARK: - Examples and benchmarks

    .executableTarget(
      name: "WeatherDemo",
      dependencies: ["Courier", "CourierTesting"],
      path: "Examples/WeatherDemo",
      swiftSettings: strictSettings
    ),
    .executableTarget(
      name: "QuickStart",
      dependencies: ["Courier", "CourierTesting"],
      path: "Examples/QuickStart",
      swiftSettings: strictSettings
    ),
    .executableTarget(
      name: "StreamingChat",
      dependencies: ["Courier", "CourierTesting"],
      path: "Examples/StreamingChat",
      swiftSettings: strictSettings
    ),
    .executableTarget(
      name: "GeneratedClient",
      dependencies: ["Courier", "CourierTesting"],
      path: "Examples/GeneratedClient",
      swiftSettings: strictSettings,
      plugins: ["CourierEndpointsPlugin"]
    ),
    .target(
      name: "SigningMiddleware",
      dependencies: ["CourierCore"],
      path: "Examples/SigningMiddleware/Sources",
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "SigningMiddlewareTests",
      dependencies: ["SigningMiddleware", "CourierCore", "CourierTesting"],
      path: "Examples/SigningMiddleware/Tests",
      swiftSettings: strictSettings
    ),
    .target(
      name: "TestingWithStubs",
      dependencies: ["Courier"],
      path: "Examples/TestingWithStubs/Sources",
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "TestingWithStubsTests",
      dependencies: ["TestingWithStubs", "Courier", "CourierTesting"],
      path: "Examples/TestingWithStubs/Tests",
      swiftSettings: strictSettings
    ),
    .target(name: "CAllocationCounter", path: "Benchmarks/CAllocationCounter"),
    .executableTarget(
      name: "CourierBench",
      dependencies: ["Courier", "CourierTesting", "CAllocationCounter", "CCourierZlib"],
      path: "Benchmarks/CourierBench",
      swiftSettings: strictSettings
    ),

    // MARK: - Tests

    // Caps how many test cases the test binary runs at once (see its source).
    .target(name: "CTestRunWidth", path: "Tests/CTestRunWidth"),
    .testTarget(
      name: "CourierCoreTests",
      dependencies: ["CourierCore", "CourierTesting", "CTestRunWidth"],
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "CourierGzipTests",
      dependencies: ["CourierGzip", "CourierCore", "CourierTesting", "Courier"],
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "CourierURLSessionTests",
      dependencies: ["Courier", "CourierTesting"],
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "CourierCurlTests",
      dependencies: [
        "Courier", "CourierCurl", "CCourierCurl", "CourierLibcurlSupport", "CourierTesting",
      ],
      swiftSettings: strictSettings
    ),
    // The chain, the pipeline and the preset over a real transport and MockServer: tests
    // that send over the wire without being about the transport.
    .testTarget(
      name: "CourierIntegrationTests",
      dependencies: ["Courier", "CourierTesting"],
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "TransportConformanceTests",
      dependencies: ["Courier", "CourierTesting"],
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "CourierReachabilityTests",
      // Courier and CCourierLinux: the preset over CurlTransport inside network namespaces.
      dependencies: [
        "CourierReachability", "CourierCore", "CourierTesting", "Courier", "CCourierLinux",
      ],
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "CourierInteropTests",
      // CourierTesting: the executor that the proxy environment's child process waits on.
      dependencies: ["Courier", "CourierTesting"],
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "CourierEndpointsTests",
      // CourierCore: the tests type-check generated code against its module.
      dependencies: ["CourierEndpointsGenerator", "courier-endpoints", "CourierCore"],
      exclude: ["Fixtures"],
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "CourierTestingTests",
      dependencies: ["CourierTesting"],
      swiftSettings: strictSettings
    ),
  ],
  swiftLanguageModes: [.v6]
)
