import Courier
import CourierTesting
import Foundation
import Testing

@testable import CourierURLSession

/// What a proxy URL from the environment may leave in an error of ``URLSessionTransport``:
/// libcurl inside FoundationNetworking repeats one it cannot use whole, credentials included.
@Suite("URLSessionTransport and the environment's proxy password", .timeLimit(.minutes(5)))
struct ProxyPasswordTests {
  @Test("the password of a proxy URL in the environment never reaches an error")
  func environmentProxyPasswordStaysOut() async {
    // In a child process: setting http_proxy here would send the requests of the suites
    // running beside this one through it.
    _ = await withTaskExecutorPreference(OwnThreadExecutor.shared) {
      await #expect(processExitsWith: .success) {
        try await ProxyPasswordTests.environmentPasswordScenario()
      }
    }
  }

  /// Proxy URLs libcurl refuses, whose text its error message repeats.
  static func environmentPasswordScenario() async throws {
    let secret = "hunter2-\(UUID().uuidString)"
    let values = [
      "foo://courier:\(secret)@127.0.0.1:1", "http://courier:\(secret)@127.0.0.1:99999",
      "courier:\(secret)@127.0.0.1:99999",
    ]
    for value in values {
      setenv("http_proxy", value, 1)
      let transport = URLSessionTransport()
      defer { transport.shutdown() }
      let url = try #require(URL(string: "http://127.0.0.1:9/"))
      do {
        _ = try await Client(baseURL: url, transport: transport, locale: "en")
          .send(Endpoint<Void>(.get, "never"))
        Issue.record("no error")
      } catch {
        var dumped = ""
        dump(error, to: &dumped)
        for text in ["\(error)", error.debugDescription, dumped] {
          try #require(
            !text.contains(secret), "\(text.replacingOccurrences(of: secret, with: "<the secret>"))"
          )
        }
      }
    }
  }
}
