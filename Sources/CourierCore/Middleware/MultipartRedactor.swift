import Foundation

/// Hides the contents of listed parts of a `multipart/…` body (RFC 2046 §5.1, RFC 7578),
/// keeping every delimiter, header and unlisted part as written. Works part by part on the
/// bytes, so binary file parts pass through and a truncated body is redacted up to its end.
enum MultipartRedactor {
  /// `body` with each part named by `redaction` replaced by `***` and each JSON or form part
  /// redacted inside; `nil` when no delimiter line of `boundary` occurs in it.
  static func redact(_ body: [UInt8], boundary: [UInt8], with redaction: Redaction) -> [UInt8]? {
    let delimiter = Array("--".utf8) + boundary
    guard var delimiterStart = firstDelimiter(delimiter, in: body, from: 0) else { return nil }
    var output: [UInt8] = []
    output.reserveCapacity(body.count)
    var copied = 0  // body[..<copied] is in output
    while true {
      // The delimiter line: `--boundary`, then `--` for the last, or padding and a line end.
      var index = delimiterStart + delimiter.count
      if body[index...].starts(with: "--".utf8) {
        output += body[copied...]
        return output
      }
      index = body[index...].firstIndex(of: 0x0A).map { $0 + 1 } ?? body.count
      output += body[copied..<index]
      // The part runs to the line end before the next delimiter, or to the end.
      let next = firstDelimiter(delimiter, in: body, from: index)
      var partEnd = body.count
      if let next {
        partEnd = next - 1  // the LF
        if partEnd > index, body[partEnd - 1] == 0x0D { partEnd -= 1 }
        partEnd = max(index, partEnd)
      }
      output += part(body[index..<partEnd], with: redaction)
      copied = partEnd
      guard let next else { return output }
      delimiterStart = next
    }
  }

  /// The start of the first delimiter line at or after `start`: `delimiter` at the start of
  /// the body or of a line.
  private static func firstDelimiter(
    _ delimiter: [UInt8], in body: [UInt8], from start: Int
  )
    -> Int?
  {
    var index = start
    while index + delimiter.count <= body.count {
      if (index == 0 || body[index - 1] == 0x0A),
        body[index..<(index + delimiter.count)].elementsEqual(delimiter)
      {
        return index
      }
      guard let newline = body[index...].firstIndex(of: 0x0A) else { return nil }
      index = newline + 1
    }
    return nil
  }

  /// One part, headers and content, redacted.
  private static func part(_ part: ArraySlice<UInt8>, with redaction: Redaction) -> [UInt8] {
    // The header block ends at the first empty line.
    var lineStart = part.startIndex
    var contentStart: Int?
    var headers: [(name: String, value: String)] = []
    while lineStart < part.endIndex {
      let lineEnd = part[lineStart...].firstIndex(of: 0x0A) ?? part.endIndex
      var line = part[lineStart..<lineEnd]
      if line.last == 0x0D { line = line.dropLast() }
      if line.isEmpty {
        contentStart = min(lineEnd + 1, part.endIndex)
        break
      }
      let text = String(decoding: line, as: UTF8.self)
      if let colon = text.firstIndex(of: ":") {
        headers.append(
          (
            text[..<colon].trimmingCharacters(in: .whitespaces).lowercased(),
            text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
          ))
      }
      lineStart = lineEnd + 1
    }
    // A part cut before its content has nothing to hide.
    guard let contentStart else { return Array(part) }
    let head = Array(part[..<contentStart])
    let content = part[contentStart...]
    let disposition = headers.first { $0.name == "content-disposition" }?.value ?? ""
    if let name = parameter("name", in: disposition), redaction.hidesBodyKey(name) {
      return head + Array(Redaction.marker.utf8)
    }
    let type = headers.first { $0.name == "content-type" }?.value
    if case .multipart(let boundary) = BodyShape(contentType: type, text: nil) {
      return head + (redact(Array(content), boundary: boundary, with: redaction) ?? Array(content))
    }
    guard let text = String(validating: content, as: UTF8.self),
      let redacted = redaction.redactedBody(text, contentType: type)
    else { return Array(part) }
    return head + Array(redacted.utf8)
  }

  /// The value of parameter `wanted` of a `Content-Disposition` value (`form-data; name="a"`),
  /// quotes removed; semicolons inside quotes do not separate.
  private static func parameter(_ wanted: String, in disposition: String) -> String? {
    var parameters: [Substring] = []
    var quoted = false
    var start = disposition.startIndex
    for index in disposition.indices {
      switch disposition[index] {
      case "\"": quoted.toggle()
      case ";" where !quoted:
        parameters.append(disposition[start..<index])
        start = disposition.index(after: index)
      default: break
      }
    }
    parameters.append(disposition[start...])
    for parameter in parameters.dropFirst() {
      guard let equals = parameter.firstIndex(of: "=") else { continue }
      guard parameter[..<equals].trimmingCharacters(in: .whitespaces).lowercased() == wanted
      else { continue }
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
