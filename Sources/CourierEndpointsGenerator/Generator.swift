/// Turns a checked ``Spec`` into Swift source: a namespace of enums holding one static
/// function per endpoint, each returning a configured `Endpoint<Value>`.
///
/// Text from the spec reaches the source only inside `///` comments, which it cannot end
/// (``SpecText/commentLines(_:)``), and inside string literals, which escape it completely
/// (``literal(_:)``). The types the generator names itself are written with their module
/// (`CourierCore.Endpoint`, `Foundation.Data`, `Swift.String`), so that a namespace of the
/// spec or a type of the target cannot stand in for them; the types the spec names are
/// written as the spec writes them, and ``SpecReader`` refuses a namespace that would hide
/// one of them.
///
/// The output is laid out the way `swift format` lays it out (two-space indents, lines of at
/// most 100 columns, long signatures broken after the parenthesis), so the generated file
/// passes `swift format lint --strict` as it is.
package struct Generator {
  /// The longest line `swift format`'s default configuration allows.
  package static let lineLength = 100

  private var lines: [String] = []
  private let spec: Spec

  private init(spec: Spec) {
    self.spec = spec
  }

  /// The Swift source for `spec`; `specFileName` is named in the header comment.
  package static func generate(_ spec: Spec, specFileName: String) -> String {
    var generator = Generator(spec: spec)
    generator.file(specFileName: specFileName)
    return generator.lines.joined(separator: "\n") + "\n"
  }

  // MARK: - Layout

  private mutating func line(_ indent: Int, _ text: String) {
    lines.append(text.isEmpty ? "" : String(repeating: " ", count: indent) + text)
  }

  /// Writes `text` as `///` lines at `indent`, wrapped at word boundaries; each line break in
  /// the text (`\n`, `\r\n`, `\r` or another of ``SpecText/isLineBreak(_:)``) starts a new
  /// line, so that no text can end a comment line early.
  private mutating func doc(_ indent: Int, _ text: String, continuation: String = "") {
    var first = true
    for paragraph in SpecText.commentLines(text) {
      let prefix = first ? "/// " : "/// " + continuation
      first = false
      let leading = String(paragraph.prefix(while: { $0 == " " }))
      let words = paragraph.split(separator: " ")
      if words.isEmpty {
        line(indent, "///")
        continue
      }
      let width = Self.lineLength - indent
      var current = prefix + leading
      var hasWord = false
      for word in words {
        if hasWord && current.count + 1 + word.count > width {
          line(indent, current)
          current = "/// " + continuation + word
        } else {
          current += (hasWord ? " " : "") + word
        }
        hasWord = true
      }
      line(indent, current)
    }
  }

  /// An argument of a call: text, or a call whose arguments may break over lines.
  enum Argument: ExpressibleByStringLiteral {
    case text(String)
    case call(String, [Argument])

    init(stringLiteral value: String) { self = .text(value) }

    /// The argument on one line.
    var flat: String {
      switch self {
      case .text(let text): text
      case .call(let head, let arguments):
        head + "(" + arguments.map(\.flat).joined(separator: ", ") + ")"
      }
    }
  }

  /// Writes a call, on one line when it fits; otherwise broken after `(` with the arguments
  /// packed on indented lines, as `swift format` does. `hug` keeps the closing parenthesis on
  /// the last argument line (the last call of an expression); otherwise it gets a line of its
  /// own (a call followed by more of a chain). A single argument that is itself a call breaks
  /// the same way, one level in.
  private mutating func call(
    _ indent: Int, _ head: String, _ arguments: [Argument], suffix: String = "", hug: Bool
  ) {
    let single = head + "(" + arguments.map(\.flat).joined(separator: ", ") + ")" + suffix
    if indent + single.count <= Self.lineLength || arguments.isEmpty {
      line(indent, single)
      return
    }
    line(indent, head + "(")
    let argumentIndent = indent + 2
    if arguments.count == 1, case .call(let innerHead, let innerArguments) = arguments[0] {
      call(
        argumentIndent, innerHead, innerArguments, suffix: hug ? ")" + suffix : "", hug: true)
      if !hug { line(indent, ")" + suffix) }
      return
    }
    var current = ""
    var packed: [String] = []
    for (index, argument) in arguments.enumerated() {
      let piece = argument.flat + (index == arguments.count - 1 ? "" : ",")
      if current.isEmpty {
        current = piece
      } else if argumentIndent + current.count + 1 + piece.count <= Self.lineLength {
        current += " " + piece
      } else {
        packed.append(current)
        current = piece
      }
    }
    packed.append(current)
    for (index, text) in packed.enumerated() {
      let isLast = index == packed.count - 1
      line(argumentIndent, isLast && hug ? text + ")" + suffix : text)
    }
    if !hug { line(indent, ")" + suffix) }
  }

  // MARK: - File and namespaces

  private var accessPrefix: String { spec.access == "internal" ? "" : spec.access + " " }

  private mutating func file(specFileName: String) {
    let fileName = SpecText.commentLine(specFileName)
    line(0, "// Generated by courier-endpoints from \(fileName) (spec version \(spec.version)).")
    line(0, "// Do not edit: change the spec, and the build generates this file again.")
    line(0, "")
    let imports = Set(spec.imports + ["Foundation"]).sorted()
    for module in imports { line(0, "import \(module)") }
    line(0, "")
    let summary =
      spec.doc
      ?? "The endpoints of `\(fileName)`, as `Endpoint` values to send with a `Client`."
    doc(0, summary)
    namespace(0, name: spec.namespace, path: [], endpoints: spec.endpoints)
  }

  private mutating func namespace(
    _ indent: Int, name: String, path: [String], endpoints: [Spec.Endpoint]
  ) {
    line(indent, "\(accessPrefix)enum \(name) {")
    var order: [String] = []
    var children: [String: [Spec.Endpoint]] = [:]
    var functions: [String: Spec.Endpoint] = [:]
    for endpoint in endpoints {
      let key = endpoint.name[path.count]
      if children[key] == nil && functions[key] == nil { order.append(key) }
      if endpoint.name.count == path.count + 1 {
        functions[key] = endpoint
      } else {
        children[key, default: []].append(endpoint)
      }
    }
    for (index, key) in order.enumerated() {
      if index > 0 { line(0, "") }
      if let endpoint = functions[key] {
        function(indent + 2, endpoint)
      } else if let members = children[key] {
        let childPath = path + [key]
        doc(
          indent + 2,
          spec.groups[childPath.joined(separator: ".")]
            ?? "Endpoints under `\(([spec.namespace] + childPath).joined(separator: "."))`.")
        namespace(indent + 2, name: key, path: childPath, endpoints: members)
      }
    }
    line(indent, "}")
  }

  // MARK: - Endpoints

  private mutating func function(_ indent: Int, _ endpoint: Spec.Endpoint) {
    doc(indent, endpoint.doc ?? "`\(endpoint.method) \(endpoint.fullPath)`.")
    if endpoint.doc != nil {
      line(indent, "///")
      doc(indent, "`\(endpoint.method) \(endpoint.fullPath)`")
    }
    var arguments: [Argument] = []
    var documented: [(label: String, text: String)] = []
    for parameter in endpoint.parameters {
      arguments.append(.text("\(parameter.label): \(parameter.type)"))
      documented.append(
        (parameter.label, parameter.doc ?? "The `{\(parameter.name)}` part of the path."))
    }
    if let body = endpoint.body {
      switch body.encoding {
      case .json:
        arguments.append(.text("\(body.label): \(body.type ?? "Foundation.Data")"))
        documented.append((body.label, body.doc ?? "The body, sent as JSON."))
      case .data:
        arguments.append(.text("\(body.label): Foundation.Data"))
        documented.append(
          (body.label, body.doc ?? "The body, sent as `\(body.contentType ?? "")`."))
      case .multipart:
        arguments.append(.text("\(body.label): CourierCore.MultipartForm"))
        documented.append(
          (body.label, body.doc ?? "The form, sent as `multipart/form-data`."))
      }
    }
    for item in endpoint.query {
      arguments.append(.text("\(item.label): \(item.type)" + (item.optional ? "? = nil" : "")))
      let standard =
        "The `\(item.name)` query item" + (item.optional ? "; left out when `nil`." : ".")
      documented.append((item.label, item.doc ?? standard))
    }
    if !documented.isEmpty {
      line(indent, "///")
      line(indent, "/// - Parameters:")
      for (label, text) in documented {
        doc(indent, "  - \(label): \(text)", continuation: "    ")
      }
    }
    let value = endpoint.response
    call(
      indent, "\(accessPrefix)static func \(endpoint.name.last ?? "endpoint")", arguments,
      suffix: " -> CourierCore.Endpoint<\(value)> {", hug: false)
    body(indent + 2, endpoint)
    line(indent, "}")
  }

  /// One call of an endpoint's modifier chain: the method and its arguments.
  private typealias Modifier = (head: String, arguments: [Argument])

  private mutating func body(_ indent: Int, _ endpoint: Spec.Endpoint) {
    let hasOptionalQuery = endpoint.query.contains(where: \.optional)
    let modifiers = modifiers(of: endpoint, chainingQuery: !hasOptionalQuery)
    let head = "CourierCore.Endpoint<\(endpoint.response)>"
    let headArguments: [Argument] = [
      .text(".\(endpoint.method.lowercased())"), .text(Self.literal(endpoint.fullPath)),
    ]
    let headCall = (hasOptionalQuery ? "var endpoint = " : "") + head
    call(indent, headCall, headArguments, hug: modifiers.isEmpty)
    // After a head broken over lines, whose `)` has a line of its own, `swift format` puts
    // the chained modifiers at the head's indent; after a head on one line, one level in.
    let headLength = (headCall + "(" + headArguments.map(\.flat).joined(separator: ", ") + ")")
      .count
    let modifierIndent = indent + headLength <= Self.lineLength ? indent + 2 : indent
    for (index, modifier) in modifiers.enumerated() {
      call(
        modifierIndent, modifier.head, modifier.arguments, hug: index == modifiers.count - 1)
    }
    guard hasOptionalQuery else { return }
    queryStatements(indent, endpoint)
  }

  /// The modifiers the endpoint's head is chained with; its query items too when `chainingQuery`.
  private func modifiers(of endpoint: Spec.Endpoint, chainingQuery: Bool) -> [Modifier] {
    var modifiers: [Modifier] = []
    for parameter in endpoint.parameters {
      modifiers.append(
        (".parameter", [.text(Self.literal(parameter.name)), .text(parameter.label)]))
    }
    if chainingQuery {
      for item in endpoint.query {
        modifiers.append((".query", [.text(Self.literal(item.name)), .text(item.label)]))
      }
    }
    for header in spec.headers(of: endpoint) {
      modifiers.append(
        (".header", [.text(Self.literal(header.name)), .text(Self.literal(header.value))]))
    }
    if let body = endpoint.body {
      switch body.encoding {
      case .json: modifiers.append((".jsonBody", [.text(body.label)]))
      case .data:
        modifiers.append(
          (
            ".body",
            [.text(body.label), .text("contentType: " + Self.literal(body.contentType ?? ""))]
          ))
      case .multipart: modifiers.append((".multipartBody", [.text(body.label)]))
      }
    }
    if let keyPath = endpoint.decodeAt {
      modifiers.append((".decoded", [.text("at: " + Self.literal(keyPath))]))
    }
    if let envelope = endpoint.envelope {
      modifiers.append((".envelope", [Self.expression(envelope)]))
    }
    if let retry = endpoint.retry { modifiers.append((".retry", [Self.expression(retry)])) }
    if endpoint.retryable { modifiers.append((".retryable", [])) }
    if let timeout = endpoint.timeout {
      modifiers.append((".timeout", [.text(Self.duration(timeout))]))
    }
    if let deadline = endpoint.deadline {
      modifiers.append((".deadline", [.text(Self.duration(deadline))]))
    }
    return modifiers
  }

  /// The statements that add the query items to `var endpoint`, an optional one only when set.
  private mutating func queryStatements(_ indent: Int, _ endpoint: Spec.Endpoint) {
    for item in endpoint.query {
      if item.optional {
        line(indent, "if let \(item.label) {")
        call(
          indent + 2, "endpoint = endpoint.query",
          [.text(Self.literal(item.name)), .text(item.label)], hug: true)
        line(indent, "}")
      } else {
        call(
          indent, "endpoint = endpoint.query", [.text(Self.literal(item.name)), .text(item.label)],
          hug: true)
      }
    }
    line(indent, "return endpoint")
  }

  // MARK: - Expressions

  /// A Swift string literal whose value is `text`, on one line.
  ///
  /// The quote and the backslash are escaped (so neither `"` nor `\(` can end the literal or
  /// start an interpolation; `#` means nothing in a literal without `#` delimiters), and so is
  /// every character that could end the line or hide in the source: control characters, line
  /// and paragraph separators, format characters (bidirectional overrides, zero-width
  /// characters), spaces other than U+0020, and private-use and unassigned code points, each
  /// as `\u{…}`.
  static func literal(_ text: String) -> String {
    var result = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": result += "\\\""
      case "\\": result += "\\\\"
      case "\n": result += "\\n"
      case "\r": result += "\\r"
      case "\t": result += "\\t"
      default:
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .unassigned:
          result += SpecText.escaped(scalar)
        case .spaceSeparator where scalar != " ":
          result += SpecText.escaped(scalar)
        default:
          result.unicodeScalars.append(scalar)
        }
      }
    }
    return result + "\""
  }

  static func duration(_ milliseconds: Int) -> String {
    milliseconds % 1000 == 0 ? ".seconds(\(milliseconds / 1000))" : ".milliseconds(\(milliseconds))"
  }

  static func expression(_ envelope: Spec.Envelope) -> Argument {
    switch envelope {
    case .codeZero: return ".codeZero"
    case .statusOK: return ".statusOK"
    case .none: return "nil"
    case .custom(let code, let success, let message, let payload):
      let codes = success.map { literal -> String in
        switch literal {
        case .number(let text): text
        case .string(let text): Self.literal(text)
        case .bool(let value): value ? "true" : "false"
        }
      }
      return .call(
        "CourierCore.EnvelopeRule",
        [
          .text("code: \(literal(code))"), .text("success: [\(codes.joined(separator: ", "))]"),
          .text("message: [\(message.map(literal).joined(separator: ", "))]"),
          .text("payload: \(payload.map(literal) ?? "nil")"),
        ])
    }
  }

  static func expression(_ retry: Spec.Retry) -> Argument {
    switch retry {
    case .disabled: return ".disabled"
    case .standard: return ".standard"
    case .policy(let attempts, let baseDelay, let multiplier, let maximumDelay):
      var arguments: [Argument] = []
      if let attempts { arguments.append(.text("maximumAttempts: \(attempts)")) }
      if let baseDelay { arguments.append(.text("baseDelay: \(duration(baseDelay))")) }
      if let multiplier { arguments.append(.text("multiplier: \(multiplier)")) }
      if let maximumDelay { arguments.append(.text("maximumDelay: \(duration(maximumDelay))")) }
      return arguments.isEmpty ? ".standard" : .call("CourierCore.RetryPolicy", arguments)
    }
  }
}
