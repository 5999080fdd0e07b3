import CourierCore
import CourierTesting
import Foundation
import Testing

@Suite("Retry-After: what the server says is clamped and never traps", .timeLimit(.minutes(5)))
struct RetryAfterTests {
  /// 2015-10-21 07:28:00 GMT, the date RFC 9110 uses in its examples.
  static let now = Date(timeIntervalSince1970: 1_445_412_480)

  static func response429(retryAfter: String) throws -> StubResponse {
    var response = StubResponse.status(429)
    try response.headers.add(.retryAfter, retryAfter)
    return response
  }

  @Test("429 with Retry-After: Int.max through a client: a one-day wait and a sane reason")
  func intMaxThroughClient() async throws {
    let response = try Self.response429(retryAfter: "9223372036854775807")
    for (locale, text) in [
      ("en", "Too many requests. Please try again in 86400 seconds."),
      ("zh-Hans", "请求过于频繁，请在 86400 秒后重试"),
      ("zh-Hant", "請求過於頻繁，請於 86400 秒後再試"),
    ] {
      let client = stubClient(StubTransport([response]), locale: locale)
      let error = await courierError { try await client.send(Endpoint<Void>(.get, "x")) }
      #expect(error?.kind == .httpStatus)
      #expect(error?.status == 429)
      #expect(error?.retryAfter == RetryAfter.maximumWait)
      #expect(error?.reason == text)
    }
  }

  @Test(
    "delay-seconds: digits only, clamped to one day",
    arguments: [
      ("0", Duration.zero), ("120", .seconds(120)), (" 30 ", .seconds(30)),
      ("0030", .seconds(30)), ("86399", .seconds(86_399)), ("86400", .seconds(86_400)),
      ("86401", .seconds(86_400)), ("9223372036854775807", .seconds(86_400)),
      ("99999999999999999999999999999999", .seconds(86_400)),
    ] as [(String, Duration)])
  func delaySeconds(value: String, expected: Duration) {
    #expect(RetryAfter.parse(value, now: Self.now) == expected)
  }

  @Test(
    "malformed values are ignored",
    arguments: [
      "-5", "+5", "-9223372036854775808", "1.5", "0.5", "1e3", "0x10", "soon", "", "   ",
      "١٢٠", "12 0", "NaN", "inf", "Wed, 21 Oct 2015", "Wed, 21 Oct 2015 07:28:00 GMT junk",
    ])
  func malformed(value: String) {
    #expect(RetryAfter.parse(value, now: Self.now) == nil)
  }

  @Test(
    "HTTP-dates: past is zero, future is exact to the millisecond, far future is one day",
    arguments: [
      ("Wed, 21 Oct 2015 07:28:30 GMT", Duration.seconds(30)),
      ("Wednesday, 21-Oct-15 07:29:00 GMT", .seconds(60)),
      ("Wed Oct 21 07:38:00 2015", .seconds(600)),
      ("Wed, 21 Oct 2015 07:00:00 GMT", .zero),
      ("Thu, 22 Oct 2015 07:28:00 GMT", .seconds(86_400)),
      ("Fri, 23 Oct 2015 07:28:00 GMT", .seconds(86_400)),
      ("Fri, 31 Dec 9999 23:59:59 GMT", .seconds(86_400)),
      ("Mon, 01 Jan 0001 00:00:00 GMT", .zero),
    ] as [(String, Duration)])
  func httpDates(value: String, expected: Duration) {
    #expect(RetryAfter.parse(value, now: Self.now) == expected)
  }

  @Test("a year past 9999 is clamped or refused, never a huge wait")
  func hugeYears() {
    for year in ["99999", "999999", "9999999999", "292277026596"] {
      let wait = RetryAfter.parse("Wed, 21 Oct \(year) 07:28:00 GMT", now: Self.now)
      #expect(wait.map { $0 <= RetryAfter.maximumWait } ?? true, "year \(year)")
    }
  }

  @Test("an extreme or NaN current time does not trap")
  func extremeNow() {
    let date = "Wed, 21 Oct 2015 07:28:00 GMT"
    let farPast = Date(timeIntervalSinceReferenceDate: -1e300)
    let farFuture = Date(timeIntervalSinceReferenceDate: 1e300)
    #expect(RetryAfter.parse(date, now: farPast) == RetryAfter.maximumWait)
    #expect(RetryAfter.parse(date, now: farFuture) == .zero)
    #expect(RetryAfter.parse(date, now: Date(timeIntervalSinceReferenceDate: -.infinity)) != nil)
    #expect(RetryAfter.parse(date, now: Date(timeIntervalSinceReferenceDate: .nan)) == .zero)
  }

  @Test("the reason's {seconds} never traps, whatever wait a middleware sets by hand")
  func fillNeverTraps() throws {
    let response = Response(
      status: 429, request: Request(method: .get, url: testBase))
    for (wait, seconds) in [
      (Duration.seconds(Int64.max), "86400"), (.seconds(Int64.min), nil),
      (.milliseconds(1), "1"), (.milliseconds(1500), "2"), (.seconds(-3), nil), (.zero, nil),
    ] as [(Duration, String?)] {
      var error = CourierError(kind: .httpStatus, response: response)
      error.retryAfter = wait
      let reason = ReasonCatalog.standard.reason(for: error, locale: "en")
      if let seconds {
        #expect(reason == "Too many requests. Please try again in \(seconds) seconds.")
      } else {
        #expect(reason == "Too many requests. Please wait a moment and try again.")
      }
    }
  }
}
