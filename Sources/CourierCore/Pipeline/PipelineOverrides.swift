/// An endpoint's changes to the built-in stages of its client's pipeline.
public struct PipelineOverrides: Sendable {
  /// Statuses to accept instead of the ``StatusStage``'s.
  public var acceptedStatuses: AcceptedStatuses?
  /// `nil`: keep the pipeline's envelope rule; `.some(nil)`: no envelope check;
  /// `.some(rule)`: this rule instead.
  public var envelope: EnvelopeRule??

  /// No changes.
  public init() {}
}
