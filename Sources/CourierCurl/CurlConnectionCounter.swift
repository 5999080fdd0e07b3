import Synchronization

/// How many connections a ``CurlLoopCore``'s transfers opened: added to under the engine lock,
/// read from any thread without it.
final class CurlConnectionCounter: Sendable {
  private let opened = Atomic<Int>(0)

  /// Adds `count` opened connections (nothing when it is 0 or less).
  func add(_ count: Int) {
    if count > 0 { opened.add(count, ordering: .relaxed) }
  }

  /// The connections opened so far.
  var count: Int { opened.load(ordering: .relaxed) }
}
