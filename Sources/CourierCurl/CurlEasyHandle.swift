internal import CCourierCurl

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

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
  /// The transport's name-resolution overrides as `CURLOPT_RESOLVE` lines, made the first
  /// time a transfer needs them: libcurl reads the list (without copying it) at the start of
  /// every transfer, so it lives as long as the handle. The transport's settings never change,
  /// so one list serves every transfer.
  private var resolveLines: ResolveLines?
  /// The last remote address read on this handle (``remoteAddress(ip:port:)``): libcurl's
  /// text of the IP, the port, and the text made of them.
  private let lastIP: UnsafeMutablePointer<CChar>
  private var lastPort = -1
  private var lastAddress: String?
  /// Room for the longest IP text (`INET6_ADDRSTRLEN`, 46) and its terminator.
  private static let ipCapacity = 64

  /// A `CURLOPT_RESOLVE` list, or why it could not be made.
  typealias ResolveLines = Result<
    UnsafeMutablePointer<curl_slist>, CurlTransport.NameResolution.OverrideProblem
  >

  init?() {
    guard let easy = courier_curl_easy_init() else { return nil }
    self.easy = easy
    errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
    errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    lastIP = .allocate(capacity: Self.ipCapacity)
    lastIP.initialize(repeating: 0, count: Self.ipCapacity)
  }

  /// `Response.Timings.remoteAddress` for libcurl's `CURLINFO_PRIMARY_IP` and `_PORT`
  /// (``CurlTimes/address(ip:port:)``). A handle's transfers mostly go over one kept
  /// connection, so the last text is kept and given again while the IP and the port are the
  /// same: making it costs a C string's conversion and an interpolation, more than every
  /// other part of the timings together (callgrind).
  func remoteAddress(ip: UnsafePointer<CChar>, port: Int) -> String {
    if port == lastPort, let lastAddress, strcmp(ip, lastIP) == 0 { return lastAddress }
    let text = CurlTimes.address(ip: String(cString: ip), port: port)
    if strlen(ip) < Self.ipCapacity {
      strcpy(lastIP, ip)
      lastPort = port
      lastAddress = text
    }
    return text
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

  /// The `CURLOPT_RESOLVE` list for `overrides` (the same for every call on one handle), or
  /// why an override is refused.
  func resolveList(for overrides: [CurlTransport.NameResolution.Override]) -> ResolveLines {
    if let resolveLines { return resolveLines }
    let result = Self.makeResolveList(overrides)
    resolveLines = result
    return result
  }

  private static func makeResolveList(
    _ overrides: [CurlTransport.NameResolution.Override]
  ) -> ResolveLines {
    var list: UnsafeMutablePointer<curl_slist>?
    for override in overrides {
      switch override.resolveLine() {
      case .success(let line):
        guard let appended = courier_curl_slist_append(list, line) else {
          courier_curl_slist_free_all(list)
          return .failure(.init(message: "no memory for the overrides"))
        }
        list = appended
      case .failure(let problem):
        courier_curl_slist_free_all(list)
        return .failure(problem)
      }
    }
    guard let list else { return .failure(.init(message: "there is no override")) }
    return .success(list)
  }

  deinit {
    courier_curl_easy_cleanup(easy)
    errorBuffer.deallocate()
    lastIP.deallocate()
    // After the cleanup: libcurl no longer points to it.
    if case .success(let list) = resolveLines { courier_curl_slist_free_all(list) }
  }
}
