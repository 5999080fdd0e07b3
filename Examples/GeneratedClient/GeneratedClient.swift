import Courier
import CourierTesting
import Foundation
import Synchronization

/// `generated-client`: calls an account API through the endpoints that the
/// `CourierEndpointsPlugin` generated at build time from `API.endpoints.json`
/// (`API.User.check(phone:)`, `API.User.register(registration:)`,
/// `API.User.profile(id:lang:)`), against an embedded `MockServer` on 127.0.0.1, so it runs
/// offline.
///
/// The server answers in the `{"code": 0, "msg": …, "data": …}` envelope the spec names,
/// insists on the `X-Client` header the spec adds to every endpoint, and fails the first
/// profile request with `503`, so the spec's retry override shows.
@main
struct GeneratedClient {
  static func main() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let api = AccountAPI()
    server.setDispatcher { api.respond($0) }

    let client = Client(
      baseURL: server.baseURL, transport: URLSessionTransport(), middleware: [RetryMiddleware()])
    let phone = "+86 138 0013 8000"

    await show("check \(phone)") {
      let check = try await client.send(API.User.check(phone: phone))
      return check.registered ? "registered" : "not registered"
    }
    await show("register \(phone)") {
      let account = try await client.send(
        API.User.register(registration: Registration(phone: phone, name: "Li Lei")))
      return "account \(account.accountID)"
    }
    await show("check \(phone)") {
      let check = try await client.send(API.User.check(phone: phone))
      return check.registered ? "registered (account \(check.accountID ?? 0))" : "not registered"
    }
    await show("profile 1001") {
      let decoded = try await client.response(for: API.User.profile(id: 1001, lang: "zh-Hans"))
      return "\(decoded.value.name), \(decoded.value.language)  "
        + "(\(decoded.response.attempts) attempts)"
    }
    await show("check 12345") {
      _ = try await client.send(API.User.check(phone: "12345"))
      return "unexpected success"
    }
  }

  /// Prints one labelled result line, or the error's reason with its kind and code.
  static func show(_ label: String, _ call: @Sendable () async throws -> String) async {
    do {
      print("  \(label): \(try await call())")
    } catch let error as CourierError {
      print("  \(label): \(error.reason)  [kind \(error.kind), code \(error.code ?? "none")]")
    } catch {
      print("  \(label): \(error)")
    }
  }
}

/// The embedded account service.
final class AccountAPI: Sendable {
  private let accounts = Mutex<[String: Int]>([:])
  private let profileFailed = Mutex(false)

  func respond(_ request: RecordedRequest) -> MockResponse {
    guard request.header("X-Client") == "courier-generated-client" else {
      return .json(#"{"code":400,"msg":"unknown client"}"#, status: 400)
    }
    let parts = request.path.split(separator: "/").map {
      String($0).removingPercentEncoding ?? String($0)
    }
    let route = request.method + " " + parts.dropLast().joined(separator: "/")
    switch route {
    case "GET v1/user/check":
      let phone = parts.last ?? ""
      guard phone.hasPrefix("+") else {
        return .json(#"{"code":1001,"msg":"手机号格式不正确","data":null}"#)
      }
      let id = accounts.withLock { $0[phone] }
      let data = id.map { #"{"registered":true,"accountID":\#($0)}"# } ?? #"{"registered":false}"#
      return .json(#"{"code":0,"msg":"ok","data":\#(data)}"#)
    case "POST v1/user" where parts.last == "register":
      struct Body: Decodable { let phone: String }
      guard let body = try? JSONDecoder().decode(Body.self, from: request.body) else {
        return .json(#"{"code":1002,"msg":"bad registration"}"#)
      }
      let id = accounts.withLock { accounts in
        let id = 1001 + accounts.count
        accounts[body.phone] = id
        return id
      }
      return .json(#"{"code":0,"msg":"ok","data":{"accountID":\#(id)}}"#)
    case "GET v1/user/1001" where parts.last == "profile":
      let first = profileFailed.withLock { failed in
        defer { failed = true }
        return !failed
      }
      if first { return .json(#"{"code":503,"msg":"busy"}"#, status: 503) }
      let chinese = request.query == "lang=zh-Hans"
      let data =
        chinese ? #"{"name":"李雷","language":"zh-Hans"}"# : #"{"name":"Li Lei","language":"en"}"#
      return .json(#"{"code":0,"msg":"ok","data":\#(data)}"#)
    default:
      return .json(#"{"code":404,"msg":"no such endpoint"}"#, status: 404)
    }
  }
}
