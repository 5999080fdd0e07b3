extension CurlTransport {
  /// Trust settings for `https` requests (OpenSSL).
  public struct TLS: Sendable, Hashable {
    /// A PEM file of certificate authorities to trust instead of the system's
    /// (`CURLOPT_CAINFO`); `nil` for the system's trust store.
    public var caBundlePath: String?
    /// The server's public key must match (`CURLOPT_PINNEDPUBLICKEY`): a PEM or DER file, or
    /// `sha256//` base64 hashes separated by `;`. A mismatch fails with
    /// ``CourierError/Kind/secureConnectionFailed``. `nil` for no pinning.
    public var pinnedPublicKey: String?

    /// Creates TLS settings.
    public init(caBundlePath: String? = nil, pinnedPublicKey: String? = nil) {
      self.caBundlePath = caBundlePath
      self.pinnedPublicKey = pinnedPublicKey
    }

    /// The system's trust store, no pinning.
    public static var system: TLS { TLS() }
  }
}
