/// One check or transformation a ``ResponsePipeline`` applies to each endpoint response.
///
/// ## When to use it
/// For rules about the response itself that hold for many endpoints: a signature header that
/// must verify, a maintenance flag, a custom envelope. Use ``Middleware`` instead when the rule
/// needs to resend the request or change it.
///
/// ## Built-in stages
/// - ``StatusStage``: the HTTP status must be in an accepted set (default `200..<300`).
/// - ``EnvelopeStage``: the business envelope (`{"code": 0, "msg": …, "data": …}`) must say
///   success; its payload becomes what is decoded.
///
/// ## Writing your own
/// Throw a ``CourierError`` (or any error, which becomes kind
/// ``CourierError/Kind/badResponse`` with your stage's ``name``) to reject the response; set
/// ``ResponseContext/payload`` to change what gets decoded.
///
/// ```swift
/// struct SignatureStage: ResponseStage {
///   let key: SymmetricKey
///   func process(_ context: inout ResponseContext) throws {
///     guard let signature = context.response.headers["X-Signature"],
///           verify(signature, context.response.body, key) else {
///       throw CourierError(kind: .badResponse, debugMessage: "bad signature")
///     }
///   }
/// }
/// let pipeline = ResponsePipeline([StatusStage(), SignatureStage(key: key)])
/// ```
public protocol ResponseStage: Sendable {
  /// A short name for ``CourierError/stage`` and debugging; defaults to the type's name.
  var name: String { get }
  /// Checks the response, or changes what will be decoded; throws to reject it.
  func process(_ context: inout ResponseContext) throws
}
extension ResponseStage {
  /// The type's name.
  public var name: String { String(describing: Self.self) }
}
