/// A header value that proves who is calling: `Authorization: Bearer …` or an API key header.
public struct Credential: Sendable, Hashable, CustomStringConvertible {
  /// The header it is sent in; default `Authorization`.
  public var header: HTTPHeaders.Name
  /// The header's value.
  public var value: String

  /// A credential sent as `header: value`.
  public init(_ value: String, header: HTTPHeaders.Name = .authorization) {
    self.header = header
    self.value = value
  }

  /// `Authorization: Bearer <token>`.
  public init(bearer token: String) {
    self.init("Bearer \(token)")
  }

  /// The header name only: a credential's value never appears in a description.
  public var description: String { "Credential(\(header.rawName): ***)" }
}
