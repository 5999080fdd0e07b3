import CourierCore
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What one attempt's URLSession task showed of its phases (``Response/Timings``), kept in
/// its ``AttemptObserver``'s state.
///
/// Where URLSession delivers task metrics (`urlSession(_:task:didFinishCollecting:)`, on
/// Apple platforms) they give every phase of the last transaction. swift-corelibs-foundation
/// declares that callback and never calls it, so on Linux the transport measures what it
/// sees itself: the first byte is when the response head reached the delegate, and the body
/// is complete when the task completed; everything before the head stays `nil`.
struct AttemptTimings {
  /// When the attempt, or the redirect hop URLSession follows for it, started.
  var start = ContinuousClock.now
  /// When the last response head reached the delegate.
  var head: ContinuousClock.Instant?
  /// When the task completed, or the caller's session returned the body.
  var end: ContinuousClock.Instant?
  /// The last transaction's phases, when the platform delivered task metrics.
  var collected: Response.Timings?

  /// A redirect hop starts: the phases are the last hop's.
  mutating func restart() {
    start = .now
    head = nil
    end = nil
  }

  /// The phases measured; `complete` when the body is complete at the end (or, for a
  /// streamed body, at its head).
  func timings(complete: Bool, streamed: Bool = false) -> Response.Timings {
    var timings = collected ?? Response.Timings()
    if timings.firstByte == nil, let head { timings.firstByte = head - start }
    if !complete {
      timings.bodyComplete = nil
    } else if streamed {
      timings.bodyComplete = timings.firstByte
    } else if timings.bodyComplete == nil {
      timings.bodyComplete = (end ?? .now) - start
    }
    timings.orderPhases()
    return timings
  }

  /// The phases of task metrics' last transaction, from its fetch start; `nil` when it has
  /// no fetch start (no transaction, or a platform that leaves the dates out).
  static func timings(of metrics: URLSessionTaskMetrics, secure: Bool) -> Response.Timings? {
    guard let last = metrics.transactionMetrics.last else { return nil }
    return timings(
      Transaction(
        fetchStart: last.fetchStartDate, domainLookupEnd: last.domainLookupEndDate,
        secureConnectionStart: last.secureConnectionStartDate,
        secureConnectionEnd: last.secureConnectionEndDate, connectEnd: last.connectEndDate,
        requestStart: last.requestStartDate, responseStart: last.responseStartDate,
        responseEnd: last.responseEndDate, reused: last.isReusedConnection,
        protocolName: last.networkProtocolName, address: last.remoteAddress,
        // An `Int?` on Apple platforms, a `String?` in FoundationNetworking.
        port: last.remotePort.flatMap { Int("\($0)") }),
      secure: secure)
  }

  /// The dates and facts of one transaction of task metrics.
  struct Transaction {
    var fetchStart: Date?
    var domainLookupEnd: Date?
    var secureConnectionStart: Date?
    var secureConnectionEnd: Date?
    var connectEnd: Date?
    var requestStart: Date?
    var responseStart: Date?
    var responseEnd: Date?
    var reused = false
    var protocolName: String?
    var address: String?
    var port: Int?
  }

  /// The phases of `transaction`: the TCP connection ends where the TLS handshake starts
  /// (URLSession's `connectEndDate` includes the handshake); a reused connection has zero
  /// lookup, connect and (over TLS) handshake.
  static func timings(_ transaction: Transaction, secure: Bool) -> Response.Timings? {
    guard let start = transaction.fetchStart else { return nil }
    func since(_ date: Date?) -> Duration? {
      // Whole microseconds: a `Date` holds no finer time, and its sums round.
      date.map { .microseconds(Int64((max(0, $0.timeIntervalSince(start)) * 1e6).rounded())) }
    }
    var timings = Response.Timings()
    timings.connectionReused = transaction.reused
    if transaction.reused {
      timings.nameLookup = .zero
      timings.connect = .zero
      if secure { timings.tlsHandshake = .zero }
    } else {
      timings.nameLookup = since(transaction.domainLookupEnd)
      timings.connect = since(transaction.secureConnectionStart ?? transaction.connectEnd)
      timings.tlsHandshake = since(transaction.secureConnectionEnd)
    }
    timings.requestSent = since(transaction.requestStart)
    timings.firstByte = since(transaction.responseStart)
    timings.bodyComplete = since(transaction.responseEnd)
    if let address = transaction.address, let port = transaction.port {
      timings.remoteAddress = address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)"
    }
    timings.httpVersion = transaction.protocolName.flatMap(versionName)
    timings.orderPhases()
    return timings
  }

  /// `HTTP/1.1` for ALPN's `http/1.1`, `HTTP/2` for `h2`, `HTTP/3` for `h3`.
  static func versionName(_ protocolName: String) -> String? {
    switch protocolName.lowercased() {
    case "http/1.0": "HTTP/1.0"
    case "http/1.1": "HTTP/1.1"
    case "h2", "h2c": "HTTP/2"
    case "h3": "HTTP/3"
    default: nil
    }
  }
}
