import CourierCore
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The session's delegate: hands each callback of a task to its ``AttemptObserver``.
///
/// On Linux, URLSession asks only the session's delegate about redirects (a task delegate
/// given to `data(for:delegate:)` is not asked), and calls only the session's delegate for a
/// task made without a completion handler. The transport registers each task it creates
/// with its observer before resuming it; the delegate forgets the task when it completes.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
  /// Observers by `taskIdentifier`, unique among the tasks of the session.
  private let observers = Mutex([Int: AttemptObserver]())

  /// Hands `task`'s callbacks to `observer` until the task completes.
  func register(_ observer: AttemptObserver, for task: URLSessionTask) {
    observers.withLock { $0[task.taskIdentifier] = observer }
  }

  private func observer(_ task: URLSessionTask) -> AttemptObserver? {
    observers.withLock { $0[task.taskIdentifier] }
  }

  /// How many tasks have an observer registered: those not completed yet.
  var observedTaskCount: Int { observers.withLock { $0.count } }

  func urlSession(
    _ session: URLSession, task: URLSessionTask,
    willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
    completionHandler: @escaping @Sendable (URLRequest?) -> Void
  ) {
    if let observer = observer(task) {
      let next = observer.redirect(response, task: task)
      Self.answerRedirect(next, of: task, on: observer.controlQueue, completionHandler)
      return
    }
    // Not one of ours (a task made on the session directly): at least keep credentials
    // on their origin.
    var next = request
    if let from = task.currentRequest?.url, let to = request.url,
      !Redirect.sameOrigin(from, to)
    {
      for name in Redirect.credentialHeaders {
        next.setValue(nil, forHTTPHeaderField: name.rawName)
      }
    }
    completionHandler(next)
  }

  /// Gives URLSession the answer to a redirect from `queue`, the control queue every
  /// cancellation of the session's tasks runs on (``AttemptObserver/cancel(_:on:)``), and not
  /// at all when the task was cancelled there first.
  ///
  /// FoundationNetworking stops the process ("Received callback for HTTP redirection, but
  /// we're not waiting for it") when the answer reaches its task after a cancellation: the
  /// answer is queued on the task's work queue, behind a `cancel()` that got there first,
  /// and the cancelled task no longer waits for it. Answered from the queue the cancellations
  /// run on, the answer is queued before any later `cancel()` (which waits for the work
  /// queue), and an earlier one has already marked the task `canceling`, which needs no answer.
  private static func answerRedirect(
    _ next: URLRequest?, of task: URLSessionTask, on queue: DispatchQueue,
    _ completionHandler: @escaping @Sendable (URLRequest?) -> Void
  ) {
    queue.async {
      guard task.state == .running else { return }
      completionHandler(next)
    }
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
    totalBytesSent: Int64, totalBytesExpectedToSend: Int64
  ) {
    observer(task)?.urlSession(
      session, task: task, didSendBodyData: bytesSent, totalBytesSent: totalBytesSent,
      totalBytesExpectedToSend: totalBytesExpectedToSend)
  }

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
  ) {
    guard let observer = observer(dataTask) else {
      completionHandler(.allow)
      return
    }
    observer.urlSession(
      session, dataTask: dataTask, didReceive: response, completionHandler: completionHandler)
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    observer(dataTask)?.urlSession(session, dataTask: dataTask, didReceive: data)
  }

  #if canImport(FoundationNetworking)
    /// Declines a `401`'s challenge that no credential answers, instead of URLSession's
    /// default handling, which leaves the task waiting for ever on Linux (see
    /// ``AttemptObserver/challenge(_:)``). A task that is not one of ours is declined too.
    func urlSession(
      _ session: URLSession, task: URLSessionTask,
      didReceive challenge: URLAuthenticationChallenge,
      completionHandler:
        @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?)
        -> Void
    ) {
      let observer = observer(task)
      let disposition =
        observer?.challenge(challenge)
        ?? (challenge.proposedCredential == nil
          ? .cancelAuthenticationChallenge : .performDefaultHandling)
      // Answered from another queue: either answer calls URLSession synchronously (it
      // cancels the task, or suspends and resumes it to send the credential), which from
      // URLSession's own queue, where this runs (InlineDelegateQueue), deadlocks.
      (observer?.controlQueue ?? .global()).async { completionHandler(disposition, nil) }
    }
  #endif

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics
  ) {
    observer(task)?.urlSession(session, task: task, didFinishCollecting: metrics)
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?
  ) {
    // The task's last callback.
    let observer = observers.withLock { $0.removeValue(forKey: task.taskIdentifier) }
    observer?.urlSession(session, task: task, didCompleteWithError: error)
  }
}

#if canImport(FoundationNetworking)
  /// A delegate queue that runs each callback at once, on URLSession's own queue.
  ///
  /// URLSession on Linux hands every delegate callback to its delegate queue with
  /// `addOperation`; with the default queue, each is a hop to another thread, so watching a
  /// body as it arrives (the limit, progress) would cost a thread switch per callback. Run in
  /// place, it costs nothing measurable. The callbacks of ``AttemptObserver`` and
  /// ``SessionDelegate`` are short and never wait, and never call URLSession synchronously (a
  /// task is cancelled, and a challenge answered, from the transport's control queue), so
  /// running them on URLSession's queue is safe.
  final class InlineDelegateQueue: OperationQueue, @unchecked Sendable {
    // @unchecked Sendable: no stored state of its own; OperationQueue is thread-safe.
    override func addOperation(_ block: @escaping @Sendable () -> Void) {
      block()
    }
  }
#endif
