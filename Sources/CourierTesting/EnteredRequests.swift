import CourierCore

/// A middleware that reports every request that reaches its place in the chain, so a test can
/// wait until requests are under way — to cancel them, shut a transport down under them, or
/// count them — without polling or sleeping.
///
/// Put it last (innermost) to learn that an attempt is about to reach the transport:
///
/// ```swift
/// let (entered, requests) = EnteredRequests.make()
/// let client = Client(baseURL: server.baseURL, transport: transport, middleware: [entered])
/// let task = Task { try await client.send(Endpoint<Data>(.get, "slow")) }
/// await requests.waitFor(1)  // the request is in the transport now
/// task.cancel()
/// ```
public struct EnteredRequests: Middleware {
  private let continuation: AsyncStream<Request>.Continuation

  /// The middleware and the stream of the requests it sees, in order; the stream never ends.
  public static func make() -> (EnteredRequests, AsyncStream<Request>) {
    let (stream, continuation) = AsyncStream<Request>.makeStream()
    return (EnteredRequests(continuation: continuation), stream)
  }

  /// Reports `request`, then passes it on.
  nonisolated(nonsending) public func intercept(
    _ request: Request, next: Next
  ) async throws
    -> Response
  {
    continuation.yield(request)
    return try await next(request)
  }
}

extension AsyncStream where Element == Request {
  /// Waits until `count` more requests have entered (see ``EnteredRequests``).
  public func waitFor(_ count: Int) async {
    var iterator = makeAsyncIterator()
    for _ in 0..<count { _ = await iterator.next() }
  }
}
