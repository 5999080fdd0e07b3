/// The value of an unstructured task, awaited so that cancelling the awaiting task cancels it.
///
/// A test that starts `Task { try await client.send(…) }` and later awaits `task.value` does
/// not cancel that task when Swift Testing's `.timeLimit` cancels the test: the test then
/// waits on, for ever, for a request stuck behind a test clock nobody advances, and the whole
/// `swift test` hangs with it.
/// Awaiting `linkedValue` instead passes the cancellation on, so the time limit ends the test.
extension Task where Failure == any Error {
  /// The task's value; cancelling the awaiting task cancels this one.
  package var linkedValue: Success {
    get async throws {
      try await withTaskCancellationHandler {
        try await value
      } onCancel: {
        cancel()
      }
    }
  }
}

extension Task where Failure == Never {
  /// The task's value; cancelling the awaiting task cancels this one.
  package var linkedValue: Success {
    get async {
      await withTaskCancellationHandler {
        await value
      } onCancel: {
        cancel()
      }
    }
  }
}
