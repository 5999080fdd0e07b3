import Foundation

/// One part of a `multipart/form-data` body, as a server reads it.
public struct MultipartPart: Sendable {
  /// The part's header fields, in order.
  public var headers: [MockHeader]
  /// Where the part's content lies in the whole body, in bytes from its start.
  public var contentRange: Range<Int64>
  /// The content, when the body was parsed from memory; `nil` when it was parsed from a file
  /// (read ``contentRange`` of the file instead).
  public var content: Data?

  /// Creates a part.
  public init(headers: [MockHeader], contentRange: Range<Int64>, content: Data? = nil) {
    self.headers = headers
    self.contentRange = contentRange
    self.content = content
  }

  /// The value of the first header field named `name`, compared case-insensitively.
  public func header(_ name: String) -> String? {
    headers.firstValue(named: name)
  }

  /// The `name` parameter of `Content-Disposition`, as written (HTML's `%22`, `%0D`, `%0A`
  /// escapes are not undone).
  public var name: String? { dispositionParameter("name") }

  /// The `filename` parameter of `Content-Disposition`, as written.
  public var filename: String? { dispositionParameter("filename") }

  /// The `filename*` parameter of `Content-Disposition` (RFC 8187), decoded from
  /// `UTF-8''…`; `nil` when absent or not UTF-8.
  public var extendedFilename: String? {
    guard let value = dispositionParameter("filename*") else { return nil }
    let prefix = "utf-8''"
    guard value.lowercased().hasPrefix(prefix) else { return nil }
    return String(value.dropFirst(prefix.count)).removingPercentEncoding
  }

  /// The part's `Content-Type`, if it has one.
  public var contentType: String? { header("Content-Type") }

  /// The size of the content in bytes.
  public var contentLength: Int64 { contentRange.upperBound - contentRange.lowerBound }

  /// A parameter of `Content-Disposition`, quotes removed.
  private func dispositionParameter(_ wanted: String) -> String? {
    guard let disposition = header("Content-Disposition") else { return nil }
    var parameters: [Substring] = []
    var quoted = false
    var start = disposition.startIndex
    for index in disposition.indices {
      let character = disposition[index]
      if character == "\"" { quoted.toggle() }
      if character == ";" && !quoted {
        parameters.append(disposition[start..<index])
        start = disposition.index(after: index)
      }
    }
    parameters.append(disposition[start...])
    for parameter in parameters.dropFirst() {
      guard let equals = parameter.firstIndex(of: "=") else { continue }
      let key = parameter[..<equals].trimmingCharacters(in: .whitespaces)
      guard asciiCaseInsensitiveEquals(key, wanted) else { continue }
      var value = parameter[parameter.index(after: equals)...].trimmingCharacters(
        in: .whitespaces)
      if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
        value = String(value.dropFirst().dropLast())
      }
      return value
    }
    return nil
  }
}
