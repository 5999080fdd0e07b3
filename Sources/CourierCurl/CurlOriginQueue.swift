import CourierCore
import Foundation

/// The transfers a ``CurlLoopCore`` has in libcurl per origin (host and port, as libcurl
/// counts connections per host), and those waiting their turn, in the order they came.
///
/// Requests beyond ``limit`` to one origin wait here, not inside libcurl: libcurl 7.88 keeps
/// its own waiting transfers in a list that every finished transfer walks
/// (`curl_multi_remove_handle`), so a thousand requests queued there for eight connections cost
/// each request several times its own work, and each of them held an easy handle and its
/// buffers while it waited. Waiting here costs a ticket, and libcurl only ever holds what it
/// can run. Used under the engine lock only.
struct CurlOriginQueue {
  /// One waiting request and when it began to wait.
  struct Waiting {
    let ticket: CurlTicket
    let since: ContinuousClock.Instant
  }

  /// A first-in, first-out line of waiting requests, from which any one can leave in constant
  /// time: a cancelled request leaves a hole (`nil`) found through ``positions``, so cancelling
  /// a line of thousands costs each a lookup, not a copy of the line.
  private struct Line {
    var entries: [Waiting?] = []
    var head = 0
    /// The sequence number of `entries[0]`; each entry's is its index plus this.
    var base = 0
    /// Each waiting ticket's sequence number.
    var positions: [ObjectIdentifier: Int] = [:]

    var isEmpty: Bool { positions.isEmpty }

    mutating func append(_ waiting: Waiting) {
      positions[ObjectIdentifier(waiting.ticket)] = base + entries.count
      entries.append(waiting)
    }

    mutating func popFirst() -> Waiting? {
      while head < entries.count {
        let first = entries[head]
        entries[head] = nil
        head += 1
        guard let first else { continue }
        positions[ObjectIdentifier(first.ticket)] = nil
        compact()
        return first
      }
      compact()
      return nil
    }

    /// Takes `ticket` out; `false` when it was not in the line.
    mutating func remove(_ ticket: CurlTicket) -> Bool {
      guard let position = positions.removeValue(forKey: ObjectIdentifier(ticket)) else {
        return false
      }
      entries[position - base] = nil
      compact()
      return true
    }

    /// Takes out the entries `leaves` picks, keeping the others in order.
    mutating func removeAll(where leaves: (Waiting) -> Bool) -> [Waiting] {
      var removed: [Waiting] = []
      for index in head..<entries.count {
        guard let entry = entries[index], leaves(entry) else { continue }
        removed.append(entry)
        entries[index] = nil
        positions[ObjectIdentifier(entry.ticket)] = nil
      }
      if !removed.isEmpty { compact() }
      return removed
    }

    /// Drops the holes before the first waiting entry, and the spent front or, when holes are
    /// most of the line, every hole, so that a line whose requests keep leaving never grows.
    private mutating func compact() {
      while head < entries.count, entries[head] == nil { head += 1 }
      if head == entries.count {
        base += head
        entries.removeAll(keepingCapacity: true)
        head = 0
      } else if head >= 64, head * 2 >= entries.count {
        base += head
        entries.removeFirst(head)
        head = 0
      } else if entries.count - head >= 64, positions.count * 2 < entries.count - head {
        var kept: [Waiting?] = []
        kept.reserveCapacity(positions.count)
        base += entries.count
        for case let entry? in entries[head...] {
          positions[ObjectIdentifier(entry.ticket)] = base + kept.count
          kept.append(entry)
        }
        entries = kept
        head = 0
      }
    }
  }

  /// The most transfers an `http` origin may have in libcurl at once: one per connection.
  let limit: Int
  /// The same for an `https` origin: more when connections may carry several transfers
  /// (HTTP/2, which libcurl negotiates over TLS only).
  let secureLimit: Int
  private var active: [String: Int] = [:]
  private var lines: [String: Line] = [:]
  /// Where ``waitingCount`` is published for readers without the engine lock.
  private let gauge: CurlPoolGauge?
  /// How many requests wait, over all origins.
  private(set) var waitingCount = 0 {
    didSet { gauge?.publish(waiting: waitingCount) }
  }

  init(gauge: CurlPoolGauge? = nil, limit: Int, secureLimit: Int? = nil) {
    self.gauge = gauge
    self.limit = max(1, limit)
    self.secureLimit = max(1, secureLimit ?? limit)
  }

  /// The limit of an origin, `https` or not.
  func limit(secure: Bool) -> Int { secure ? secureLimit : limit }

  /// The key libcurl groups a URL's connections under: its host, lowercased, and its port
  /// (the scheme's default when the URL names none); and whether the URL's scheme is `https`.
  /// Read from the URL's text in one pass: asking `URL` for its host and port parses it again,
  /// several times the cost.
  static func originAndScheme(of url: URL) -> (origin: String, secure: Bool) {
    var text = url.absoluteString
    return text.withUTF8 { bytes -> (origin: String, secure: Bool)? in
      // scheme "://" [userinfo "@"] host [":" port] ("/" | "?" | "#" | end)
      guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
        bytes.count > colon + 2, bytes[colon + 1] == UInt8(ascii: "/"),
        bytes[colon + 2] == UInt8(ascii: "/")
      else { return nil }
      let secure =
        colon == 5
        && zip(bytes[0..<5], "https".utf8).allSatisfy { $0 | 0x20 == $1 }
      var start = colon + 3
      var end = start
      while end < bytes.count, !Self.endsAuthority(bytes[end]) {
        if bytes[end] == UInt8(ascii: "@") { start = end + 1 }
        end += 1
      }
      // The port's colon: the last one, unless it is inside an IPv6 literal's brackets.
      var portColon: Int?
      var index = end - 1
      while index >= start {
        let byte = bytes[index]
        if byte == UInt8(ascii: ":") {
          portColon = index
          break
        }
        if byte == UInt8(ascii: "]") { break }
        index -= 1
      }
      let hostEnd = portColon ?? end
      let port = bytes[(portColon.map { $0 + 1 } ?? end)..<end]
      let defaultPort: StaticString = secure ? "443" : "80"
      let length =
        hostEnd - start + 1 + (port.isEmpty ? defaultPort.utf8CodeUnitCount : port.count)
      // Written in place: a short key (up to 15 bytes) is a small string, with no allocation.
      let origin = String(unsafeUninitializedCapacity: length) { key in
        var at = 0
        for byte in bytes[start..<hostEnd] {
          key[at] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
          at += 1
        }
        key[at] = UInt8(ascii: ":")
        at += 1
        if port.isEmpty {
          defaultPort.withUTF8Buffer { digits in
            for digit in digits {
              key[at] = digit
              at += 1
            }
          }
        } else {
          for digit in port {
            key[at] = digit
            at += 1
          }
        }
        return at
      }
      return (origin, secure)
    }
      ?? (
        "\((url.host ?? "").lowercased()):\(url.port ?? 0)", url.scheme?.lowercased() == "https"
      )
  }

  private static func endsAuthority(_ byte: UInt8) -> Bool {
    byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#")
  }

  /// Counts a transfer to `origin` in and returns `true` when the origin is below its limit
  /// (``secureLimit`` for an `https` one); `false` (nothing counted) when the request must wait.
  mutating func admit(_ origin: String, secure: Bool = false) -> Bool {
    // One lookup: the count is read and raised in place.
    var admitted = false
    Self.raise(
      &active[origin, default: 0], below: limit(secure: secure), admitted: &admitted)
    return admitted
  }

  private static func raise(_ count: inout Int, below limit: Int, admitted: inout Bool) {
    guard count < limit else { return }
    count += 1
    admitted = true
  }

  /// Puts `ticket` at the end of `origin`'s line.
  mutating func wait(_ ticket: CurlTicket, for origin: String, since: ContinuousClock.Instant) {
    lines[origin, default: Line()].append(Waiting(ticket: ticket, since: since))
    waitingCount += 1
  }

  /// Counts a transfer to `origin` out; returns the request waiting longest for it, counted in
  /// already, if one waits.
  mutating func finished(_ origin: String) -> Waiting? {
    if waitingCount > 0, let next = lines[origin]?.popFirst() {
      waitingCount -= 1
      if lines[origin]?.isEmpty == true { lines[origin] = nil }
      return next
    }
    guard let index = active.index(forKey: origin) else { return nil }
    if active.values[index] <= 1 {
      active.remove(at: index)
    } else {
      active.values[index] -= 1
    }
    return nil
  }

  /// Takes `ticket` out of its line; `false` when it was not waiting.
  mutating func remove(_ ticket: CurlTicket, from origin: String) -> Bool {
    guard lines[origin]?.remove(ticket) == true else { return false }
    waitingCount -= 1
    if lines[origin]?.isEmpty == true { lines[origin] = nil }
    return true
  }

  /// Takes out every waiting request whose ``Request/timeout`` has passed at `now`.
  mutating func removeExpired(at now: ContinuousClock.Instant) -> [Waiting] {
    guard waitingCount > 0 else { return [] }
    var expired: [Waiting] = []
    for origin in Array(lines.keys) {
      let removed =
        lines[origin]?.removeAll { entry in
          entry.ticket.request.timeout.map { entry.since + $0 <= now } ?? false
        } ?? []
      guard !removed.isEmpty else { continue }
      expired += removed
      waitingCount -= removed.count
      if lines[origin]?.isEmpty == true { lines[origin] = nil }
    }
    return expired
  }

  /// Takes out every waiting request.
  mutating func removeAllWaiting() -> [Waiting] {
    var all: [Waiting] = []
    for origin in Array(lines.keys) {
      while let next = lines[origin]?.popFirst() { all.append(next) }
    }
    lines = [:]
    waitingCount = 0
    return all
  }
}
