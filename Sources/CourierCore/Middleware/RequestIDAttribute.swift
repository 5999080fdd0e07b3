/// The trace context ``RequestIDMiddleware`` gave a request.
public enum RequestIDAttribute: RequestAttributeKey {
  /// No id until the middleware assigns one.
  public static let defaultValue: TraceContext? = nil
}
