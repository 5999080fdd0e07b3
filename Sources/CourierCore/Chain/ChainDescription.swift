extension Client {
  /// What will happen to a request sent with this client, in order: every middleware,
  /// outermost first, with its key settings, then the transport.
  ///
  /// Print it to check a composed client, for example one built by `Client.standard`:
  ///
  /// ```swift
  /// import Courier
  /// import CourierTesting
  ///
  /// let client = Client(
  ///   transport: StubTransport(),
  ///   middleware: [RetryMiddleware(), TimeoutMiddleware(), LoggingMiddleware(level: .basic)])
  /// print(client.chainDescription)
  /// // 1. RetryMiddleware(3 attempts; backoff 0.5 s × 2, full jitter, cap 30 s; …)
  /// // 2. TimeoutMiddleware(attempt 30 s; overall 60 s)
  /// // 3. LoggingMiddleware(basic; sink StandardErrorLogSink; redaction: 6 headers, …)
  /// // 4. ResponseValidation(status and envelope checks of the response pipeline) — added by the client
  /// // → StubTransport(…)
  /// ```
  ///
  /// A middleware or transport that conforms to `CustomStringConvertible` is shown by its
  /// `description`; any other by its type name only (never its stored properties, which may
  /// hold credentials). Every built-in one describes its settings without header values or
  /// other secrets.
  public var chainDescription: String {
    var lines: [String] = []
    let placed = middleware.contains { $0 is ResponseValidation }
    for (index, layer) in Self.withValidation(middleware).enumerated() {
      let added = !placed && layer is ResponseValidation
      lines.append(
        "\(index + 1). \(DescriptionText.summary(of: layer))\(added ? " — added by the client" : "")"
      )
    }
    lines.append("→ \(DescriptionText.summary(of: transport))")
    return lines.joined(separator: "\n")
  }
}

extension ResponseValidation: CustomStringConvertible {
  /// `ResponseValidation(status and envelope checks of the response pipeline)`.
  public var description: String {
    "ResponseValidation(status and envelope checks of the response pipeline)"
  }
}
