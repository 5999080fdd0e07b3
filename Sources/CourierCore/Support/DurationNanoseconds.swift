extension Duration {
  /// The duration in whole nanoseconds (rounded toward zero), clamped to `Int64`'s range
  /// (about ±292 years).
  ///
  /// For the request path: `components` divides and multiplies 128-bit numbers in the standard
  /// library, about 200 instructions of code that is cold on every request, where this is one
  /// division of about 45 (callgrind, release build).
  package var clampedNanoseconds: Int64 {
    Int64(clamping: attoseconds / 1_000_000_000)
  }
}
