import Courier
import CourierTesting
import Foundation
import Synchronization

/// `weather-demo`: asks a weather API for two cities and one unknown city, and shows how
/// Courier turns every failure into one readable sentence.
///
/// The client is `Client.standard`, Courier's standard middleware, outermost first: default
/// headers (with the chosen language as `Accept-Language`), a W3C `traceparent` per request,
/// retry, reachability, per-attempt and overall timeouts, logging (`--verbose`: one line per
/// attempt on standard error, with the api key shown as `appid=***`) and gzip (the embedded
/// server compresses its answers). `--chain` prints that chain.
///
/// By default it serves the API itself from an in-process `MockServer` on 127.0.0.1, so it
/// runs offline. That server rejects requests without a `traceparent` or a Courier
/// `User-Agent`, and fails the first request for Shanghai with `503`, so the retry shows.
/// `--base-url URL` points the demo at a real server with the same shape (OpenWeatherMap's
/// `weather?q=<city>`; add `--api-key KEY` for its `appid`), and `--lang zh-Hans` prints
/// reasons in Simplified Chinese. It sends with the preset's own default transport
/// (`Client.standardTransport()`: `CurlTransport` on Linux, `URLSessionTransport` elsewhere);
/// `--transport urlsession` or `--transport curl` picks one: the output is the same.
@main
struct WeatherDemo {
  static func main() async {
    let options: Options
    do {
      options = try Options(CommandLine.arguments.dropFirst())
    } catch {
      printError("weather-demo: \(error)\n\(Options.usage)")
      exit(2)
    }
    if options.help {
      print(Options.usage)
      return
    }

    var server: MockServer?
    let baseURL: URL
    if let url = options.baseURL {
      baseURL = url
    } else {
      do {
        let mock = try MockServer()
        mock.recordsRequests = false
        let api = WeatherAPI()
        mock.setDispatcher { api.respond($0) }
        server = mock
        baseURL = mock.baseURL
      } catch {
        printError("weather-demo: cannot start the embedded server: \(error)")
        exit(1)
      }
    }
    defer { server?.shutdown() }

    // No --transport: the preset's own default, whatever this platform's is.
    let transport = options.transport?.make() ?? Client.standardTransport()
    defer { Options.TransportChoice.shutDown(transport) }
    let client = WeatherClient(
      baseURL: baseURL, transport: transport, locale: options.language, apiKey: options.apiKey,
      verbose: options.verbose)
    print(
      "Courier weather demo: \(server == nil ? "server" : "embedded server") \(baseURL.absoluteString),"
        + " language \(client.locale), transport \(Options.TransportChoice(of: transport).rawValue)"
    )
    if options.chain {
      print("Chain, outermost first:")
      for line in client.client.chainDescription.split(separator: "\n") { print("  \(line)") }
    }
    for city in ["Beijing", "Shanghai", "Atlantis"] {
      await show(city) { try await client.weather(in: city) }
    }
    // A port nobody listens on: the same code path as a server that is down.
    // Refused connections are retried too, but fail fast: three attempts take well under a
    // second.
    let offline = WeatherClient(
      baseURL: URL(string: "http://127.0.0.1:9/")!, transport: transport,
      locale: options.language, apiKey: nil, verbose: options.verbose)
    await show("Beijing (server down)") { try await offline.weather(in: "Beijing") }
  }

  static func show(
    _ label: String, _ fetch: @Sendable () async throws -> Decoded<Weather>
  ) async {
    do {
      let decoded = try await fetch()
      let weather = decoded.value
      let celsius = weather.main.temp - 273.15
      let description = weather.weather.first?.description ?? "?"
      let attempts = decoded.response.attempts
      let note = attempts > 1 ? "  (\(attempts) attempts)" : ""
      print("  \(weather.name): \(String(format: "%.1f", celsius)) °C, \(description)\(note)")
    } catch let error as CourierError {
      var detail = "kind \(error.kind)"
      if let status = error.status { detail += ", status \(status)" }
      if let code = error.code { detail += ", code \(code)" }
      if error.attempts > 1 { detail += ", \(error.attempts) attempts" }
      print("  \(label): \(error.reason)  [\(detail)]")
    } catch {
      print("  \(label): \(error.localizedDescription)")
    }
  }

  static func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
  }
}

/// The parts of the weather API's answer the demo prints.
struct Weather: Decodable, Sendable {
  struct Main: Decodable, Sendable { let temp: Double }
  struct Condition: Decodable, Sendable { let description: String }
  let name: String
  let main: Main
  let weather: [Condition]
}

/// One client for the whole API, built once.
struct WeatherClient: Sendable {
  let client: Client
  let apiKey: String?

  var locale: String { client.locale }

  init(baseURL: URL, transport: any Transport, locale: String?, apiKey: String?, verbose: Bool) {
    // OpenWeatherMap's envelope: `cod` is 200 (a number) on success and "404" (a string)
    // on failure, with the text in `message`; the payload is the whole body.
    let rule = EnvelopeRule(
      code: "cod", success: [200], message: ["message"], payload: nil, matchesAcrossTypes: true)
    let language = ReasonCatalog.standard.bestLocale(
      for: locale.map { [$0] } ?? ReasonCatalog.processPreferredLanguages)
    // OpenWeatherMap takes its key as the `appid` query parameter, which the standard
    // redaction does not know: add it, so a log shows `appid=***`.
    var redaction = Redaction.standard
    redaction.queryParameters.insert("appid")
    // The standard preset (headers, request id, retry, reachability, timeout, logging, gzip),
    // with the demo's own settings.
    client = Client.standard(
      baseURL: baseURL, transport: transport, pipeline: .envelope(rule), locale: language
    ) {
      // User-Agent `Courier/…` and Accept: application/json, and the server answers in the
      // client's language.
      $0.headers = HeadersMiddleware(
        providers: [HeaderProvider(.acceptLanguage) { _ in language }])
      // The preset records a trace id for logs and errors; this server reads it, so send it.
      $0.requestID?.sendsTraceparent = true
      // The standard policy (3 attempts; 408, 429, 5xx, refused, timed out …) but a 0.2 s
      // base delay instead of 0.5 s, so the demo stays fast.
      $0.retry = RetryMiddleware(policy: RetryPolicy(baseDelay: .milliseconds(200)))
      $0.timeout = TimeoutMiddleware(attempt: .seconds(5), overall: .seconds(15))
      // Every attempt is logged, with its body already decoded from gzip.
      $0.logging = LoggingMiddleware(
        level: verbose ? .basic : .none, sink: StandardErrorLogSink(), redaction: redaction)
    }
    self.apiKey = apiKey
  }

  func weather(in city: String) async throws(CourierError) -> Decoded<Weather> {
    var endpoint = Endpoint<Weather>(.get, "weather").query("q", city)
    if let apiKey { endpoint = endpoint.query("appid", apiKey) }
    return try await client.response(for: endpoint)
  }
}

/// The embedded server's API: a few cities, and OpenWeatherMap's error envelope for the rest,
/// sent with `200 OK` as many business APIs do, so the client must read the envelope.
///
/// It answers `400` to a request without a valid `traceparent` or a `User-Agent` starting with
/// `Courier/` (so the headers and request id middleware are proven), and `503` to the first
/// request for Shanghai (so the retry is seen).
final class WeatherAPI: Sendable {
  static let cities: [String: (temp: Double, description: String, chinese: String)] = [
    "beijing": (305.4, "clear sky", "晴"),
    "shanghai": (301.2, "light rain", "小雨"),
  ]
  /// The city whose first request fails.
  static let flakyCity = "shanghai"

  private let flakyCityFailed = Mutex(false)

  func respond(_ request: RecordedRequest) -> MockResponse {
    guard request.method == "GET", request.path == "/weather" else {
      return .json(#"{"cod":"404","message":"Internal error"}"#, status: 404)
    }
    guard request.header("User-Agent")?.hasPrefix("Courier/") == true else {
      return .json(#"{"cod":"400","message":"no Courier User-Agent"}"#, status: 400)
    }
    guard let traceparent = request.header("traceparent"),
      TraceContext(traceparent: traceparent) != nil
    else {
      return .json(#"{"cod":"400","message":"no valid traceparent"}"#, status: 400)
    }
    let chinese = request.header("Accept-Language")?.hasPrefix("zh") == true
    let query = URLComponents(string: request.target)?.queryItems ?? []
    let city = query.first { $0.name == "q" }?.value ?? ""
    if city.lowercased() == Self.flakyCity {
      let isFirst = flakyCityFailed.withLock { failed in
        defer { failed = true }
        return !failed
      }
      if isFirst { return .json(#"{"cod":"503","message":"try again"}"#, status: 503) }
    }
    guard let known = Self.cities[city.lowercased()] else {
      let message = chinese ? "未找到该城市" : "city not found"
      return .json(#"{"cod":"404","message":"\#(message)"}"#)
    }
    let description = chinese ? known.chinese : known.description
    return Self.compressed(
      .json(
        #"{"cod":200,"name":"\#(city)","main":{"temp":\#(known.temp)},"#
          + #""weather":[{"description":"\#(description)"}]}"#),
      for: request)
  }

  /// `response` gzip-encoded when the request accepts gzip, as most servers do: URLSession
  /// decodes it, and `GzipMiddleware` makes the headers say so.
  static func compressed(_ response: MockResponse, for request: RecordedRequest) -> MockResponse {
    guard request.header("Accept-Encoding")?.contains("gzip") == true,
      let body = try? GzipCompressor.compress(response.body)
    else { return response }
    var compressed = response
    compressed.body = body
    return compressed.addingHeader("Content-Encoding", "gzip")
  }
}

/// Command-line options.
struct Options {
  static let usage = """
    usage: weather-demo [--base-url URL] [--api-key KEY] [--lang en|zh-Hans] [--verbose] [--chain]
                        [--transport urlsession|curl]
      --base-url URL   use a real weather API instead of the embedded loopback server
      --api-key KEY    sent as the appid query parameter (logged as appid=***)
      --lang LOCALE    language of error reasons (default: from the environment)
      --verbose        log one line per attempt to standard error
      --chain          print the client's middleware chain before the requests
      --transport NAME curl (CurlTransport) or urlsession (URLSessionTransport); default:
                       Client.standard's (curl on Linux, urlsession elsewhere)
    """

  var baseURL: URL?
  var apiKey: String?
  var language: String?
  var verbose = false
  var chain = false
  var help = false
  /// `nil`: `Client.standardTransport()`.
  var transport: TransportChoice?

  /// The transport the demo sends with.
  enum TransportChoice: String {
    case urlsession
    case curl

    /// The name of the kind `transport` is.
    init(of transport: any Transport) {
      self = transport is CurlTransport ? .curl : .urlsession
    }

    func make() -> any Transport {
      switch self {
      case .urlsession: URLSessionTransport()
      case .curl: CurlTransport()
      }
    }

    static func shutDown(_ transport: any Transport) {
      (transport as? URLSessionTransport)?.shutdown()
      (transport as? CurlTransport)?.shutdown()
    }
  }

  struct Invalid: Error, CustomStringConvertible {
    let description: String
  }

  init(_ arguments: ArraySlice<String>) throws {
    var arguments = arguments
    while let argument = arguments.popFirst() {
      switch argument {
      case "--help", "-h":
        help = true
      case "--verbose", "-v":
        verbose = true
      case "--chain":
        chain = true
      case "--base-url", "--api-key", "--lang", "--transport":
        guard let value = arguments.popFirst() else {
          throw Invalid(description: "\(argument) needs a value")
        }
        switch argument {
        case "--base-url":
          guard let url = URL(string: value), url.scheme == "http" || url.scheme == "https" else {
            throw Invalid(description: "\(value) is not an http(s) URL")
          }
          baseURL = url
        case "--api-key": apiKey = value
        case "--transport":
          guard let choice = TransportChoice(rawValue: value.lowercased()) else {
            throw Invalid(description: "--transport takes urlsession or curl, not \(value)")
          }
          transport = choice
        default: language = value
        }
      default:
        throw Invalid(description: "unknown argument \(argument)")
      }
    }
  }
}
