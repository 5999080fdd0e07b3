/// An HTTP request method such as `GET` or `POST`.
///
/// `HTTPMethod` is a struct with static members rather than an enum, so any method token a
/// server understands can be used (`HTTPMethod("PROPFIND")`) and new well-known members can be
/// added without breaking code that switches over them.
public struct HTTPMethod: Hashable, Sendable, CustomStringConvertible {
  /// The method token as sent on the wire, for example `"GET"`.
  public let rawValue: String

  /// Creates a method from its token.
  ///
  /// - Parameter rawValue: A non-empty RFC 9110 token (letters, digits and
  ///   ``!#$%&'*+-.^_`|~``). Methods are case-sensitive, so `"get"` is not `GET`.
  /// - Throws: ``CourierError`` of kind ``CourierError/Kind/invalidRequest`` when the token is
  ///   empty or holds a character a token may not contain.
  public init(_ rawValue: String) throws {
    self.rawValue = try HTTPToken.checked(rawValue, as: "HTTP method")
  }

  private init(known rawValue: String) {
    self.rawValue = rawValue
  }

  /// The method token.
  public var description: String { rawValue }

  /// `GET`: transfer a representation of the target resource.
  public static let get = HTTPMethod(known: "GET")
  /// `HEAD`: like `GET`, but the response has no body.
  public static let head = HTTPMethod(known: "HEAD")
  /// `POST`: let the target resource process the enclosed body.
  public static let post = HTTPMethod(known: "POST")
  /// `PUT`: replace the target resource with the enclosed body.
  public static let put = HTTPMethod(known: "PUT")
  /// `PATCH`: apply a partial modification to the target resource.
  public static let patch = HTTPMethod(known: "PATCH")
  /// `DELETE`: remove the target resource.
  public static let delete = HTTPMethod(known: "DELETE")
  /// `OPTIONS`: describe the communication options for the target resource.
  public static let options = HTTPMethod(known: "OPTIONS")
  /// `TRACE`: perform a message loop-back test.
  public static let trace = HTTPMethod(known: "TRACE")
  /// `CONNECT`: establish a tunnel to the server.
  public static let connect = HTTPMethod(known: "CONNECT")

  /// Whether RFC 9110 §9.2.2 defines the method as idempotent (`GET`, `HEAD`, `PUT`, `DELETE`,
  /// `OPTIONS`, `TRACE`): repeating it has the same effect as sending it once.
  public var isIdempotent: Bool {
    switch rawValue {
    case "GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE": true
    default: false
    }
  }
}

/// RFC 9110 §5.6.2 token rules, shared by methods and header names.
enum HTTPToken {
  /// Whether `string` is a non-empty token.
  static func isValid(_ string: String) -> Bool {
    guard !string.isEmpty else { return false }
    return string.utf8.allSatisfy(isTokenByte)
  }

  /// `string` when it is a token; otherwise an `invalidRequest` error naming `what` it was.
  static func checked(_ string: String, as what: String) throws -> String {
    guard isValid(string) else {
      throw CourierError(
        kind: .invalidRequest,
        debugMessage: "\(what) \(string.debugDescription) is not a valid token")
    }
    return string
  }

  /// Whether one byte may appear in a token.
  @inline(__always)
  static func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"):
      return true
    case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"),
      UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"),
      UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
      UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
      return true
    default:
      return false
    }
  }
}
