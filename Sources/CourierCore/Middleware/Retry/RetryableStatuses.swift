/// A set of statuses, with the 4xx and 5xx ones also as two 100-bit masks.
struct RetryableStatuses: Sendable, Hashable {
  /// Every status of the set.
  let all: Set<Int>
  /// Bit `n` of `clientErrors` (`serverErrors`) set: status 400 + n (500 + n) is in the set.
  private let clientErrors: (low: UInt64, high: UInt64)
  private let serverErrors: (low: UInt64, high: UInt64)
  /// Whether the set has statuses outside 400...599, found only by the set.
  private let hasOthers: Bool

  init(_ statuses: Set<Int>) {
    all = statuses
    var client: (low: UInt64, high: UInt64) = (0, 0)
    var server: (low: UInt64, high: UInt64) = (0, 0)
    var others = false
    for status in statuses {
      switch status {
      case 400..<500: Self.insert(status - 400, into: &client)
      case 500..<600: Self.insert(status - 500, into: &server)
      default: others = true
      }
    }
    (clientErrors, serverErrors, hasOthers) = (client, server, others)
  }

  func contains(_ status: Int) -> Bool {
    switch status {
    case 400..<500: Self.test(status - 400, in: clientErrors)
    case 500..<600: Self.test(status - 500, in: serverErrors)
    default: hasOthers && all.contains(status)
    }
  }

  private static func insert(_ bit: Int, into mask: inout (low: UInt64, high: UInt64)) {
    if bit < 64 { mask.low |= 1 << UInt64(bit) } else { mask.high |= 1 << UInt64(bit - 64) }
  }

  private static func test(_ bit: Int, in mask: (low: UInt64, high: UInt64)) -> Bool {
    bit < 64 ? mask.low & (1 << UInt64(bit)) != 0 : mask.high & (1 << UInt64(bit - 64)) != 0
  }

  // The masks follow from `all`: equality and hashing are the set's.
  static func == (lhs: Self, rhs: Self) -> Bool { lhs.all == rhs.all }
  func hash(into hasher: inout Hasher) { hasher.combine(all) }
}
