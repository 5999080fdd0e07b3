internal import CCourierCurl
import CourierCore

/// What libcurl measured of one transfer, as it reports it: each phase in microseconds from
/// the transfer's start (`CURLINFO_…_TIME_T`), 0 for a phase it did not reach, and the
/// connection it went over. ``timings(secure:complete:unixSocketPath:)`` makes
/// ``Response/Timings`` of it.
struct CurlTimes: Equatable {
  var nameLookup: Int64 = 0
  var connect: Int64 = 0
  var appConnect: Int64 = 0
  var preTransfer: Int64 = 0
  var startTransfer: Int64 = 0
  var total: Int64 = 0
  /// The connections libcurl opened for the transfer (`CURLINFO_NUM_CONNECTS`): 0 for one
  /// that went over a kept connection, or that never connected.
  var connectionsOpened = 0
  /// `CURLINFO_PRIMARY_IP` and `_PORT` as ``address(ip:port:)`` writes them; `nil` when the
  /// transfer connected nowhere.
  var remoteAddress: String?
  /// `CURLINFO_HTTP_VERSION`: `CURL_HTTP_VERSION_…`, 0 before a response.
  var httpVersion = 0

  /// Reads the times of `handle`'s transfer, so far or done, with the connection count
  /// already read.
  init(of handle: CurlEasyHandle, connectionsOpened: Int) {
    let easy = handle.easy
    nameLookup = Self.read(CURLINFO_NAMELOOKUP_TIME_T, of: easy)
    connect = Self.read(CURLINFO_CONNECT_TIME_T, of: easy)
    appConnect = Self.read(CURLINFO_APPCONNECT_TIME_T, of: easy)
    preTransfer = Self.read(CURLINFO_PRETRANSFER_TIME_T, of: easy)
    startTransfer = Self.read(CURLINFO_STARTTRANSFER_TIME_T, of: easy)
    total = Self.read(CURLINFO_TOTAL_TIME_T, of: easy)
    self.connectionsOpened = connectionsOpened
    var address: UnsafeMutablePointer<CChar>?
    if courier_curl_easy_getinfo_string(easy, CURLINFO_PRIMARY_IP, &address) == CURLE_OK,
      let address, address[0] != 0
    {
      var port = 0
      _ = courier_curl_easy_getinfo_long(easy, CURLINFO_PRIMARY_PORT, &port)
      remoteAddress = handle.remoteAddress(ip: address, port: port)
    }
    _ = courier_curl_easy_getinfo_long(easy, CURLINFO_HTTP_VERSION, &httpVersion)
  }

  /// Times given as they are (for tests).
  init(
    nameLookup: Int64 = 0, connect: Int64 = 0, appConnect: Int64 = 0, preTransfer: Int64 = 0,
    startTransfer: Int64 = 0, total: Int64 = 0, connectionsOpened: Int = 0, ip: String = "",
    port: Int = 0, httpVersion: Int = 0
  ) {
    self.nameLookup = nameLookup
    self.connect = connect
    self.appConnect = appConnect
    self.preTransfer = preTransfer
    self.startTransfer = startTransfer
    self.total = total
    self.connectionsOpened = connectionsOpened
    remoteAddress = ip.isEmpty ? nil : Self.address(ip: ip, port: port)
    self.httpVersion = httpVersion
  }

  private static func read(_ info: CURLINFO, of easy: UnsafeMutableRawPointer) -> Int64 {
    var value: curl_off_t = 0
    guard courier_curl_easy_getinfo_off_t(easy, info, &value) == CURLE_OK else { return 0 }
    return Int64(value)
  }

  /// The timings these times describe, for a request over TLS (`secure`) or not, whose body
  /// is `complete` (the transfer succeeded; ``Response/Timings/bodyComplete`` is then the
  /// total) or not.
  ///
  /// libcurl reports 0 for a phase it did not reach: such a phase is `nil`, unless a later
  /// one was reached (then it took less than a microsecond). A transfer that went over a kept
  /// connection (none opened, and the request was ready to go) has lookup, connect and, over
  /// TLS, handshake of zero: libcurl 7.88 reports its search for the kept connection as a name
  /// lookup of some microseconds and a connect of 0, which would break the order. Each phase
  /// is at least the one before it, so the order holds whatever libcurl rounds.
  func timings(secure: Bool, complete: Bool, unixSocketPath: String? = nil) -> Response.Timings {
    var timings = Response.Timings()
    let ready = preTransfer > 0 || startTransfer > 0
    let reused = connectionsOpened == 0 && ready
    timings.connectionReused = reused
    if reused {
      timings.nameLookup = .zero
      timings.connect = .zero
      if secure { timings.tlsHandshake = .zero }
    } else {
      let connected = connect > 0 || appConnect > 0 || ready
      timings.nameLookup = nameLookup > 0 || connected ? .microseconds(nameLookup) : nil
      timings.connect = connected ? .microseconds(connect) : nil
      timings.tlsHandshake = appConnect > 0 ? .microseconds(appConnect) : nil
    }
    timings.requestSent = preTransfer > 0 || startTransfer > 0 ? .microseconds(preTransfer) : nil
    timings.firstByte = startTransfer > 0 ? .microseconds(startTransfer) : nil
    timings.bodyComplete = complete ? .microseconds(total) : nil
    timings.orderPhases()
    if let remoteAddress {
      timings.remoteAddress = remoteAddress
    } else if let unixSocketPath, timings.connect != nil {
      timings.remoteAddress = unixSocketPath
    }
    timings.httpVersion = Self.versionName(httpVersion)
    return timings
  }

  /// `127.0.0.1:8080`, or `[::1]:443` for an IPv6 address.
  static func address(ip: String, port: Int) -> String {
    ip.utf8.contains(UInt8(ascii: ":")) ? "[\(ip)]:\(port)" : "\(ip):\(port)"
  }

  /// `HTTP/1.1` for `CURL_HTTP_VERSION_1_1`, and so on; `nil` for 0 (no response) or one
  /// Courier does not know.
  static func versionName(_ version: Int) -> String? {
    switch version {
    case CURL_HTTP_VERSION_1_0: "HTTP/1.0"
    case CURL_HTTP_VERSION_1_1: "HTTP/1.1"
    case CURL_HTTP_VERSION_2_0: "HTTP/2"
    case CURL_HTTP_VERSION_3: "HTTP/3"
    default: nil
    }
  }
}
