extension Duration {
  /// The duration in whole nanoseconds (rounded toward zero), clamped to `Int64`'s range
  /// (about ±292 years).
  ///
  /// For the request path: `components` divides and multiplies 128-bit numbers in code of the
  /// standard library that is cold on every request, where this is one division.
  package var clampedNanoseconds: Int64 {
    Int64(clamping: attoseconds / 1_000_000_000)
  }

  /// The duration in seconds, for any duration. `components` traps when the seconds do not
  /// fit `Int64` (`.seconds(Int64.max)` plus a second, say), so nothing that reads a caller's
  /// or a server's duration uses it.
  ///
  /// Through whole nanoseconds when they fit `Int64` (under 292 years): `Double(attoseconds)`
  /// converts an `Int128` through the standard library's unspecialized generic code, long and
  /// cold, and `URLSessionTransport` reads the timeout of every request that has one so.
  package var inSeconds: Double {
    let nanoseconds = clampedNanoseconds
    guard nanoseconds != .max, nanoseconds != .min else { return Double(attoseconds) / 1e18 }
    return Double(nanoseconds) / 1e9
  }

  /// The whole seconds (rounded toward zero), clamped to `Int64`'s range.
  package var clampedSeconds: Int64 {
    Int64(clamping: attoseconds / 1_000_000_000_000_000_000)
  }
}
