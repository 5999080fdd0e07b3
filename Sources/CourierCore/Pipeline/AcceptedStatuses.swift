/// A set of accepted HTTP statuses, as ranges.
public struct AcceptedStatuses: Sendable, Hashable {
  /// The accepted ranges.
  public var ranges: [ClosedRange<Int>]

  /// Accepts statuses in any of `ranges`.
  public init(_ ranges: [ClosedRange<Int>]) {
    self.ranges = ranges
  }

  /// Accepts exactly these statuses.
  public init(codes: Int...) {
    self.ranges = codes.map { $0...$0 }
  }

  /// `200...299`.
  public static let successful = AcceptedStatuses([200...299])

  /// Whether `status` is accepted.
  public func contains(_ status: Int) -> Bool {
    ranges.contains { $0.contains(status) }
  }
}
