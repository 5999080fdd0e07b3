import Courier
import CourierTesting
import Foundation

/// `weather-demo`: asks a weather API for two cities and one unknown city, and shows how
/// Courier turns every failure into one readable sentence.
///
/// By default it serves the API itself from an in-process `MockServer` on 127.0.0.1, so it
/// runs offline. `--base-url URL` points it at a real server with the same shape
/// (OpenWeatherMap's `weather?q=<city>`; add `--api-key KEY` for its `appid`), and
/// `--lang zh-Hans` prints reasons in Simplified Chinese.
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
        mock.setDispatcher(WeatherAPI.respond)
        server = mock
        baseURL = mock.baseURL
      } catch {
        printError("weather-demo: cannot start the embedded server: \(error)")
        exit(1)
      }
    }
    defer { server?.shutdown() }

    let client = WeatherClient(baseURL: baseURL, locale: options.language, apiKey: options.apiKey)
    print(
      "Courier weather demo: \(server == nil ? "server" : "embedded server") \(baseURL.absoluteString),"
        + " language \(client.locale)")
    for city in ["Beijing", "Shanghai", "Atlantis"] {
      await show(city) { try await client.weather(in: city) }
    }
    // A port nobody listens on: the same code path as a server that is down.
    let offline = WeatherClient(
      baseURL: URL(string: "http://127.0.0.1:9/")!, locale: options.language, apiKey: nil)
    await show("Beijing (server down)") { try await offline.weather(in: "Beijing") }
  }

  static func show(_ label: String, _ fetch: @Sendable () async throws -> Weather) async {
    do {
      let weather = try await fetch()
      let celsius = weather.main.temp - 273.15
      let description = weather.weather.first?.description ?? "?"
      print("  \(weather.name): \(String(format: "%.1f", celsius)) °C, \(description)")
    } catch let error as CourierError {
      var detail = "kind \(error.kind)"
      if let status = error.status { detail += ", status \(status)" }
      if let code = error.code { detail += ", code \(code)" }
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

  init(baseURL: URL, locale: String?, apiKey: String?) {
    // OpenWeatherMap's envelope: `cod` is 200 (a number) on success and "404" (a string)
    // on failure, with the text in `message`; the payload is the whole body.
    let rule = EnvelopeRule(
      code: "cod", success: [200], message: ["message"], payload: nil, matchesAcrossTypes: true)
    let language = ReasonCatalog.standard.bestLocale(
      for: locale.map { [$0] } ?? ReasonCatalog.processPreferredLanguages)
    client = Client(
      baseURL: baseURL,
      transport: URLSessionTransport(),
      middleware: [AcceptLanguageMiddleware(language: language)],
      pipeline: .envelope(rule),
      locale: language)
    self.apiKey = apiKey
  }

  func weather(in city: String) async throws(CourierError) -> Weather {
    var endpoint = Endpoint<Weather>(.get, "weather").query("q", city).timeout(.seconds(10))
    if let apiKey { endpoint = endpoint.query("appid", apiKey) }
    return try await client.send(endpoint)
  }
}

/// Asks the server to answer in the client's language: a middleware of the kind users write.
struct AcceptLanguageMiddleware: Middleware {
  let language: String

  func intercept(_ request: Request, next: Next) async throws -> Response {
    var request = request
    if !request.headers.contains(.acceptLanguage) {
      try request.headers.add(.acceptLanguage, language)
    }
    return try await next(request)
  }
}

/// The embedded server's API: a few cities, and OpenWeatherMap's error envelope for the rest,
/// sent with `200 OK` as many business APIs do, so the client must read the envelope.
enum WeatherAPI {
  static let cities: [String: (temp: Double, description: String, chinese: String)] = [
    "beijing": (305.4, "clear sky", "晴"),
    "shanghai": (301.2, "light rain", "小雨"),
  ]

  @Sendable static func respond(_ request: RecordedRequest) -> MockResponse {
    guard request.method == "GET", request.path == "/weather" else {
      return .json(#"{"cod":"404","message":"Internal error"}"#, status: 404)
    }
    let chinese = request.header("Accept-Language")?.hasPrefix("zh") == true
    let query = URLComponents(string: request.target)?.queryItems ?? []
    let city = query.first { $0.name == "q" }?.value ?? ""
    guard let known = cities[city.lowercased()] else {
      let message = chinese ? "未找到该城市" : "city not found"
      return .json(#"{"cod":"404","message":"\#(message)"}"#)
    }
    let description = chinese ? known.chinese : known.description
    return .json(
      #"{"cod":200,"name":"\#(city)","main":{"temp":\#(known.temp)},"#
        + #""weather":[{"description":"\#(description)"}]}"#)
  }
}

/// Command-line options.
struct Options {
  static let usage = """
    usage: weather-demo [--base-url URL] [--api-key KEY] [--lang en|zh-Hans]
      --base-url URL   use a real weather API instead of the embedded loopback server
      --api-key KEY    sent as the appid query parameter
      --lang LOCALE    language of error reasons (default: from the environment)
    """

  var baseURL: URL?
  var apiKey: String?
  var language: String?
  var help = false

  struct Invalid: Error, CustomStringConvertible {
    let description: String
  }

  init(_ arguments: ArraySlice<String>) throws {
    var arguments = arguments
    while let argument = arguments.popFirst() {
      switch argument {
      case "--help", "-h":
        help = true
      case "--base-url", "--api-key", "--lang":
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
        default: language = value
        }
      default:
        throw Invalid(description: "unknown argument \(argument)")
      }
    }
  }
}
