import Foundation

/// What an envelope said: success with an optional payload, or failure with a code and
/// message.
public struct EnvelopeVerdict: Sendable {
  /// Whether the envelope reports success.
  public var isSuccess: Bool
  /// The business code as written (a string without its quotes, `null` as `"null"`).
  public var code: String?
  /// The server's message.
  public var message: String?
  /// The bytes to decode instead of the whole body; `nil` keeps the body.
  public var payload: Data?
  /// Whether the payload key was absent.
  public var payloadIsMissing = false
  /// Whether ``payload`` is a member cut from a JSON document.
  public var payloadIsJSONMember = false
  /// A note for developers about a failure (a code of another type than the success codes),
  /// added to the error's `debugDescription`.
  var detail: String?

  /// Success; decode `payload` (or the whole body when `nil`).
  public static func success(payload: Data?) -> EnvelopeVerdict {
    EnvelopeVerdict(isSuccess: true, payload: payload)
  }

  /// Failure with the server's code and message.
  public static func failure(code: String?, message: String?) -> EnvelopeVerdict {
    EnvelopeVerdict(isSuccess: false, code: code, message: message)
  }
}
