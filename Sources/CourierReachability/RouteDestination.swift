#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// An IP address that a request is sent to, for asking a ``PathMonitor`` whether the system
/// has a route to it (``PathMonitor/route(to:)``).
///
/// Made from a URL's host when that host is an IP literal: `10.0.0.7`, `2001:db8::7` or
/// `[2001:db8::7]`, and the other IPv4 forms that libcurl's URL parser reads as an address
/// and connects to without resolving anything (as `inet_aton` and the WHATWG URL standard
/// do): one to four dot-separated numbers, each decimal, octal with a leading `0` or
/// hexadecimal with `0x`, the last filling the bytes the others leave — `127.1` is
/// 127.0.0.1, `0x7f.1` and `2130706433` too, `10.1` is 10.0.0.1. A host name, or an IPv6
/// address with a zone (`fe80::1%eth0`), gives `nil`: its address is not known before it is
/// resolved, so it is never refused on a route lookup. An IPv4-mapped IPv6 address
/// (`::ffff:10.0.0.7`) is taken as the IPv4 address it carries, which is the route a
/// connection to it uses.
///
/// ```swift
/// let destination = RouteDestination("[2001:db8::7]")
/// print(destination.map { "\($0)" } ?? "a host name")  // "2001:db8::7"
/// print(RouteDestination("127.1").map { "\($0)" } ?? "a host name")  // "127.0.0.1"
/// print(RouteDestination("api.example.com") == nil)  // "true"
/// ```
public struct RouteDestination: Hashable, Sendable, CustomStringConvertible {
  /// The address family.
  public enum Family: Hashable, Sendable {
    /// IPv4: 4 bytes.
    case ipv4
    /// IPv6: 16 bytes.
    case ipv6
  }

  /// IPv4 or IPv6.
  public let family: Family
  /// The address in network byte order: 4 bytes for IPv4, 16 for IPv6.
  public let bytes: [UInt8]

  /// The address `host` spells, brackets allowed around an IPv6 literal; `nil` when `host` is
  /// not an IP literal (a name, an address with a zone).
  public init?(_ host: String) {
    var text = Substring(host)
    if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
    guard !text.isEmpty, text.utf8.count <= 45, !text.contains("%") else { return nil }
    if let v4 = Self.ipv4(text) {
      family = .ipv4
      bytes = v4
      return
    }
    #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
      var v6 = in6_addr()
      guard inet_pton(AF_INET6, String(text), &v6) == 1 else { return nil }
      let all = withUnsafeBytes(of: &v6) { Array($0) }
      if all[0..<10].allSatisfy({ $0 == 0 }), all[10] == 0xff, all[11] == 0xff {
        family = .ipv4
        bytes = Array(all[12..<16])
      } else {
        family = .ipv6
        bytes = all
      }
    #else
      return nil
    #endif
  }

  /// Whether a connection to this address stays on this machine: loopback (127.0.0.0/8,
  /// `::1`) or the unspecified address (`0.0.0.0`, `::`), which Linux and the BSDs connect to
  /// loopback.
  var isThisMachine: Bool {
    switch family {
    case .ipv4: bytes.first == 127 || bytes.allSatisfy { $0 == 0 }
    case .ipv6: bytes.dropLast().allSatisfy { $0 == 0 } && (bytes.last ?? 0) <= 1
    }
  }

  /// The IPv4 address `text` spells in a form libcurl's URL parser (`ipv4_normalize`) reads as
  /// one: one to four parts separated by dots, each decimal, octal (a leading `0`) or
  /// hexadecimal (`0x`), every part but the last at most 255 and the last filling the bytes
  /// left. `nil` for anything else, which libcurl resolves as a name or refuses.
  private static func ipv4(_ text: Substring) -> [UInt8]? {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    guard (1...4).contains(parts.count) else { return nil }
    var values: [UInt32] = []
    for part in parts {
      let digits: Substring
      let radix: Int
      if part.count > 2, part.hasPrefix("0x") || part.hasPrefix("0X") {
        (digits, radix) = (part.dropFirst(2), 16)
      } else if part.count > 1, part.hasPrefix("0") {
        (digits, radix) = (part.dropFirst(), 8)
      } else {
        (digits, radix) = (part, 10)
      }
      // Digits only: no sign, no space (which UInt32's parser or inet_aton would let pass).
      guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isHexDigit }),
        let value = UInt32(digits, radix: radix)
      else { return nil }
      values.append(value)
    }
    guard let last = values.last, values.dropLast().allSatisfy({ $0 <= 0xff }) else { return nil }
    let lastBits = 8 * (5 - values.count)
    guard lastBits == 32 || last < UInt32(1) << UInt32(lastBits) else { return nil }
    var address = last
    for (index, value) in values.dropLast().enumerated() {
      address |= value << UInt32(24 - 8 * index)
    }
    return [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: address >> UInt32($0)) }
  }

  /// The address as text: `10.0.0.7`, `2001:db8::7`.
  public var description: String {
    switch family {
    case .ipv4:
      return bytes.map(String.init).joined(separator: ".")
    case .ipv6:
      #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        var address = in6_addr()
        withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: bytes.prefix(16)) }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else {
          return "?"
        }
        return String(
          decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      #else
        return bytes.map { String($0, radix: 16) }.joined(separator: ":")
      #endif
    }
  }
}
