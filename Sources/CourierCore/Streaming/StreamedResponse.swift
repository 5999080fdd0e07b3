import Foundation

/// A response whose body is read while it arrives: the head at once, the body as a
/// ``ResponseBodyStream``. What `Client.stream` returns.
public struct StreamedResponse: Sendable {
  /// The status, headers and request of the response, with an empty ``Response/body``.
  public var head: Response
  /// The body, read once.
  public var body: ResponseBodyStream

  /// Takes `response`'s ``Response/bodyStream``, or wraps its whole ``Response/body`` when the
  /// transport did not stream it.
  public init(_ response: Response) {
    var head = response
    body = response.bodyStream ?? ResponseBodyStream(response.body)
    head.bodyStream = nil
    head.body = Data()
    self.head = head
  }
}
