/// A validated endpoints spec, version 1: what the generator turns into Swift.
///
/// The file format is documented in the "Generated endpoints" article
/// (Sources/Courier/Courier.docc/GeneratedEndpoints.md); ``SpecReader`` reads
/// it from JSON and reports every problem with its line and column.
package struct Spec: Sendable {
  /// The format version the file declares; this tool reads ``SpecReader/supportedVersion``.
  package var version: Int
  /// The top-level namespace, such as `API`.
  package var namespace: String
  /// The access level of the generated declarations: `internal`, `package` or `public`.
  package var access: String
  /// The modules the generated file imports.
  package var imports: [String]
  /// A documentation comment for the top-level namespace.
  package var doc: String?
  /// Documentation for nested namespaces, by dotted path below the top level (`User`).
  package var groups: [String: String]
  /// A path prefix joined to every relative endpoint path with one `/`.
  package var basePath: String?
  /// Header fields every endpoint sends, in order, unless the endpoint gives its own value
  /// (``headers(of:)``).
  package var headers: [Header]
  /// The business envelope rule every endpoint uses, unless it names its own.
  package var envelope: Envelope?
  /// The endpoints, in the order written.
  package var endpoints: [Endpoint]

  /// A duration from the spec's seconds, in whole milliseconds.
  package typealias Milliseconds = Int

  /// A header field.
  package struct Header: Sendable {
    /// The field name.
    package var name: String
    /// The field value.
    package var value: String
  }

  /// The header fields `endpoint` sends: the spec's, in order, except those whose name the
  /// endpoint gives a value of its own (names compare without regard to ASCII case, as HTTP
  /// compares them), then the endpoint's. An endpoint's value replaces the spec's instead of
  /// being sent beside it, as an endpoint's header wins over `HeadersMiddleware`'s defaults.
  package func headers(of endpoint: Endpoint) -> [Header] {
    let overridden = Set(endpoint.headers.map { $0.name.lowercased() })
    return headers.filter { !overridden.contains($0.name.lowercased()) } + endpoint.headers
  }

  /// A type the spec names, and where: ``SpecReader`` checks that no namespace around the
  /// generated function hides it.
  package struct TypeUse: Sendable {
    /// The type as written, such as `[Device]`.
    package var type: String
    /// What the type is for, in a diagnostic: `the response`, `path parameter 'id'`.
    package var role: String
    /// Where the type is written.
    package var location: SourceLocation
  }

  /// An envelope rule, as `EnvelopeRule` builds it.
  package enum Envelope: Sendable {
    /// `EnvelopeRule.codeZero`.
    case codeZero
    /// `EnvelopeRule.statusOK`.
    case statusOK
    /// No envelope check for this endpoint (`.envelope(nil)`).
    case none
    /// `EnvelopeRule(code:success:message:payload:)`.
    case custom(code: String, success: [Literal], message: [String], payload: String?)
  }

  /// A JSON literal used as an envelope success code.
  package enum Literal: Sendable {
    /// A number, as written.
    case number(String)
    /// A string.
    case string(String)
    /// A boolean.
    case bool(Bool)
  }

  /// How a body is sent.
  package enum BodyEncoding: String, Sendable, CaseIterable {
    /// An `Encodable` value as JSON (`jsonBody`).
    case json
    /// Raw `Data` with a content type (`body(_:contentType:)`).
    case data
    /// A `MultipartForm` (`multipartBody`).
    case multipart
  }

  /// An endpoint's body parameter.
  package struct Body: Sendable {
    /// How the body is encoded.
    package var encoding: BodyEncoding
    /// The Swift type of the value (`json` only).
    package var type: String?
    /// The content type (`data` only).
    package var contentType: String?
    /// The argument label.
    package var label: String
    /// What the argument is, for the doc comment.
    package var doc: String?
  }

  /// A path or query parameter.
  package struct Parameter: Sendable {
    /// The name on the wire: `{name}` in the path, or the query item's name.
    package var name: String
    /// The Swift argument label.
    package var label: String
    /// The Swift type; it must be `LosslessStringConvertible`. `Swift.String` when the spec
    /// names none.
    package var type: String
    /// Whether the argument is optional and the item left out when `nil` (query only).
    package var optional: Bool
    /// What the argument is, for the doc comment.
    package var doc: String?
    /// Where the parameter's name is written, for diagnostics.
    package var location: SourceLocation
    /// The type as the spec wrote it, if it names one.
    package var typeUse: TypeUse?
  }

  /// A retry override.
  package enum Retry: Sendable {
    /// `RetryPolicy.disabled`.
    case disabled
    /// `RetryPolicy.standard`.
    case standard
    /// A policy from the standard one with some values changed.
    case policy(
      maximumAttempts: Int?, baseDelay: Milliseconds?, multiplier: String?,
      maximumDelay: Milliseconds?)
  }

  /// One endpoint.
  package struct Endpoint: Sendable {
    /// The dotted name: namespaces, then the function (`User.check`).
    package var name: [String]
    /// The documentation.
    package var doc: String?
    /// The method, upper case.
    package var method: String
    /// The path template as written.
    package var path: String
    /// The path template with the spec's base path.
    package var fullPath: String
    /// Path parameters, in the order declared.
    package var parameters: [Parameter]
    /// Query parameters, in the order declared and sent.
    package var query: [Parameter]
    /// Header fields of this endpoint; each replaces a spec-wide field of the same name.
    package var headers: [Header]
    /// The body, if any.
    package var body: Body?
    /// The response type: a `Decodable` type, `Data`, `String` or `Void`.
    package var response: String
    /// A dotted key path to decode the response at.
    package var decodeAt: String?
    /// This endpoint's envelope rule, or the spec's.
    package var envelope: Envelope?
    /// A retry override.
    package var retry: Retry?
    /// Whether a non-idempotent request may be sent again.
    package var retryable: Bool
    /// The per-attempt timeout.
    package var timeout: Milliseconds?
    /// The overall deadline.
    package var deadline: Milliseconds?
    /// Where the endpoint's object starts.
    package var location: SourceLocation
    /// Where the endpoint's name is written.
    package var nameLocation: SourceLocation
    /// The types the endpoint names: its response, its JSON body and its parameters'.
    package var typeUses: [TypeUse]
  }
}
