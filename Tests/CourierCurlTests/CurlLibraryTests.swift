import CCourierCurl
import Courier
import CourierTesting
import Foundation
import Testing

@testable import CourierCurl

#if canImport(Glibc)
  import Glibc
#endif

/// How CourierCurl finds libcurl: loaded at run time, so that Courier builds without libcurl's
/// development headers, with its declarations of libcurl's ABI checked against those headers
/// wherever they exist, and a clear error where the library is missing.
@Suite("libcurl, loaded at run time", .timeLimit(.minutes(5)))
struct CurlLibraryTests {
  /// Where the system's compiler finds `<curl/curl.h>` on the systems CI runs.
  static let isLinux: Bool = {
    #if os(Linux)
      true
    #else
      false
    #endif
  }()

  static let headerPaths = [
    "/usr/include/curl/curl.h", "/usr/include/x86_64-linux-gnu/curl/curl.h",
    "/usr/include/aarch64-linux-gnu/curl/curl.h", "/usr/local/include/curl/curl.h",
  ]

  @Test(
    "the ABI check compiled against <curl/curl.h> wherever the header exists",
    .enabled(if: Self.isLinux, "the header paths listed are Linux's"))
  func checkedWhereHeadersExist() {
    let headerExists = Self.headerPaths.contains { FileManager.default.fileExists(atPath: $0) }
    #expect(
      (courier_curl_abi_checked == 1) == headerExists,
      "header present: \(headerExists); checked at build time: \(courier_curl_abi_checked)")
  }

  @Test("libcurl loads, and reports a version of 7.68 or newer")
  func loads() {
    let failure = courier_curl_load_failure().map { String(cString: $0) }
    #expect(failure == nil)
    #expect(courier_curl_version_num() >= 0x07_44_00)
  }

  @Test("a library that is not there is named in the reason")
  func missingLibrary() {
    var message = [CChar](repeating: 0, count: 512)
    let status = courier_curl_try_load("libcourier-absent.so.4", &message, message.count)
    #expect(status == -1)
    #expect(text(message).contains("libcourier-absent.so.4"))
  }

  @Test("a library that is not libcurl is refused, naming the function it lacks")
  func notLibcurl() {
    var message = [CChar](repeating: 0, count: 512)
    let status = courier_curl_try_load("libz.so.1", &message, message.count)
    #expect(status == -1)
    #expect(text(message) == "libz.so.1 has no curl_global_init: it is not libcurl 7.68 or newer")
  }

  @Test("the library the process runs with passes the same probe")
  func realLibrary() {
    var message = [CChar](repeating: 0, count: 512)
    #expect(courier_curl_try_load("libcurl.so.4", &message, message.count) == 0, "\(text(message))")
  }

  @Test("without libcurl, CurlTransport fails each request with an error that names it")
  func clearErrorWithoutLibcurl() async throws {
    // In a child process: the library is loaded once per process.
    let result = await withTaskExecutorPreference(OwnThreadExecutor.shared) {
      await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
        try await withoutLibcurlScenario()
      }
    }
    if let result, result.exitStatus != .exitCode(EXIT_SUCCESS) {
      Issue.record(
        "the child said: \(String(decoding: result.standardErrorContent, as: UTF8.self))")
    }
  }

  @Test(
    "libcurl 7.81 (no CURLOPT_PROTOCOLS_STR) loads, and transfers restrict protocols by bitmask",
    .enabled(if: FakeLibcurl.compiler != nil, "needs a C compiler (clang or cc) on PATH"))
  func ubuntu2204Libcurl() async throws {
    let result = await withTaskExecutorPreference(OwnThreadExecutor.shared) {
      await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
        try await ubuntu2204LibcurlScenario()
      }
    }
    if let result, result.exitStatus != .exitCode(EXIT_SUCCESS) {
      Issue.record(
        "the child said: \(String(decoding: result.standardErrorContent, as: UTF8.self))")
    }
  }

  @Test("the protocol restriction: by name from 7.85, the bitmask before; both are libcurl's")
  func protocolRestriction() throws {
    let named = CurlTransfer.protocolRestriction(forVersion: 0x07_58_01)
    #expect(named.option == CURLOPT_PROTOCOLS_STR && named.names == "http,https")
    let bits = CurlTransfer.protocolRestriction(forVersion: 0x07_51_00)
    #expect(bits.option == CURLOPT_PROTOCOLS && bits.names == nil && bits.bits == 3)
    // The library this process runs accepts both forms.
    let easy = try #require(courier_curl_easy_init())
    defer { courier_curl_easy_cleanup(easy) }
    #expect(courier_curl_easy_setopt_long(easy, CURLOPT_PROTOCOLS, bits.bits) == CURLE_OK)
    let set = "http,https".withCString {
      courier_curl_easy_setopt_pointer(easy, CURLOPT_PROTOCOLS_STR, $0)
    }
    #expect(set == CURLE_OK)
  }

  @Test(
    "a libcurl older than 7.68 is refused when it loads, naming its version",
    .enabled(if: FakeLibcurl.compiler != nil, "needs a C compiler (clang or cc) on PATH"))
  func tooOldLibcurl() async throws {
    // In a child process: the library is loaded once per process.
    let result = await withTaskExecutorPreference(OwnThreadExecutor.shared) {
      await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
        try await tooOldLibcurlScenario()
      }
    }
    if let result, result.exitStatus != .exitCode(EXIT_SUCCESS) {
      Issue.record(
        "the child said: \(String(decoding: result.standardErrorContent, as: UTF8.self))")
    }
  }
}

/// A process told to load a libcurl 7.81 (Ubuntu 22.04's), which lacks
/// `CURLOPT_PROTOCOLS_STR`: it loads, and its transfers restrict protocols with the bitmask.
private func ubuntu2204LibcurlScenario() async throws {
  let library = try FakeLibcurl.build(version: "7.81.0", number: 0x07_51_00)
  defer {
    try? FileManager.default.removeItem(
      at: URL(fileURLWithPath: library).deletingLastPathComponent())
  }
  setenv("COURIER_LIBCURL", library, 1)
  #expect(courier_curl_load_failure() == nil)
  #expect(CurlTransfer.libcurlVersion == 0x07_51_00)
  #expect(CurlTransfer.protocolRestriction(forVersion: CurlTransfer.libcurlVersion).names == nil)
}

/// A process told to load a libcurl 7.67 (older than Ubuntu 20.04's), which has every function
/// Courier loads: the load fails, naming the version, and every request fails with a
/// `transport` error that says so, rather than later and less clearly.
private func tooOldLibcurlScenario() async throws {
  let library = try FakeLibcurl.build(version: "7.67.0", number: 0x07_43_00)
  defer {
    try? FileManager.default.removeItem(
      at: URL(fileURLWithPath: library).deletingLastPathComponent())
  }
  setenv("COURIER_LIBCURL", library, 1)
  let failure = courier_curl_load_failure().map { String(cString: $0) } ?? ""
  #expect(failure.contains("\(library) is libcurl 7.67.0, older than 7.68.0"), "\(failure)")
  let transport = CurlTransport()
  defer { transport.shutdown() }
  let client = Client.standard(
    baseURL: URL(string: "http://127.0.0.1:9/"), transport: transport, locale: "en")
  let error = await #expect(throws: CourierError.self) {
    _ = try await client.send(Endpoint<Data>(.get, "x"))
  }
  let text = error.map { String(reflecting: $0) } ?? ""
  #expect(error?.kind == .transport, "\(text)")
  #expect(text.contains("older than 7.68.0"), "\(text)")
}

/// A stand-in for an old libcurl, compiled for the test: every function Courier loads, the
/// version given, and `curl_easy_setopt` refusing `CURLOPT_PROTOCOLS_STR` (10318) with
/// `CURLE_UNKNOWN_OPTION` (48), as a libcurl before 7.85 does.
private enum FakeLibcurl {
  /// The first `clang` or `cc` on `PATH`.
  static let compiler: String? = {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    for name in ["clang", "cc"] {
      for directory in path.split(separator: ":") {
        let candidate = "\(directory)/\(name)"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
      }
    }
    return nil
  }()

  static let source = """
    #include <stdlib.h>
    struct info { unsigned age; const char *version; unsigned version_num; };
    static struct info info = {9, FAKE_VERSION, FAKE_NUMBER};
    int curl_global_init(long flags) { (void)flags; return 0; }
    struct info *curl_version_info(unsigned stamp) { (void)stamp; return &info; }
    void *curl_easy_init(void) { return calloc(1, 64); }
    void curl_easy_cleanup(void *easy) { free(easy); }
    void curl_easy_reset(void *easy) { (void)easy; }
    int curl_easy_setopt(void *easy, unsigned option, ...) { (void)easy; return option == 10318 ? 48 : 0; }
    int curl_easy_getinfo(void *easy, unsigned info, ...) { (void)easy; (void)info; return 0; }
    const char *curl_easy_strerror(unsigned code) { (void)code; return "fake"; }
    int curl_easy_pause(void *easy, int bitmask) { (void)easy; (void)bitmask; return 0; }
    void *curl_multi_init(void) { return calloc(1, 64); }
    int curl_multi_cleanup(void *multi) { free(multi); return 0; }
    int curl_multi_add_handle(void *multi, void *easy) { (void)multi; (void)easy; return 0; }
    int curl_multi_remove_handle(void *multi, void *easy) { (void)multi; (void)easy; return 0; }
    void *curl_multi_info_read(void *multi, int *left) { (void)multi; *left = 0; return NULL; }
    int curl_multi_socket_action(void *multi, int socket, int events, int *running) {
      (void)multi; (void)socket; (void)events; *running = 0; return 0;
    }
    int curl_multi_setopt(void *multi, unsigned option, ...) { (void)multi; (void)option; return 0; }
    void *curl_slist_append(void *list, const char *line) { (void)list; (void)line; return calloc(1, 16); }
    void curl_slist_free_all(void *list) { free(list); }
    """

  /// Compiles the stand-in into a temporary directory and returns the library's path.
  static func build(version: String, number: UInt32) throws -> String {
    let compiler = try #require(compiler)
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("courier-fake-libcurl-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let sourceFile = directory.appendingPathComponent("fake.c")
    let library = directory.appendingPathComponent("libcurl-fake.so").path
    try source.write(to: sourceFile, atomically: true, encoding: .utf8)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: compiler)
    process.arguments = [
      "-shared", "-fPIC", "-DFAKE_VERSION=\"\(version)\"", "-DFAKE_NUMBER=\(number)",
      "-o", library, sourceFile.path,
    ]
    try process.run()
    process.waitUntilExit()
    try #require(process.terminationStatus == 0, "\(compiler) could not build the stand-in")
    return library
  }
}

/// A process told to load a libcurl that is not there: every request fails at once with a
/// `transport` error whose description names the library and how to fix it.
private func withoutLibcurlScenario() async throws {
  setenv("COURIER_LIBCURL", "/nonexistent/libcurl.so.4", 1)
  #expect(courier_curl_load_failure() != nil)
  #expect(courier_curl_version_num() == 0)
  #expect(CurlErrorMapping.summary(forCode: 7) == "unknown error")
  let transport = CurlTransport()
  defer { transport.shutdown() }
  let client = Client.standard(
    baseURL: URL(string: "http://127.0.0.1:9/"), transport: transport, locale: "en")
  for _ in 0..<2 {
    let error = await #expect(throws: CourierError.self) {
      _ = try await client.send(Endpoint<Data>(.get, "x"))
    }
    let text = error.map { String(reflecting: $0) } ?? ""
    #expect(error?.kind == .transport)
    #expect(error?.attempts == 1)
    #expect(text.contains("libcurl could not be loaded (/nonexistent/libcurl.so.4: "), "\(text)")
    #expect(text.contains("Debian and Ubuntu: libcurl4) or unset COURIER_LIBCURL"), "\(text)")
  }
}

/// The text in a C string buffer, up to its terminating zero.
private func text(_ buffer: [CChar]) -> String {
  String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
