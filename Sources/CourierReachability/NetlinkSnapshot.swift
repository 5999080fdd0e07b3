#if os(Linux)
  import CCourierLinux
  import Glibc

  /// One interface as `getifaddrs` describes it. `package` so that tests can check the
  /// classification rules on made-up interfaces.
  package struct InterfaceFacts {
    package var name: String
    package var index: Int32 = 0
    package var flags: UInt32 = 0
    /// `ifi_type` (ARPHRD_*) from the packet address, when there is one.
    package var hardwareType: UInt16?
    package var hasRoutableAddress = false

    package init(
      name: String, flags: UInt32 = 0, hardwareType: UInt16? = nil, hasRoutableAddress: Bool = false
    ) {
      self.name = name
      self.flags = flags
      self.hardwareType = hardwareType
      self.hasRoutableAddress = hasRoutableAddress
    }

    /// Up, running (carrier present), not loopback, and addressed.
    package var isUsable: Bool {
      let up = flags & UInt32(IFF_UP) != 0
      let running = flags & UInt32(IFF_RUNNING) != 0
      let loopback = flags & UInt32(IFF_LOOPBACK) != 0
      return up && running && !loopback && hasRoutableAddress
    }
  }

  /// Computes a ``PathStatus`` on the monitor thread, in that thread's network namespace.
  package struct Snapshot {
    let queries: Int32
    let readsSysfs: Bool
    private var sequence: UInt32 = 0

    init(queries: Int32, readsSysfs: Bool) {
      self.queries = queries
      self.readsSysfs = readsSysfs
    }

    mutating func status() -> PathStatus {
      let interfaces = Self.interfaces()
      let usable = interfaces.filter(\.isUsable)
      guard !usable.isEmpty else { return .unsatisfied(reason: .noUsableInterface) }
      sequence &+= 1
      guard let routes = Self.defaultRoutes(socket: queries, sequence: sequence) else {
        return .unsatisfied(
          reason: PathStatus.UnsatisfiedReason(
            "routeDumpFailed",
            detail: "the kernel's route table could not be read"))
      }
      let routed = usable.filter { routes.anyInterface || routes.interfaces.contains($0.index) }
      guard !routed.isEmpty else { return .unsatisfied(reason: .noDefaultRoute) }
      return .satisfied(interfaces: Set(routed.map { Self.kind(of: $0, readsSysfs: readsSysfs) }))
    }

    /// Every interface of the calling thread's namespace, from `getifaddrs` (which reads the
    /// kernel over netlink in that namespace).
    static func interfaces() -> [InterfaceFacts] {
      var list: UnsafeMutablePointer<ifaddrs>?
      guard getifaddrs(&list) == 0, let first = list else { return [] }
      defer { freeifaddrs(first) }
      var byName: [String: InterfaceFacts] = [:]
      var order: [String] = []
      var cursor: UnsafeMutablePointer<ifaddrs>? = first
      while let entry = cursor {
        cursor = entry.pointee.ifa_next
        guard let rawName = entry.pointee.ifa_name else { continue }
        let name = String(cString: rawName)
        var facts = byName[name] ?? InterfaceFacts(name: name)
        if byName[name] == nil { order.append(name) }
        facts.flags = entry.pointee.ifa_flags
        if let address = entry.pointee.ifa_addr {
          switch Int32(address.pointee.sa_family) {
          case AF_PACKET:
            address.withMemoryRebound(to: sockaddr_ll.self, capacity: 1) {
              facts.index = $0.pointee.sll_ifindex
              facts.hardwareType = $0.pointee.sll_hatype
            }
          case AF_INET:
            facts.hasRoutableAddress = true
          case AF_INET6:
            let linkLocal = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
              let bytes = $0.pointee.sin6_addr.__in6_u.__u6_addr8
              return bytes.0 == 0xfe && bytes.1 & 0xc0 == 0x80
            }
            if !linkLocal { facts.hasRoutableAddress = true }
          default:
            break
          }
        }
        byName[name] = facts
      }
      return order.compactMap { name in
        guard var facts = byName[name] else { return nil }
        if facts.index == 0 { facts.index = Int32(bitPattern: if_nametoindex(name)) }
        return facts
      }
    }

    /// The interfaces default routes leave through; `anyInterface` when a default route names
    /// none (multipath or nexthop objects), or `nil` when the dump failed.
    static func defaultRoutes(
      socket fd: Int32, sequence: UInt32
    )
      -> (interfaces: Set<Int32>, anyInterface: Bool)?
    {
      var request = ccourier_route_dump_request(sequence)
      let sent = withUnsafeBytes(of: &request) { send(fd, $0.baseAddress, $0.count, 0) }
      guard sent == MemoryLayout<ccourier_route_request>.size else { return nil }
      var interfaces = Set<Int32>()
      var anyInterface = false
      // 32 KiB: larger than a page, as netlink(7) advises, so no dump message is truncated.
      let capacity = 32_768
      let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
      defer { buffer.deallocate() }
      while true {
        let received = recv(fd, buffer, capacity, 0)
        if received < 0 && errno == EINTR { continue }
        guard received > 0 else { return nil }
        var remaining = Int32(received)
        var message: UnsafeMutablePointer<nlmsghdr>? = buffer.assumingMemoryBound(to: nlmsghdr.self)
        while let header = message, ccourier_nlmsg_ok(header, remaining) != 0 {
          defer { message = ccourier_nlmsg_next(header, &remaining) }
          guard header.pointee.nlmsg_seq == sequence else { continue }
          switch Int32(header.pointee.nlmsg_type) {
          case NLMSG_DONE:
            return (interfaces, anyInterface)
          case NLMSG_ERROR:
            return nil
          case Int32(RTM_NEWROUTE):
            switch defaultRouteInterface(header) {
            case .none: break
            case .some(nil): anyInterface = true
            case .some(let index?): interfaces.insert(index)
            }
          default:
            break
          }
        }
      }
    }

    /// For a default unicast route outside the `local` table: its output interface, or
    /// `.some(nil)` when it names none; `nil` for any other route.
    private static func defaultRouteInterface(
      _ header: UnsafeMutablePointer<nlmsghdr>
    )
      -> Int32??
    {
      guard
        header.pointee.nlmsg_len >= ccourier_nlmsg_length(UInt32(MemoryLayout<rtmsg>.size)),
        let payload = ccourier_nlmsg_data(header)
      else { return nil }
      let route = payload.assumingMemoryBound(to: rtmsg.self)
      guard route.pointee.rtm_dst_len == 0, Int(route.pointee.rtm_type) == RTN_UNICAST else {
        return nil
      }
      var table = UInt32(route.pointee.rtm_table)
      var outputInterface: Int32?
      var length = ccourier_rtm_payload(header)
      var attribute = ccourier_rtm_rta(route)
      while let current = attribute, ccourier_rta_ok(current, length) != 0 {
        let payloadLength = Int(ccourier_rta_payload(current))
        if let data = ccourier_rta_data(current), payloadLength >= 4 {
          switch UInt32(current.pointee.rta_type) {
          case RTA_OIF.rawValue: outputInterface = data.loadUnaligned(as: Int32.self)
          case RTA_TABLE.rawValue: table = data.loadUnaligned(as: UInt32.self)
          default: break
          }
        }
        attribute = ccourier_rta_next(current, &length)
      }
      guard table != UInt32(RT_TABLE_LOCAL.rawValue) else { return nil }
      return .some(outputInterface)
    }

    /// The kind of an interface: hardware type first, then sysfs, then the name.
    package static func kind(of interface: InterfaceFacts, readsSysfs: Bool) -> InterfaceKind {
      let name = interface.name
      if ["wwan", "rmnet", "ccmni", "wwp"].contains(where: name.hasPrefix) { return .cellular }
      // ARPHRD_* values from <linux/if_arp.h>, which cannot be imported next to Glibc's
      // <net/if.h>: 1 Ethernet, 772 loopback, 801–803 802.11 (plain, Prism, radiotap),
      // 519 raw IP (qmi_wwan and other modems).
      switch interface.hardwareType {
      case 772: return .loopback
      case 801, 802, 803: return .wifi
      case 519: return .cellular
      case 1, nil:
        if readsSysfs, isWireless(name) { return .wifi }
        if name.hasPrefix("wl") { return .wifi }
        return interface.hardwareType == nil ? .other : .wired
      default:
        return .other
      }
    }

    /// Whether sysfs says `name` is a wireless device (`/sys/class/net/<name>/wireless` or
    /// `…/phy80211` exists).
    private static func isWireless(_ name: String) -> Bool {
      guard !name.contains("/"), name != "..", name != "." else { return false }
      return access("/sys/class/net/\(name)/wireless", F_OK) == 0
        || access("/sys/class/net/\(name)/phy80211", F_OK) == 0
    }
  }
#endif
