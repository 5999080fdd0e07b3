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

  /// The duration in seconds, for any duration. `components` traps when the seconds do not
  /// fit `Int64` — `.seconds(Int64.max)` plus `TimeoutMiddleware`'s one-second backstop
  /// crashed a process over URLSession — so nothing that reads a caller's or a server's
  /// duration uses it.
  package var inSeconds: Double { Double(attoseconds) / 1e18 }

  /// The whole seconds (rounded toward zero), clamped to `Int64`'s range.
  package var clampedSeconds: Int64 {
    Int64(clamping: attoseconds / 1_000_000_000_000_000_000)
  }
}
