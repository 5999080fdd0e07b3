internal import CCourierCurl
import CourierCore

/// A libcurl failure: its `CURLcode`, libcurl's short text for the code and the detail libcurl
/// wrote into the transfer's error buffer. The ``CourierError/underlying`` of every error
/// ``CurlTransport`` throws for a libcurl failure.
///
/// Its description is for developers and may name the host, so it is only ever shown in a
/// ``CourierError``'s `debugDescription` (where URLs are redacted), never in its reason.
public struct CurlError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The `CURLcode`, for example `7` for `CURLE_COULDNT_CONNECT`.
  public let code: Int
  /// `curl_easy_strerror` for ``code``, for example `Couldn't connect to server`.
  public let summary: String
  /// libcurl's detail from `CURLOPT_ERRORBUFFER`, for example
  /// `Failed to connect to 127.0.0.1 port 1 after 0 ms: Connection refused`; empty when
  /// libcurl wrote none.
  public let detail: String

  /// Creates an error.
  public init(code: Int, summary: String, detail: String) {
    self.code = code
    self.summary = summary
    self.detail = detail
  }

  /// `libcurl error 7 (Couldn't connect to server): Failed to connect to …`, URLs redacted.
  public var description: String {
    let text = "libcurl error \(code) (\(summary))" + (detail.isEmpty ? "" : ": \(detail)")
    return CourierError.redactingURLs(in: text)
  }
}
