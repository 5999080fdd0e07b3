/// A small, fast, deterministic random number generator (SplitMix64, Steele, Lea and Flood,
/// 2014), so that a randomised test can print its seed and a failure can be replayed.
///
/// Not for secrets: the sequence follows from the seed.
///
/// ```swift
/// var generator = SplitMix64(seed: 0xC0FFEE)
/// let pick = Int.random(in: 0..<100, using: &generator)
/// ```
public struct SplitMix64: RandomNumberGenerator, Sendable {
  /// The generator's state; the seed at first.
  public var state: UInt64

  /// Creates a generator whose sequence is fixed by `seed`.
  public init(seed: UInt64) {
    state = seed
  }

  /// The next 64 random bits.
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
