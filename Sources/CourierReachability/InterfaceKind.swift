/// The kind of network interface a usable path goes through.
public enum InterfaceKind: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
  /// Ethernet and other cabled links.
  case wired
  /// Wi-Fi (802.11).
  case wifi
  /// A mobile data modem (`wwan*`, `rmnet*` on Linux).
  case cellular
  /// The loopback interface.
  case loopback
  /// Anything else: tunnels, VPNs, bridges of unknown type.
  case other

  /// The kind's name: `"wired"`, `"wifi"`, ….
  public var description: String { rawValue }
}
