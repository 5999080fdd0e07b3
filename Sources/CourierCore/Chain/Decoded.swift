/// A decoded value with the response it came from.
public struct Decoded<Value: Sendable>: Sendable {
  /// The decoded value.
  public var value: Value
  /// The response, with status, headers and raw body.
  public var response: Response
}
