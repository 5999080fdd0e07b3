internal import CCourierCurl

/// A libcurl easy handle kept by a ``CurlLoopCore`` from one transfer to the next, with its
/// error buffer and header lines. Used only under the event loop's engine lock.
///
/// Kept so that transfers do not create and destroy a handle each; it is reset
/// (`curl_easy_reset`) before every reuse, so no option of one transfer reaches the next.
final class CurlEasyHandle {
  /// The easy handle.
  let easy: UnsafeMutableRawPointer
  /// libcurl's `CURLOPT_ERRORBUFFER`, `CURL_ERROR_SIZE` bytes.
  let errorBuffer: UnsafeMutablePointer<CChar>
  /// The header lines of this handle's transfers, whose nodes the next transfer reuses.
  let headerList = CurlHeaderList()

  init?() {
    guard let easy = courier_curl_easy_init() else { return nil }
    self.easy = easy
    errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
    errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
  }

  /// Makes the handle ready for another transfer: resets every option, so libcurl no longer
  /// points into the header list, whose nodes the next transfer may relink or free.
  func prepareForReuse() {
    courier_curl_easy_reset(easy)
    errorBuffer[0] = 0
  }

  deinit {
    courier_curl_easy_cleanup(easy)
    errorBuffer.deallocate()
  }
}
