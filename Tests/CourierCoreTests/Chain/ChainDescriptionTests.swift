import CourierCore
import CourierTesting
import Foundation
import Testing

@Suite("Client.chainDescription", .timeLimit(.minutes(5)))
struct ChainDescriptionTests {
  @Test(
    "lists the middleware in order with their settings, then the added validation and the transport"
  )
  func standardMiddleware() throws {
    var defaults = HeadersMiddleware.standardDefaults
    try defaults.add("X-API-Key", "SECRET-KEY-42")
    let client = Client(
      transport: StubTransport(),
      middleware: [
        HeadersMiddleware(
          defaults: defaults, providers: [try HeaderProvider("X-Device-ID") { _ in "device-7" }]),
        AuthMiddleware(provider: CountingTokens()),
        RequestIDMiddleware(),
        RetryMiddleware(),
        TimeoutMiddleware(attempt: .milliseconds(1500), overall: nil),
        LoggingMiddleware(level: .headers, sink: InMemoryLogSink()),
      ])
    let lines = client.chainDescription.split(separator: "\n").map(String.init)
    #expect(
      lines == [
        "1. HeadersMiddleware(defaults: User-Agent, Accept, X-API-Key; providers: X-Device-ID)",
        "2. AuthMiddleware(provider: CountingTokens; at most 3 refreshes per 60 s)",
        "3. RequestIDMiddleware(traceparent: on, X-Request-ID: off)",
        "4. RetryMiddleware(3 attempts; backoff 500 ms × 2, full jitter, cap 30 s; Retry-After "
          + "up to 60 s; statuses 408, 429, 500, 502, 503, 504; budget 10 + 20 % of requests "
          + "per 10 s)",
        "5. TimeoutMiddleware(attempt 1.5 s; overall none)",
        "6. LoggingMiddleware(headers; sink InMemoryLogSink; redaction: 6 headers, 11 query "
          + "parameters, 7 body keys; text bodies up to 4 KiB)",
        "7. ResponseValidation(status and envelope checks of the response pipeline) — added by "
          + "the client",
        "→ StubTransport(0 routes; 0 queued responses; fallback 404)",
      ])
    // A header's value never appears, whatever it holds.
    #expect(!client.chainDescription.contains("SECRET-KEY-42"))
  }

  @Test("a middleware without a description shows its type name only, never its properties")
  func undescribedMiddleware() {
    struct SigningMiddleware: Middleware {
      let secret = "SIGNING-SECRET"
      func intercept(_ request: Request, next: Next) async throws -> Response {
        try await next(request)
      }
    }
    let client = Client(
      transport: StubTransport(), middleware: [SigningMiddleware(), ResponseValidation()])
    #expect(
      client.chainDescription
        == """
        1. SigningMiddleware
        2. ResponseValidation(status and envelope checks of the response pipeline)
        → StubTransport(0 routes; 0 queued responses; fallback 404)
        """)
  }

  @Test(
    "durations and sizes read as people write them",
    arguments: [
      (Duration.milliseconds(250), "250 ms"), (.milliseconds(500), "500 ms"), (.seconds(1), "1 s"),
      (.milliseconds(1500), "1.5 s"), (.seconds(90), "90 s"), (.seconds(120), "2 min"),
      (.seconds(86_400), "1440 min"),
    ])
  func durations(duration: Duration, text: String) {
    #expect(DescriptionText.duration(duration) == text)
  }
}
