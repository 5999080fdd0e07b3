import Synchronization

/// The response pipeline a request's response must pass, with its endpoint's overrides.
public struct ResponseValidationPlan: Sendable {
  /// The stages.
  public var pipeline: ResponsePipeline { didSet { identity = Self.newIdentity() } }
  /// The endpoint's changes to them.
  public var overrides: PipelineOverrides { didSet { identity = Self.newIdentity() } }

  /// Names this plan in what ``ResponseValidation`` leaves on a response, so that a
  /// ``Client`` reuses that verdict only for the endpoint call that made this plan: new for
  /// every plan created and after every change to one (another endpoint's plan, or this one
  /// with a middleware's edits, never shares it).
  private(set) var identity: UInt64

  private static let identities = Atomic<UInt64>(0)

  private static func newIdentity() -> UInt64 {
    identities.add(1, ordering: .relaxed).newValue
  }

  /// Creates a plan.
  public init(pipeline: ResponsePipeline, overrides: PipelineOverrides = PipelineOverrides()) {
    self.pipeline = pipeline
    self.overrides = overrides
    self.identity = Self.newIdentity()
  }
}
