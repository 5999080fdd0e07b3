import Foundation

/// What a body is, for redaction.
enum BodyShape: Equatable {
  case json
  case form
  case multipart(boundary: [UInt8])
  case unknown

  /// The shape `contentType` names, else (when `text` is given) the one the text has.
  init(contentType: String?, text: String?) {
    let media = contentType.map { type in
      (type.split(separator: ";", maxSplits: 1).first ?? "")
        .trimmingCharacters(in: .whitespaces).lowercased()
    }
    if let media, let contentType {
      if media == "application/x-www-form-urlencoded" {
        self = .form
        return
      }
      // A multipart type without a boundary leaves the shape to the text.
      if media.hasPrefix("multipart/"), let boundary = Self.boundary(contentType) {
        self = .multipart(boundary: boundary)
        return
      }
      if media.contains("json") {
        self = .json
        return
      }
    }
    guard let text else {
      self = .unknown
      return
    }
    if Self.isJSON(text) {
      self = .json
    } else if Self.isForm(text) {
      self = .form
    } else if let boundary = Self.leadingBoundary(text.utf8) {
      self = .multipart(boundary: boundary)
    } else {
      self = .unknown
    }
  }

  /// The boundary a multipart body opens with, when its first line is a delimiter line:
  /// `--`, then 1 to 70 of the characters RFC 2046 allows in a boundary, then optional
  /// spaces or tabs and the line end. `nil` for anything else.
  static func leadingBoundary(_ bytes: some Collection<UInt8>) -> [UInt8]? {
    guard bytes.starts(with: "--".utf8) else { return nil }
    var line = Array(bytes.dropFirst(2).prefix { $0 != 0x0A && $0 != 0x0D })
    while let last = line.last, last == 0x20 || last == 0x09 { line.removeLast() }
    let allowed = Set("'()+_,-./:=? ".utf8)
    guard (1...70).contains(line.count),
      line.allSatisfy({ ASCII.isLetter($0) || ASCII.isDigit($0) || allowed.contains($0) })
    else { return nil }
    return line
  }

  /// The `boundary` parameter of a multipart type, quotes removed; `nil` when absent or
  /// empty.
  private static func boundary(_ contentType: String) -> [UInt8]? {
    for parameter in contentType.split(separator: ";").dropFirst() {
      let pair = parameter.split(separator: "=", maxSplits: 1)
      guard pair.count == 2,
        pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "boundary"
      else { continue }
      var value = pair[1].trimmingCharacters(in: .whitespaces)
      if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
        value = String(value.dropFirst().dropLast())
      }
      return value.isEmpty ? nil : Array(value.utf8)
    }
    return nil
  }

  /// Whether `text` is a JSON object or array after any white space and byte order mark.
  static func isJSON(_ text: String) -> Bool {
    var bytes = Substring(text).utf8[...]
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
    bytes = bytes.drop { [0x20, 0x09, 0x0A, 0x0D].contains($0) }
    guard let first = bytes.first, first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    else { return false }
    return (try? JSONSerialization.jsonObject(with: Data(bytes))) != nil
  }

  /// Whether `text` is nothing but `name=value` pairs joined by `&`: no white space, quotes
  /// or brackets, and a non-empty name before an `=` in every pair.
  static func isForm(_ text: String) -> Bool {
    guard !text.isEmpty else { return false }
    let forbidden = Set("\"'<>{}\\`|^".utf8)
    guard !text.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F || forbidden.contains($0) })
    else { return false }
    return text.split(separator: "&", omittingEmptySubsequences: false).allSatisfy { pair in
      guard let equals = pair.firstIndex(of: "=") else { return false }
      return equals != pair.startIndex
    }
  }
}
