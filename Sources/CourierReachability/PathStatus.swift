/// Whether the machine has a usable network path, as a ``PathMonitor`` sees it.
public enum PathStatus: Hashable, Sendable, CustomStringConvertible {
  /// A path exists: at least one interface is up and running, has an address and carries a
  /// default route. `interfaces` holds the kinds of those interfaces.
  case satisfied(interfaces: Set<InterfaceKind>)
  /// No usable path; `reason` says why, as far as the monitor knows.
  case unsatisfied(reason: UnsatisfiedReason)

  /// Whether requests can leave the machine.
  public var isSatisfied: Bool {
    if case .satisfied = self { return true }
    return false
  }

  /// The interface kinds of a satisfied path; empty when unsatisfied.
  public var interfaces: Set<InterfaceKind> {
    if case .satisfied(let interfaces) = self { return interfaces }
    return []
  }

  /// `"satisfied (wifi, wired)"` or `"unsatisfied (no default route)"`.
  public var description: String {
    switch self {
    case .satisfied(let interfaces):
      "satisfied (\(interfaces.map(\.rawValue).sorted().joined(separator: ", ")))"
    case .unsatisfied(let reason): "unsatisfied (\(reason))"
    }
  }

  /// Why a path is unsatisfied. A struct with static members rather than an enum, so that
  /// monitors (yours included) can add reasons without breaking anyone's `switch`.
  public struct UnsatisfiedReason: Hashable, Sendable, CustomStringConvertible {
    /// A short stable name, such as `"noUsableInterface"`.
    public let name: String
    /// Human-readable detail for logs (not shown to users; ``CourierError/reason`` is).
    public let detail: String

    /// Creates a reason; prefer the static members for the common ones.
    public init(_ name: String, detail: String = "") {
      self.name = name
      self.detail = detail
    }

    /// No interface other than loopback is up, running (carrier present) and addressed.
    public static let noUsableInterface = UnsatisfiedReason(
      "noUsableInterface",
      detail: "no non-loopback interface is up, running and has an address")
    /// Interfaces are up, but no default route goes through any of them.
    public static let noDefaultRoute = UnsatisfiedReason(
      "noDefaultRoute", detail: "no default route through a usable interface")
    /// The operating system denied the path (a data-usage policy, a VPN that must be on…).
    public static let deniedBySystem = UnsatisfiedReason(
      "deniedBySystem", detail: "the system does not allow this path")
    /// The monitor does not know (it has stopped, or the system gave no reason).
    public static let unknown = UnsatisfiedReason("unknown", detail: "no reason known")

    /// Reasons are equal when their names are: the detail is for people.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name }

    /// Hashes the name.
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }

    /// The detail, or the name when there is none.
    public var description: String { detail.isEmpty ? name : detail }
  }
}
