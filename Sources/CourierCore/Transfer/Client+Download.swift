import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension Client {
  /// Downloads the endpoint's response body to `destination`, streamed to disk through the
  /// whole chain (headers and auth, retry, timeout, logging with the body elided) and the
  /// pipeline's status check.
  ///
  /// The body goes to `.<name>.courier-download` in the destination's folder and is renamed
  /// to `destination` (replacing a file there) only when complete and accepted, so the
  /// destination never holds a partial file. A failed download leaves the partial file; the
  /// next `download` to the same destination (or a retry of the same request) resumes it
  /// with `Range` and `If-Range` when the server sent a strong `ETag` or a `Last-Modified`,
  /// and starts again from zero when the server answers `200`. The endpoint's envelope rule
  /// is not applied (the body is not JSON in memory); a non-`2xx` answer fails as
  /// ``CourierError/Kind/httpStatus`` with its body readable on the error's response.
  ///
  /// One download to a destination at a time: another `download` to it while one is under
  /// way in this process fails at once with ``CourierError/Kind/invalidRequest``, sending
  /// nothing, because both would write the same partial file.
  ///
  /// ```swift
  /// let file = URL(fileURLWithPath: "/tmp/image.iso")
  /// let result = try await client.download(Endpoint<Void>(.get, "images/latest"), to: file)
  /// print(result.byteCount, result.resumedFrom)
  /// ```
  ///
  /// - Parameters:
  ///   - resume: Whether a partial file from an earlier attempt is resumed; default `true`.
  ///   - maximumSize: The most bytes the file may hold; default `nil`, no limit (see
  ///     ``DownloadDestination/maximumSize``).
  /// - Throws: ``CourierError``; ``CourierError/Kind/invalidRequest`` when the transport does
  ///   not support downloads, the file cannot be written or another download to `destination`
  ///   is under way; ``CourierError/Kind/bodyTooLarge`` past `maximumSize`.
  public func download<Value>(
    _ endpoint: Endpoint<Value>, to destination: URL, resume: Bool = true,
    maximumSize: Int64? = nil
  ) async throws(CourierError) -> DownloadResult {
    var endpoint = endpoint.attribute(
      DownloadAttribute.self,
      DownloadDestination(url: destination, resumes: resume, maximumSize: maximumSize))
    endpoint.overrides.envelope = .some(nil)
    let request = try request(for: endpoint)
    // Two downloads to one destination would write one partial file: each could move the
    // other's bytes (or a file still being written) into place and report success.
    let claimed = destination.standardizedFileURL.path
    guard DownloadsUnderWay.claim(claimed) else {
      var error = CourierError(
        kind: .invalidRequest,
        debugMessage:
          "another download to \(claimed) is in progress in this process; wait for it to end, "
          + "or download to another file",
        request: request, attempts: 0, stage: "transport")
      error.reason = reasons.reason(for: error, locale: locale)
      throw error
    }
    defer { DownloadsUnderWay.release(claimed) }
    let response: Response
    do {
      response = try await send(request)
    } catch {
      // A complete body the pipeline rejected: nothing is left to resume.
      if let file = error.response?.downloadedFile {
        try? FileManager.default.removeItem(at: file.url)
      }
      throw error
    }
    guard let file = response.downloadedFile else {
      var error = CourierError(
        kind: .invalidRequest,
        debugMessage: "the transport \(type(of: transport)) does not support downloads to a file",
        request: request, response: response, attempts: response.attempts, stage: "transport")
      error.reason = reasons.reason(for: error, locale: locale)
      throw error
    }
    guard rename(file.url.path, destination.path) == 0 else {
      let message = String(cString: strerror(errno))
      var error = CourierError(
        kind: .invalidRequest,
        debugMessage: "cannot move the download into place at \(destination.path): \(message)",
        request: request, response: response, attempts: response.attempts, stage: "transport")
      error.reason = reasons.reason(for: error, locale: locale)
      throw error
    }
    return DownloadResult(
      fileURL: destination, byteCount: file.byteCount, resumedFrom: file.resumedFrom,
      response: response)
  }
}

/// The destinations of the downloads under way in this process (standardized paths), so that
/// ``Client/download(_:to:resume:maximumSize:)`` refuses a second one to the same file.
enum DownloadsUnderWay {
  private static let paths = Mutex<Set<String>>([])

  /// Marks `path` as being downloaded to; `false` when it already is.
  static func claim(_ path: String) -> Bool {
    paths.withLock { $0.insert(path).inserted }
  }

  /// Ends the claim on `path`.
  static func release(_ path: String) {
    _ = paths.withLock { $0.remove(path) }
  }
}
