import Foundation

extension CurlTransport.TLS {
  /// A certificate and private key the transport presents when a server asks for one (mutual
  /// TLS), PEM from files or from memory, the key optionally encrypted with a passphrase.
  ///
  /// It belongs to the transport, not to a request: libcurl keeps a connection's TLS session
  /// with the certificate it was made with, so one transport per identity keeps a connection
  /// made with one certificate from carrying a request meant for another. Make a second
  /// ``CurlTransport`` for a second identity.
  ///
  /// The key, its bytes and its passphrase never appear in a description, a log or an error:
  /// ``description``, `debugDescription` and the type's `Mirror` show only where the
  /// certificate comes from and whether a passphrase is set.
  ///
  /// ```swift
  /// var configuration = CurlTransport.Configuration.standard
  /// configuration.tls.clientCertificate = .files(
  ///   certificate: "/etc/courier/client.pem", key: "/etc/courier/client.key")
  /// let transport = CurlTransport(configuration: configuration)
  /// transport.shutdown()
  /// ```
  public struct ClientCertificate: Sendable, Hashable, CustomStringConvertible,
    CustomDebugStringConvertible, CustomReflectable
  {
    /// Where a PEM document comes from.
    enum Source: Sendable, Hashable {
      case file(String)
      case memory(Data)
    }

    let certificate: Source
    /// `nil`: the key is in the certificate's file.
    let key: Source?
    let passphrase: String?

    /// The certificate (`CURLOPT_SSLCERT`) and its key (`CURLOPT_SSLKEY`) from PEM files;
    /// `key` `nil` when the certificate's file holds the key too. `passphrase` decrypts an
    /// encrypted key (`CURLOPT_KEYPASSWD`). The files are read when a connection is made: a
    /// file that cannot be read, a key that does not decrypt, or a key that does not belong
    /// to the certificate fails the request with
    /// ``CourierError/Kind/secureConnectionFailed``, and its `debugDescription` says so.
    public static func files(
      certificate: String, key: String? = nil, passphrase: String? = nil
    ) -> ClientCertificate {
      ClientCertificate(
        certificate: .file(certificate), key: key.map { .file($0) }, passphrase: passphrase)
    }

    /// The certificate and its key as PEM bytes in memory (`CURLOPT_SSLCERT_BLOB`,
    /// `CURLOPT_SSLKEY_BLOB`, which libcurl copies), for a key that comes from a secret store
    /// and should never touch the disk. `passphrase` decrypts an encrypted key. Needs libcurl
    /// 7.71 or later: with an older one every request fails with
    /// ``CourierError/Kind/invalidRequest``.
    public static func pem(
      certificate: Data, key: Data, passphrase: String? = nil
    ) -> ClientCertificate {
      ClientCertificate(
        certificate: .memory(certificate), key: .memory(key), passphrase: passphrase)
    }

    /// Where the certificate and the key come from, and whether a passphrase is set; never
    /// the key's bytes or the passphrase: `ClientCertificate(certificate: file
    /// /etc/courier/client.pem, key: file /etc/courier/client.key, passphrase: none)`.
    public var description: String {
      func name(_ source: Source?, secret: Bool) -> String {
        switch source {
        case .file(let path): "file \(path)"
        case .memory(let data): secret ? "in memory (redacted)" : "\(data.count) bytes in memory"
        case nil: "in the certificate's file"
        }
      }
      return "ClientCertificate(certificate: \(name(certificate, secret: false)), "
        + "key: \(name(key, secret: true)), "
        + "passphrase: \(passphrase == nil ? "none" : "set (redacted)"))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror with ``description`` as its only child, so that `dump` and reflection show no
    /// secret either.
    public var customMirror: Mirror {
      Mirror(self, children: ["summary": description], displayStyle: .struct)
    }
  }
}
