import CourierCore

/// Runs `body` and returns the ``CourierError`` it throws, or `nil` when it returns normally.
///
/// For tests that assert on a failure's kind, reason or response. An error that is not a
/// `CourierError` is wrapped as ``CourierError/init(_:request:stage:otherwise:)`` wraps it (kind
/// `transport` for an unknown error), with the stage `"not a CourierError"` so a test that
/// checks the stage sees the difference.
///
/// ```swift
/// let error = await courierError { try await client.send(Endpoint<User>(.get, "me")) }
/// #expect(error?.kind == .httpStatus)
/// ```
public func courierError<T>(_ body: () async throws -> T) async -> CourierError? {
  do {
    _ = try await body()
    return nil
  } catch let error as CourierError {
    return error
  } catch {
    return CourierError(error, stage: "not a CourierError")
  }
}
