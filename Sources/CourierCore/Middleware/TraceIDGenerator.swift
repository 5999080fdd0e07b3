import Synchronization

/// Where trace and span ids come from: a 64-bit counter, seeded once from the system's
/// random source, scrambled with SplitMix64's finaliser.
///
/// The finaliser is a bijection, so two ids drawn in one process never repeat before 2⁶⁴
/// draws, and the random seed keeps processes apart. Drawing is one atomic add and a few
/// multiplications, where drawing from the system's random source would be a system call per
/// id. The ids are not secrets: they travel in clear in headers and logs.
public enum TraceIDGenerator {
  private static let seed = UInt64.random(in: .min ... .max)
  private static let counter = Atomic<UInt64>(0)

  /// The next id; never the same twice in a process (before 2⁶⁴ draws).
  public static func next() -> UInt64 {
    let count = counter.wrappingAdd(1, ordering: .relaxed).newValue
    var z = seed &+ count &* 0x9E37_79B9_7F4A_7C15
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
