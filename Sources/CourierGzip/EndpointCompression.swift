import CourierCore

/// A per-endpoint or per-request choice to compress the request body (`true`) or not
/// (`false`), overriding the ``GzipMiddleware``'s ``RequestCompression/isEnabled``; set it
/// with `Endpoint.compressRequestBody(_:)`. The threshold and the other skip rules still apply.
public enum RequestCompressionAttribute: RequestAttributeKey {
  /// No override: the middleware's setting decides.
  public static let defaultValue: Bool? = nil
}

extension Endpoint {
  /// Compresses this endpoint's request body with gzip (`true`, the default) or never
  /// (`false`), whatever the client's ``GzipMiddleware`` does for other endpoints.
  ///
  /// Bodies below the middleware's threshold, file bodies, bodies that already carry a
  /// `Content-Encoding` and already-compressed formats are still sent as they are.
  ///
  /// ```swift
  /// let upload = Endpoint<Void>(.post, "logs")
  ///   .body(Data(repeating: 65, count: 4096), contentType: "text/plain")
  ///   .compressRequestBody()
  /// try await client.send(upload)
  /// ```
  public func compressRequestBody(_ compress: Bool = true) -> Self {
    attribute(RequestCompressionAttribute.self, compress)
  }
}
