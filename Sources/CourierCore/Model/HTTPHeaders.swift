/// An ordered list of HTTP header fields with case-insensitive lookup.
///
/// Names and values are checked when they are inserted, not when the request reaches the wire:
/// a name must be an RFC 9110 token and a value must not contain CR, LF, NUL or any other
/// control character except horizontal tab. Anything else throws a ``CourierError`` of kind
/// ``CourierError/Kind/invalidRequest``, so header injection (`"x\r\nEvil: 1"`) cannot happen.
///
/// Order is kept as inserted and one name may carry several values (`Set-Cookie`, `Vary`).
///
/// ```swift
/// var headers = HTTPHeaders()
/// try headers.add(.accept, "application/json")
/// try headers.add("X-Trace", "abc")
/// headers["accept"]  // "application/json"
/// ```
public struct HTTPHeaders: Sendable, Hashable, Sequence, CustomStringConvertible {
  /// A header field name, compared without regard to ASCII case.
  public struct Name: Hashable, Sendable, CustomStringConvertible {
    /// The name as it was written, kept for the wire.
    public let rawName: String

    /// Creates a name, checking that it is an RFC 9110 token.
    ///
    /// - Throws: ``CourierError`` of kind ``CourierError/Kind/invalidRequest`` for an empty
    ///   name or one with a character a token may not hold (space, colon, CR, LF, …).
    public init(_ rawName: String) throws {
      self.init(unchecked: try HTTPToken.checked(rawName, as: "header name"))
    }

    init(unchecked rawName: String) {
      self.rawName = rawName
    }

    /// The name as written.
    public var description: String { rawName }

    /// Two names are equal when they are equal ignoring ASCII case (tokens are ASCII).
    public static func == (lhs: Name, rhs: Name) -> Bool {
      lhs.matches(rhs.rawName)
    }

    /// Hashes the ASCII-lower-cased bytes, without allocating.
    public func hash(into hasher: inout Hasher) {
      for byte in rawName.utf8 { hasher.combine(ASCII.lowercased(byte)) }
      hasher.combine(0xFF as UInt8)
    }

    /// Whether `name` equals this name ignoring ASCII case.
    func matches(_ name: String) -> Bool {
      let lhs = rawName.utf8
      let rhs = name.utf8
      guard lhs.count == rhs.count else { return false }
      // Native strings are contiguous: compare the bytes in place.
      let fast = lhs.withContiguousStorageIfAvailable { left in
        rhs.withContiguousStorageIfAvailable { right in ASCII.equalIgnoringCase(left, right) }
      }
      if let fast = fast ?? nil { return fast }
      return ASCII.equalIgnoringCase(lhs, rhs)
    }

    /// `Accept`
    public static let accept = Name(unchecked: "Accept")
    /// `Accept-Encoding`
    public static let acceptEncoding = Name(unchecked: "Accept-Encoding")
    /// `Accept-Language`
    public static let acceptLanguage = Name(unchecked: "Accept-Language")
    /// `Authorization`
    public static let authorization = Name(unchecked: "Authorization")
    /// `Cache-Control`
    public static let cacheControl = Name(unchecked: "Cache-Control")
    /// `Connection`
    public static let connection = Name(unchecked: "Connection")
    /// `Content-Encoding`
    public static let contentEncoding = Name(unchecked: "Content-Encoding")
    /// `Content-Length`
    public static let contentLength = Name(unchecked: "Content-Length")
    /// `Content-Type`
    public static let contentType = Name(unchecked: "Content-Type")
    /// `Cookie`
    public static let cookie = Name(unchecked: "Cookie")
    /// `Idempotency-Key`
    public static let idempotencyKey = Name(unchecked: "Idempotency-Key")
    /// `Location`
    public static let location = Name(unchecked: "Location")
    /// `Proxy-Authorization`
    public static let proxyAuthorization = Name(unchecked: "Proxy-Authorization")
    /// `Retry-After`
    public static let retryAfter = Name(unchecked: "Retry-After")
    /// `X-Request-ID`
    public static let requestID = Name(unchecked: "X-Request-ID")
    /// `Transfer-Encoding`
    public static let transferEncoding = Name(unchecked: "Transfer-Encoding")
    /// `traceparent` (W3C Trace Context)
    public static let traceparent = Name(unchecked: "traceparent")
    /// `Set-Cookie`
    public static let setCookie = Name(unchecked: "Set-Cookie")
    /// `User-Agent`
    public static let userAgent = Name(unchecked: "User-Agent")
  }

  /// One header field: a name and its value.
  public struct Field: Hashable, Sendable {
    /// The field name.
    public let name: Name
    /// The field value, with leading and trailing spaces and tabs removed.
    public let value: String
  }

  private var fields: [Field]

  /// Creates an empty header list.
  public init() {
    fields = []
  }

  /// Creates a header list from name–value pairs, in order.
  ///
  /// - Throws: ``CourierError`` of kind ``CourierError/Kind/invalidRequest`` on the first
  ///   invalid name or value.
  public init(_ pairs: [(String, String)]) throws {
    fields = []
    fields.reserveCapacity(pairs.count)
    for (name, value) in pairs { try add(name, value) }
  }

  /// Appends a value for `name`, keeping any values already there.
  ///
  /// - Throws: ``CourierError`` of kind ``CourierError/Kind/invalidRequest`` when the value
  ///   holds CR, LF, NUL or another control character, or a non-ASCII character.
  public mutating func add(_ name: Name, _ value: String) throws {
    fields.append(
      Field(name: name, value: try Self.validatedValue(value, forName: name.rawName, sending: true))
    )
  }

  /// Appends a value for the header named `name`, keeping any values already there.
  ///
  /// - Throws: ``CourierError`` of kind ``CourierError/Kind/invalidRequest`` for an invalid
  ///   name or value.
  public mutating func add(_ name: String, _ value: String) throws {
    try add(Name(name), value)
  }

  /// Replaces every value of `name` with `value`, keeping the position of the first one.
  ///
  /// - Throws: ``CourierError`` of kind ``CourierError/Kind/invalidRequest`` for an invalid
  ///   value; the list is unchanged then.
  public mutating func set(_ name: Name, _ value: String) throws {
    set(name, trustedValue: try Self.validatedValue(value, forName: name.rawName, sending: true))
  }

  /// Replaces every value of `name` with `value`, which the caller guarantees is valid to
  /// send (ASCII, no control characters, nothing to trim): a value already checked, or one
  /// Courier formats itself, such as `traceparent`, so it is not scanned again.
  package mutating func set(_ name: Name, trustedValue value: String) {
    let field = Field(name: name, value: value)
    if let first = fields.firstIndex(where: { $0.name == name }) {
      fields[first] = field
      var index = fields.index(after: first)
      while index < fields.endIndex {
        if fields[index].name == name { fields.remove(at: index) } else { index += 1 }
      }
    } else {
      fields.append(field)
    }
  }

  /// Replaces every value of the header named `name` with `value`.
  ///
  /// - Throws: ``CourierError`` of kind ``CourierError/Kind/invalidRequest`` for an invalid
  ///   name or value.
  public mutating func set(_ name: String, _ value: String) throws {
    try set(Name(name), value)
  }

  /// Removes every value of `name`.
  public mutating func remove(_ name: Name) {
    fields.removeAll { $0.name == name }
  }

  /// Removes every value of the header named `name` (compared ignoring case).
  public mutating func remove(_ name: String) {
    fields.removeAll { $0.name.matches(name) }
  }

  /// The first value of `name`, or `nil` when the header is absent.
  public subscript(name: Name) -> String? {
    return fields.first { $0.name == name }?.value
  }

  /// The first value of the header named `name` (compared ignoring case), or `nil`.
  public subscript(name: String) -> String? {
    return fields.first { $0.name.matches(name) }?.value
  }

  /// Every value of `name`, in order.
  public func values(for name: Name) -> [String] {
    fields.filter { $0.name == name }.map(\.value)
  }

  /// Whether at least one value of `name` is present.
  public func contains(_ name: Name) -> Bool {
    fields.contains { $0.name == name }
  }

  /// The fields in order, as the list holds them (no copy): for transports that write them
  /// out.
  package var fieldList: [Field] { fields }

  /// The number of fields (a name with two values counts twice).
  public var count: Int { fields.count }

  /// Whether there are no fields.
  public var isEmpty: Bool { fields.isEmpty }

  /// Iterates over the fields in order.
  public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

  /// The fields as `Name: value` lines, for debugging, with credentials hidden as
  /// ``Redaction/standard`` hides them in logs: the value of `Authorization`, `Cookie`,
  /// `Set-Cookie` and the rest of its names is `***`, and so is every listed query value of a
  /// URL in a value. A description ends up in logs and error descriptions (an error that keeps
  /// the headers prints them); a header list does not know which other names carry a secret,
  /// so read the fields themselves (or log through a ``Redaction`` of your own) when you need
  /// more hidden or more shown.
  public var description: String {
    fields.map { "\($0.name.rawName): \(Redaction.standard.header($0))" }.joined(separator: "\n")
  }

  /// Whether every field could be sent as it is: each value ASCII without control characters
  /// but tab, as `add` requires. A list built with `add` always is; one built
  /// from received fields may not be.
  package var isSendable: Bool {
    fields.allSatisfy { field in
      !field.value.utf8.contains { Self.isForbidden($0, sending: true) }
    }
  }

  /// Whether a value may not hold `byte`: a control character other than tab, DEL, and, in
  /// a value to be sent, anything above ASCII (the rules `validatedValue` enforces).
  private static func isForbidden(_ byte: UInt8, sending: Bool) -> Bool {
    (byte < 0x20 && byte != 0x09) || byte == 0x7F || (sending && byte >= 0x80)
  }

  /// Appends a field received from a peer that already enforced the HTTP grammar (a transport).
  /// Invalid names or values are dropped rather than thrown, since they are not the caller's.
  mutating func appendReceived(_ name: String, _ value: String) {
    guard HTTPToken.isValid(name),
      let value = try? Self.validatedValue(value, forName: name, sending: false)
    else { return }
    fields.append(Field(name: Name(unchecked: name), value: value))
  }

  /// Trims optional white space and rejects control characters (RFC 9110 §5.5); a value to
  /// be sent must also be ASCII.
  ///
  /// Why reject non-ASCII when sending: RFC 9110 §5.5 keeps bytes above 0x7F (`obs-text`)
  /// only for old servers, and HTTP stacks treat them differently (sent as raw UTF-8, read as
  /// Latin-1, or refused), so the same code would mean different things to different peers.
  /// A received value keeps them: they are the peer's.
  private static func validatedValue(
    _ value: String, forName name: String, sending: Bool
  ) throws -> String {
    // One pass over the bytes (native strings are contiguous); the errors are built only on
    // the slow path.
    let scan = value.utf8.withContiguousStorageIfAvailable { bytes in
      ValueScan(bytes, sending: sending)
    }
    if let scan, scan.isClean { return value }
    for byte in value.utf8 where (byte < 0x20 && byte != 0x09) || byte == 0x7F {
      throw CourierError(
        kind: .invalidRequest,
        debugMessage:
          "value of header \(name) contains control character 0x\(String(byte, radix: 16))"
          + " (CR, LF and NUL are never allowed)")
    }
    if sending, let byte = value.utf8.first(where: { $0 >= 0x80 }) {
      throw CourierError(
        kind: .invalidRequest,
        debugMessage:
          "value of header \(name) contains the non-ASCII byte 0x\(String(byte, radix: 16, uppercase: true));"
          + " header values are sent as ASCII (RFC 9110 §5.5): percent-encode the text, or use"
          + " RFC 8187 (`title*=UTF-8''…`) where the header defines it")
    }
    // Bytes, not Characters: a space followed by a combining mark is one Character that is
    // not " ", and would be kept, so the value would reach the wire with leading white space.
    let utf8 = value.utf8
    guard let first = utf8.firstIndex(where: { !ASCII.isOptionalWhitespace($0) }),
      let last = utf8.lastIndex(where: { !ASCII.isOptionalWhitespace($0) })
    else { return "" }
    if first == utf8.startIndex && utf8.index(after: last) == utf8.endIndex { return value }
    // Both ends are next to an ASCII byte or the end, so they are scalar boundaries.
    return String(decoding: utf8[first...last], as: UTF8.self)
  }

  /// What one pass over a value's bytes found: whether it can be kept exactly as it is (no
  /// forbidden byte, no white space to trim at either end).
  private struct ValueScan {
    let isClean: Bool

    init(_ bytes: UnsafeBufferPointer<UInt8>, sending: Bool) {
      var clean = true
      for byte in bytes { clean = clean && !HTTPHeaders.isForbidden(byte, sending: sending) }
      if let first = bytes.first, ASCII.isOptionalWhitespace(first) { clean = false }
      if let last = bytes.last, ASCII.isOptionalWhitespace(last) { clean = false }
      isClean = clean
    }
  }
}

extension HTTPHeaders {
  /// Builds headers from fields a transport received, dropping any that are malformed.
  ///
  /// Use this from a custom ``Transport`` to turn the peer's header list into `HTTPHeaders`.
  public init(received pairs: some Sequence<(String, String)>) {
    fields = []
    fields.reserveCapacity(pairs.underestimatedCount)
    for (name, value) in pairs { appendReceived(name, value) }
  }

  /// Builds headers from a transport's raw header lines (``ReceivedHeaderLines``), dropping
  /// malformed fields as ``init(received:)`` does.
  ///
  /// One pass from the bytes to the fields, checking each name and value once; a block with a
  /// folded line (obs-fold, rare) goes through ``ReceivedHeaderLines/parse(_:)`` instead, which
  /// joins it to the line before.
  package init(receivedLines lines: [UInt8]) {
    if let fields = lines.withUnsafeBufferPointer(Self.unfoldedFields) {
      self.init()
      self.fields = fields
    } else {
      self.init(received: ReceivedHeaderLines.parse(lines))
    }
  }

  /// The valid fields of `bytes` (lines each followed by LF), or `nil` when a line is folded.
  private static func unfoldedFields(_ bytes: UnsafeBufferPointer<UInt8>) -> [Field]? {
    var fields: [Field] = []
    var start = 0
    while start < bytes.count {
      var end = start
      while end < bytes.count, bytes[end] != 0x0A { end += 1 }
      defer { start = end + 1 }
      guard start < end else { continue }
      if ASCII.isOptionalWhitespace(bytes[start]) { return nil }
      guard let colon = (start..<end).first(where: { bytes[$0] == UInt8(ascii: ":") }) else {
        continue
      }
      let name = UnsafeBufferPointer(rebasing: bytes[start..<colon])
      guard !name.isEmpty, name.allSatisfy(HTTPToken.isTokenByte) else { continue }
      var valueStart = colon + 1
      var valueEnd = end
      while valueStart < valueEnd, ASCII.isOptionalWhitespace(bytes[valueStart]) {
        valueStart += 1
      }
      while valueEnd > valueStart, ASCII.isOptionalWhitespace(bytes[valueEnd - 1]) {
        valueEnd -= 1
      }
      let value = UnsafeBufferPointer(rebasing: bytes[valueStart..<valueEnd])
      guard !value.contains(where: { isForbidden($0, sending: false) }) else { continue }
      fields.append(
        Field(
          name: Name(unchecked: String(decoding: name, as: UTF8.self)),
          value: String(decoding: value, as: UTF8.self)))
    }
    return fields
  }

  /// Two header lists are equal when they hold the same fields in the same order.
  public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
    lhs.fields == rhs.fields
  }

  /// Hashes the fields in order.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(fields)
  }
}
