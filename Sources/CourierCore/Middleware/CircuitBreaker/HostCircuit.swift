/// One host's circuit: its state, the outcomes of its recent attempts, and its probes. A value
/// kept in ``CircuitBreakerMiddleware``'s locked table and changed only under that lock.
struct HostCircuit {
  typealias State = CircuitBreakerMiddleware.State

  /// The outcomes of one slice (a tenth) of the window.
  struct Bucket {
    var slice: Int64 = -1
    var requests = 0
    var failures = 0
  }

  /// What an admitted request carries back to ``record(_:of:now:policy:)``.
  struct Ticket {
    /// The circuit's ``generation`` when the request was admitted.
    let generation: UInt64
    /// Whether it went through as a probe of a half-open circuit.
    let isProbe: Bool
  }

  /// How an attempt counted.
  enum Outcome {
    case success
    case failure(String)
    /// Neither: cancelled, or the device offline; it says nothing about the host.
    case neutral
  }

  /// The slices the window is cut into.
  static let sliceCount = 10

  private(set) var state = State.closed
  /// Bumped at every change of state, so that the outcome of a request admitted before it
  /// (one still in flight when the circuit opened) changes nothing.
  private var generation: UInt64 = 0
  private var buckets = [Bucket](repeating: Bucket(), count: sliceCount)
  /// The failures in a row, and when the first of them ended.
  private var run = 0
  private var runStart = Duration.zero
  /// When an open circuit lets its first probe through.
  private(set) var probeAt = Duration.zero
  /// Why the circuit opened, for the errors of the requests it fails fast.
  private(set) var openedBecause = ""
  private var probesAdmitted = 0
  private var probesSucceeded = 0

  /// Admits a request at `now`, or returns `nil` when the circuit fails it fast. A change of
  /// state (an open circuit whose time is up turns half-open) is appended to `changes`.
  mutating func admit(
    now: Duration, policy: CircuitBreakerPolicy, changes: inout [(State, State)]
  ) -> Ticket? {
    switch state {
    case .closed:
      return Ticket(generation: generation, isProbe: false)
    case .open:
      guard now >= probeAt else { return nil }
      move(to: .halfOpen, changes: &changes)
      probesAdmitted = 0
      probesSucceeded = 0
      fallthrough
    case .halfOpen:
      guard probesAdmitted < policy.probes else { return nil }
      probesAdmitted += 1
      return Ticket(generation: generation, isProbe: true)
    }
  }

  /// Records how an admitted request's attempt ended, at `now`.
  mutating func record(
    _ outcome: Outcome, of ticket: Ticket, now: Duration, policy: CircuitBreakerPolicy,
    changes: inout [(State, State)]
  ) {
    guard ticket.generation == generation else { return }
    if ticket.isProbe {
      switch outcome {
      case .neutral:
        probesAdmitted -= 1
      case .failure(let what):
        open(now: now, policy: policy, because: "a probe failed (\(what))", changes: &changes)
      case .success:
        probesSucceeded += 1
        guard probesSucceeded >= policy.probes else { return }
        move(to: .closed, changes: &changes)
        buckets = [Bucket](repeating: Bucket(), count: Self.sliceCount)
        run = 0
      }
      return
    }
    let failed: Bool
    switch outcome {
    case .neutral: return
    case .success: failed = false
    case .failure: failed = true
    }
    let index = bucketIndex(now: now, policy: policy)
    buckets[index].requests += 1
    if !failed {
      run = 0
      return
    }
    buckets[index].failures += 1
    if run == 0 || now - runStart > policy.window {
      run = 0
      runStart = now
    }
    run += 1
    if policy.consecutiveFailures > 0, run >= policy.consecutiveFailures {
      open(
        now: now, policy: policy,
        because: "\(run) failures in a row within \(DescriptionText.duration(policy.window))",
        changes: &changes)
      return
    }
    let (requests, failures) = totals(now: now, policy: policy)
    if requests >= policy.minimumRequests,
      Double(failures) >= policy.failureRate * Double(requests)
    {
      let percent = DescriptionText.number((Double(failures) * 100 / Double(requests)))
      open(
        now: now, policy: policy,
        because: "\(failures) of \(requests) attempts failed (\(percent) %) within "
          + DescriptionText.duration(policy.window),
        changes: &changes)
    }
  }

  private mutating func open(
    now: Duration, policy: CircuitBreakerPolicy, because reason: String,
    changes: inout [(State, State)]
  ) {
    move(to: .open, changes: &changes)
    probeAt = now + policy.openDuration
    openedBecause = reason
    run = 0
  }

  private mutating func move(to new: State, changes: inout [(State, State)]) {
    changes.append((state, new))
    state = new
    generation &+= 1
  }

  /// The width of a slice, in nanoseconds (at least one).
  private static func sliceWidth(_ policy: CircuitBreakerPolicy) -> Int64 {
    max(1, policy.window.clampedNanoseconds / Int64(sliceCount))
  }

  /// The bucket for `now`, emptied first when it still holds an older slice.
  private mutating func bucketIndex(now: Duration, policy: CircuitBreakerPolicy) -> Int {
    let slice = now.clampedNanoseconds / Self.sliceWidth(policy)
    let index = Int(slice % Int64(Self.sliceCount))
    if buckets[index].slice != slice { buckets[index] = Bucket(slice: slice) }
    return index
  }

  /// The attempts and failures in the slices of the window that ends at `now`.
  private func totals(now: Duration, policy: CircuitBreakerPolicy) -> (Int, Int) {
    let slice = now.clampedNanoseconds / Self.sliceWidth(policy)
    var requests = 0
    var failures = 0
    for bucket in buckets where bucket.slice > slice - Int64(Self.sliceCount) {
      requests += bucket.requests
      failures += bucket.failures
    }
    return (requests, failures)
  }
}
