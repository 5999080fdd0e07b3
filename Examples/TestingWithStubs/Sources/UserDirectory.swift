import Courier
import Foundation

/// App code to be tested: looks a phone number up on the account service and says, in words
/// for the screen, what happened.
///
/// It takes its transport and clock from the outside, so production passes
/// `URLSessionTransport()` and the system clock, and tests pass a `StubTransport`, a
/// `MockServer`'s URL or a `TestClock` — the code under test stays the same. Nothing here
/// knows it is being tested.
public struct UserDirectory: Sendable {
  /// The client every call goes through.
  public let client: Client

  /// Creates the directory.
  ///
  /// - Parameters:
  ///   - baseURL: The account service, such as `https://api.example.com/`.
  ///   - transport: `URLSessionTransport()` in the app, a stub in tests.
  ///   - clock: The clock retry waits on; a `TestClock` in tests.
  public init(
    baseURL: URL, transport: any Transport = URLSessionTransport(),
    clock: any Clock<Duration> = ContinuousClock()
  ) {
    client = Client(
      baseURL: baseURL, transport: transport,
      // Three attempts, 1 s then 2 s apart (before jitter); no jitter, so tests know the waits.
      middleware: [
        RetryMiddleware(
          policy: RetryPolicy(baseDelay: .seconds(1)), clock: clock, jitter: { $0 })
      ],
      pipeline: .envelope(.codeZero))
  }

  /// The answer of `GET v1/user/check/{phone}`.
  struct PhoneCheck: Decodable, Sendable {
    let registered: Bool
  }

  /// What the screen shows for `phone`: "registered", "not registered", or why the check
  /// failed, in words a person understands.
  public func status(of phone: String) async -> String {
    do {
      let check = try await client.send(
        Endpoint<PhoneCheck>(.get, "v1/user/check/{phone}").parameter("phone", phone))
      return check.registered ? "registered" : "not registered"
    } catch {
      return error.reason
    }
  }
}
