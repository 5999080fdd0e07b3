extension CurlTransport {
  /// Trust settings for `https` requests (OpenSSL), and the client certificate to present.
  public struct TLS: Sendable, Hashable {
    /// A PEM file of certificate authorities to trust instead of the system's
    /// (`CURLOPT_CAINFO`); `nil` for the system's trust store.
    public var caBundlePath: String?
    /// The server's public key must match (`CURLOPT_PINNEDPUBLICKEY`): a PEM or DER file, or
    /// `sha256//` base64 hashes separated by `;`. A mismatch fails with
    /// ``CourierError/Kind/secureConnectionFailed``. `nil` for no pinning.
    public var pinnedPublicKey: String?
    /// The certificate presented to servers that ask for one (mutual TLS); `nil` (the
    /// default) for none. A server that requires one and gets none, or refuses the one it
    /// gets, fails the request with ``CourierError/Kind/secureConnectionFailed`` and a
    /// `debugDescription` that says which (where the server ends the handshake; a server
    /// that answers such a request with an HTTP status instead, as nginx does with `400`, gets
    /// that response).
    public var clientCertificate: ClientCertificate?

    /// Creates TLS settings.
    public init(
      caBundlePath: String? = nil, pinnedPublicKey: String? = nil,
      clientCertificate: ClientCertificate? = nil
    ) {
      self.caBundlePath = caBundlePath
      self.pinnedPublicKey = pinnedPublicKey
      self.clientCertificate = clientCertificate
    }

    /// The system's trust store, no pinning, no client certificate.
    public static var system: TLS { TLS() }
  }
}
