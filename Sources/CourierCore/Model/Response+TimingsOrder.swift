extension Response.Timings {
  /// Raises each phase present to the latest phase present before it, so that
  /// `nameLookup ≤ connect ≤ tlsHandshake ≤ requestSent ≤ firstByte ≤ bodyComplete` holds
  /// whatever a transport's clock rounded: what transports call after filling the phases.
  package mutating func orderPhases() {
    var latest = Duration.zero
    func raise(_ phase: inout Duration?) {
      guard let value = phase else { return }
      if value < latest { phase = latest } else { latest = value }
    }
    raise(&nameLookup)
    raise(&connect)
    raise(&tlsHandshake)
    raise(&requestSent)
    raise(&firstByte)
    raise(&bodyComplete)
  }
}
