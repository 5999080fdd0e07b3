import CCourierCurl
import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// How CourierCurl finds libcurl: loaded at run time, so that Courier builds without libcurl's
/// development headers, with its declarations of libcurl's ABI checked against those headers
/// wherever they exist, and a clear error where the library is missing.
@Suite("libcurl, loaded at run time", .timeLimit(.minutes(1)))
struct CurlLibraryTests {
  /// Where the system's compiler finds `<curl/curl.h>` on the systems CI runs.
  static let headerPaths = [
    "/usr/include/curl/curl.h", "/usr/include/x86_64-linux-gnu/curl/curl.h",
    "/usr/include/aarch64-linux-gnu/curl/curl.h", "/usr/local/include/curl/curl.h",
  ]

  @Test("the ABI check compiled against <curl/curl.h> wherever the header exists")
  func checkedWhereHeadersExist() {
    let headerExists = Self.headerPaths.contains { FileManager.default.fileExists(atPath: $0) }
    #expect(
      (courier_curl_abi_checked == 1) == headerExists,
      "header present: \(headerExists); checked at build time: \(courier_curl_abi_checked)")
  }

  @Test("libcurl loads, and reports a version of 7.85 or newer")
  func loads() {
    let failure = courier_curl_load_failure().map { String(cString: $0) }
    #expect(failure == nil)
    #expect(courier_curl_version_num() >= 0x07_55_00)
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
    #expect(text(message) == "libz.so.1 has no curl_global_init: it is not libcurl 7.85 or newer")
  }

  @Test("the library the process runs with passes the same probe")
  func realLibrary() {
    var message = [CChar](repeating: 0, count: 512)
    #expect(courier_curl_try_load("libcurl.so.4", &message, message.count) == 0, "\(text(message))")
  }

  @Test("without libcurl, CurlTransport fails each request with an error that names it")
  func clearErrorWithoutLibcurl() async throws {
    // In a child process: the library is loaded once per process.
    let result = await withTaskExecutorPreference(ExitTestExecutor.shared) {
      await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
        try await withoutLibcurlScenario()
      }
    }
    if let result, result.exitStatus != .exitCode(EXIT_SUCCESS) {
      Issue.record(
        "the child said: \(String(decoding: result.standardErrorContent, as: UTF8.self))")
    }
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
