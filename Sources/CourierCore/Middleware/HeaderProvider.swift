/// A header whose value is computed when each request is sent: a device id, a locale, a
/// signature over the request.
public struct HeaderProvider: Sendable {
  /// The header's name.
  public let name: HTTPHeaders.Name
  /// Computes the value for a request; `nil` leaves the header out. An error fails the
  /// request (kind ``CourierError/Kind/middleware`` unless it is a ``CourierError``).
  public let value: @Sendable (Request) async throws -> String?

  /// Creates a provider for a header name.
  public init(
    _ name: HTTPHeaders.Name, value: @escaping @Sendable (Request) async throws -> String?
  ) {
    self.name = name
    self.value = value
  }

  /// Creates a provider for a header given by its text name.
  ///
  /// - Throws: ``CourierError`` of kind ``CourierError/Kind/invalidRequest`` when `name` is not
  ///   a valid header name.
  public init(
    _ name: String, value: @escaping @Sendable (Request) async throws -> String?
  ) throws {
    self.init(try HTTPHeaders.Name(name), value: value)
  }
}
