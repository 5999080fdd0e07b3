internal import CCourierCurl

/// A libcurl easy handle kept by a ``CurlLoopCore`` from one transfer to the next, with its
/// error buffer and a note of what its options hold. Used only under the event loop's engine lock.
///
/// Resetting a handle (`curl_easy_reset`) and setting every option again costs the loop thread
/// work on every request: libcurl frees and re-initialises all its settings and parses the
/// protocol list again. A handle whose last transfer was a plain one
/// (no body, no custom method, no download, no upload progress, and no error) keeps the
/// options every transfer of its transport shares (``isConfigured``); its next transfer sets
/// only the request's own (URL, headers, timeout, callback data). Anything else is reset.
final class CurlEasyHandle {
  /// The easy handle.
  let easy: UnsafeMutableRawPointer
  /// libcurl's `CURLOPT_ERRORBUFFER`, `CURL_ERROR_SIZE` bytes.
  let errorBuffer: UnsafeMutablePointer<CChar>
  /// The options every transfer of the transport shares are set (and nothing else that would
  /// outlive a transfer).
  var isConfigured = false
  /// The last transfer set an option the next one does not set again: reset before reuse.
  var needsReset = false
  /// The header lines of this handle's transfers, whose nodes the next transfer reuses.
  let headerList = CurlHeaderList()

  init?() {
    guard let easy = courier_curl_easy_init() else { return nil }
    self.easy = easy
    errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
    errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
  }

  /// Makes the handle ready for another transfer: resets it when its last transfer asked for
  /// that; otherwise only detaches the request-specific pointers it still holds.
  func prepareForReuse() {
    if needsReset {
      courier_curl_easy_reset(easy)
      isConfigured = false
      needsReset = false
    } else {
      // The next transfer relinks the header list's nodes and frees some: never leave libcurl
      // a pointer into it.
      _ = courier_curl_easy_setopt_pointer(easy, CURLOPT_HTTPHEADER, nil)
    }
    errorBuffer[0] = 0
  }

  deinit {
    courier_curl_easy_cleanup(easy)
    errorBuffer.deallocate()
  }
}
