/// An HTTP request method such as `GET` or `POST`.
///
/// `HTTPMethod` is a struct with static members rather than an enum, so any method token a
/// server understands can be used (`try HTTPMethod("PROPFIND")`) and new well-known members can be
/// added without breaking code that switches over them.
public struct HTTPMethod: Hashable, Sendable, CustomStringConvertible {
  /// The method token as sent on the wire, for example `"GET"`.
  public let rawValue: String

  /// Creates a method from its token.
  ///
  /// - Parameter rawValue: A non-empty RFC 9110 token (letters, digits, the backtick and
  ///   `!#$%&'*+-.^_|~`). Methods are case-sensitive, so `"get"` is not `GET`.
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
