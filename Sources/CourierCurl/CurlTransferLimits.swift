/// What one transfer may receive.
struct CurlTransferLimits: Sendable {
  /// The most body bytes kept, counted after any decoding libcurl does.
  var maximumResponseBodySize: Int
}
