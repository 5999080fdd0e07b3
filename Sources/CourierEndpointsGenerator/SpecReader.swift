/// Reads and checks an endpoints spec, collecting every problem as a ``Diagnostic`` with the
/// line and column it was written at.
package struct SpecReader {
  /// The spec version this tool reads.
  package static let supportedVersion = 1

  /// The methods an endpoint may use.
  package static let methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]

  static let specKeys = [
    "version", "namespace", "access", "imports", "doc", "groups", "basePath", "headers",
    "envelope", "endpoints",
  ]
  static let endpointKeys = [
    "name", "doc", "method", "path", "parameters", "query", "headers", "body", "response",
    "decodeAt", "envelope", "retry", "retryable", "timeout", "deadline",
  ]
  static let parameterKeys = ["name", "label", "type", "optional", "doc"]
  static let bodyKeys = ["encoding", "type", "contentType", "label", "doc"]
  static let envelopeKeys = ["code", "success", "message", "payload"]
  static let retryKeys = ["maximumAttempts", "baseDelay", "multiplier", "maximumDelay"]

  private var diagnostics: [Diagnostic] = []

  /// Parses and checks `bytes`.
  ///
  /// - Throws: Every problem found, in the order they occur in the file.
  package static func read(_ bytes: [UInt8]) throws(Diagnostics) -> Spec {
    let root: JSONNode
    do {
      root = try JSONParser.parse(bytes)
    } catch {
      throw Diagnostics(all: [error])
    }
    var reader = SpecReader()
    let spec = reader.spec(root)
    if let spec, reader.diagnostics.isEmpty { return spec }
    let sorted = reader.diagnostics.sorted {
      ($0.location.line, $0.location.column) < ($1.location.line, $1.location.column)
    }
    throw Diagnostics(all: sorted)
  }

  private mutating func report(_ message: String, at location: SourceLocation) {
    diagnostics.append(Diagnostic(message, at: location))
  }

  // MARK: - Objects and values

  /// The members of an object node, after reporting keys outside `allowed`.
  private mutating func members(
    _ node: JSONNode, of what: String, allowed: [String]
  ) -> [String: JSONNode.Member]? {
    guard case .object(let members) = node.value else {
      report("\(what) must be an object, found \(node.kindName)", at: node.location)
      return nil
    }
    var result: [String: JSONNode.Member] = [:]
    for member in members {
      if allowed.contains(member.key) {
        result[member.key] = member
      } else {
        report(
          "unknown key '\(member.key)' in \(what); expected one of: "
            + allowed.joined(separator: ", "),
          at: member.keyLocation)
      }
    }
    return result
  }

  private mutating func string(_ member: JSONNode.Member?) -> String? {
    guard let member else { return nil }
    guard case .string(let text) = member.value.value else {
      report(
        "'\(member.key)' must be a string, found \(member.value.kindName)",
        at: member.value.location)
      return nil
    }
    return text
  }

  /// A string that goes into a doc comment: line breaks and tabs are allowed (each line
  /// break starts a comment line), any other control character is reported.
  private mutating func doc(_ member: JSONNode.Member?) -> String? {
    guard let member, let text = string(member) else { return nil }
    if let scalar = SpecText.firstControl(inDoc: text) {
      report(
        "the doc holds the control character \(SpecText.codePoint(scalar)); a doc may hold "
          + "line breaks and tabs but no other control character",
        at: member.value.location)
    }
    return text
  }

  /// A string that must stay on one line (a path, a name, a content type): any control
  /// character, line breaks and tabs included, is reported as an error in `what`.
  private mutating func line(_ member: JSONNode.Member?, what: String) -> String? {
    guard let member, let text = string(member) else { return nil }
    if let scalar = SpecText.firstControl(in: text) {
      report(
        "\(what) holds the control character \(SpecText.codePoint(scalar)), which cannot be "
          + "part of it", at: member.value.location)
    }
    return text
  }

  private mutating func required(
    _ key: String, in members: [String: JSONNode.Member], of what: String,
    at location: SourceLocation
  ) -> JSONNode.Member? {
    guard let member = members[key] else {
      report("missing key '\(key)' in \(what)", at: location)
      return nil
    }
    return member
  }

  private mutating func bool(_ member: JSONNode.Member?) -> Bool? {
    guard let member else { return nil }
    guard case .bool(let value) = member.value.value else {
      report(
        "'\(member.key)' must be true or false, found \(member.value.kindName)",
        at: member.value.location)
      return nil
    }
    return value
  }

  /// A positive number of seconds, in whole milliseconds.
  private mutating func seconds(_ member: JSONNode.Member?) -> Spec.Milliseconds? {
    guard let member else { return nil }
    guard case .number(let text) = member.value.value, let seconds = Double(text) else {
      report(
        "'\(member.key)' must be a number of seconds, found \(member.value.kindName)",
        at: member.value.location)
      return nil
    }
    let milliseconds = (seconds * 1000).rounded()
    guard seconds > 0, milliseconds >= 1, milliseconds <= 86_400_000,
      abs(milliseconds - seconds * 1000) < 1e-6
    else {
      report(
        "'\(member.key)' must be between 0.001 and 86400 seconds, in whole milliseconds",
        at: member.value.location)
      return nil
    }
    return Int(milliseconds)
  }

  private mutating func headers(_ member: JSONNode.Member?) -> [Spec.Header] {
    guard let member else { return [] }
    guard case .object(let fields) = member.value.value else {
      report(
        "'headers' must be an object of names and values, found \(member.value.kindName)",
        at: member.value.location)
      return []
    }
    var headers: [Spec.Header] = []
    var seen: [String: (name: String, location: SourceLocation)] = [:]
    for field in fields {
      let tokenCharacters = "!#$%&'*+-.^_`|~"
      let isToken =
        !field.key.isEmpty
        && field.key.unicodeScalars.allSatisfy {
          $0.isASCII
            && ($0.properties.isAlphabetic || ("0"..."9").contains($0)
              || tokenCharacters.unicodeScalars.contains($0))
        }
      if !isToken {
        report("header name '\(field.key)' is not a valid field name", at: field.keyLocation)
      } else if let first = seen[field.key.lowercased()] {
        report(
          "header '\(field.key)' is given twice (as '\(first.name)' at line "
            + "\(first.location.line)); header names compare without regard to case",
          at: field.keyLocation)
      } else {
        seen[field.key.lowercased()] = (field.key, field.keyLocation)
      }
      guard let value = string(field) else { continue }
      if value.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7F })
      {
        report(
          "header '\(field.key)' has a control character in its value", at: field.value.location)
      } else if !value.unicodeScalars.allSatisfy(\.isASCII) {
        report(
          "header '\(field.key)' has a non-ASCII character in its value; header values are sent "
            + "as ASCII (percent-encode the text)", at: field.value.location)
      }
      headers.append(Spec.Header(name: field.key, value: value))
    }
    return headers
  }

  // MARK: - The spec

  private mutating func spec(_ root: JSONNode) -> Spec? {
    guard let top = members(root, of: "the spec", allowed: Self.specKeys) else { return nil }
    var version = Self.supportedVersion
    if let member = required("version", in: top, of: "the spec", at: root.location),
      let number = specVersion(member)
    {
      version = number
    }
    var namespace = "API"
    if let member = top["namespace"], let name = string(member),
      let valid = namespaceName(name, at: member.value.location)
    {
      namespace = valid
    }
    var access = "internal"
    if let member = top["access"], let value = string(member),
      let valid = accessLevel(value, at: member.value.location)
    {
      access = valid
    }
    var imports = ["Courier"]
    if let member = top["imports"] {
      imports = stringArray(member, what: "module name") { SwiftNames.isIdentifier($0) }
    }
    var groups: [String: String] = [:]
    if let member = top["groups"] { groups = groupDocs(member) }
    var basePath: String?
    if let member = top["basePath"], let value = line(member, what: "basePath") {
      checkBasePath(value, at: member.value.location)
      basePath = value
    }
    let headers = headers(top["headers"])
    var sharedEnvelope: Spec.Envelope?
    if let member = top["envelope"] { sharedEnvelope = envelope(member) }
    var endpoints: [Spec.Endpoint] = []
    if let member = required("endpoints", in: top, of: "the spec", at: root.location) {
      endpoints = endpointList(
        member, basePath: basePath, envelope: sharedEnvelope, namespace: namespace)
    }
    return Spec(
      version: version, namespace: namespace, access: access, imports: imports,
      doc: doc(top["doc"]), groups: groups, basePath: basePath,
      headers: headers, envelope: sharedEnvelope, endpoints: endpoints)
  }

  /// The number in 'version', reported unless it is the one this tool reads; `nil` if none.
  private mutating func specVersion(_ member: JSONNode.Member) -> Int? {
    guard case .number(let text) = member.value.value, let number = Int(text) else {
      report("'version' must be the number 1", at: member.value.location)
      return nil
    }
    if number != Self.supportedVersion {
      report(
        "unsupported spec version \(number); this courier-endpoints reads version "
          + "\(Self.supportedVersion)",
        at: member.value.location)
    }
    return number
  }

  /// `name` when it can name the generated namespace; `nil` after reporting why not.
  private mutating func namespaceName(_ name: String, at location: SourceLocation) -> String? {
    if SwiftNames.qualifyingModules.contains(name) {
      report(
        "namespace '\(name)' would hide the module \(name), whose types the generated code "
          + "names; choose another name", at: location)
      return nil
    }
    guard SwiftNames.isUpperCamel(name) else {
      report(
        "namespace '\(name)' must be a Swift type name in upper camel case (such as API)",
        at: location)
      return nil
    }
    return name
  }

  /// `value` when it is an access level the generated code may have; `nil` after reporting.
  private mutating func accessLevel(_ value: String, at location: SourceLocation) -> String? {
    guard ["internal", "package", "public"].contains(value) else {
      report("access must be internal, package or public, found '\(value)'", at: location)
      return nil
    }
    return value
  }

  /// The docs of 'groups', by namespace path, after reporting paths that are not namespaces.
  private mutating func groupDocs(_ member: JSONNode.Member) -> [String: String] {
    guard case .object(let entries) = member.value.value else {
      report(
        "'groups' must be an object of namespace paths and docs, found "
          + member.value.kindName, at: member.value.location)
      return [:]
    }
    var groups: [String: String] = [:]
    for entry in entries {
      let path = entry.key.split(separator: ".", omittingEmptySubsequences: false)
      if path.isEmpty || !path.allSatisfy({ SwiftNames.isUpperCamel(String($0)) }) {
        report(
          "group '\(entry.key)' must be a dotted path of namespaces in upper camel case",
          at: entry.keyLocation)
      }
      if let text = doc(entry) { groups[entry.key] = text }
    }
    return groups
  }

  /// Reports a basePath that holds parameters, a query or a fragment.
  private mutating func checkBasePath(_ value: String, at location: SourceLocation) {
    if value.contains("{") || value.contains("}") || value.contains("?") || value.contains("#") {
      report("basePath cannot hold parameters, a query or a fragment", at: location)
    }
  }

  /// The endpoints of 'endpoints', after reporting duplicate names and names that clash.
  private mutating func endpointList(
    _ member: JSONNode.Member, basePath: String?, envelope: Spec.Envelope?, namespace: String
  ) -> [Spec.Endpoint] {
    guard case .array(let elements) = member.value.value else {
      report(
        "'endpoints' must be an array of endpoint objects, found \(member.value.kindName)",
        at: member.value.location)
      return []
    }
    var endpoints: [Spec.Endpoint] = []
    var seen: [String: SourceLocation] = [:]
    for element in elements {
      guard let endpoint = self.endpoint(element, basePath: basePath, envelope: envelope)
      else { continue }
      // An invalid name was reported already; it cannot clash with anything.
      guard !endpoint.name.isEmpty else { continue }
      let name = endpoint.name.joined(separator: ".")
      if let first = seen[name] {
        report(
          "duplicate endpoint name '\(name)' (first declared at line \(first.line))",
          at: endpoint.location)
      } else {
        seen[name] = endpoint.location
        endpoints.append(endpoint)
      }
    }
    checkNamespaceClashes(endpoints)
    checkHiddenNames(endpoints, namespace: namespace)
    return endpoints
  }

  private mutating func stringArray(
    _ member: JSONNode.Member, what: String, isValid: (String) -> Bool
  ) -> [String] {
    guard case .array(let elements) = member.value.value else {
      report(
        "'\(member.key)' must be an array of strings, found \(member.value.kindName)",
        at: member.value.location)
      return []
    }
    var result: [String] = []
    for element in elements {
      guard case .string(let text) = element.value, isValid(text) else {
        report("'\(member.key)' must hold \(what)s", at: element.location)
        continue
      }
      result.append(text)
    }
    return result
  }

  /// Reports a function and a namespace with the same name in one namespace.
  private mutating func checkNamespaceClashes(_ endpoints: [Spec.Endpoint]) {
    var namespaces: Set<[String]> = []
    for endpoint in endpoints where endpoint.name.count > 1 {
      for length in 1..<endpoint.name.count { namespaces.insert(Array(endpoint.name[..<length])) }
    }
    for endpoint in endpoints where namespaces.contains(endpoint.name) {
      report(
        "endpoint '\(endpoint.name.joined(separator: "."))' has the name of a namespace",
        at: endpoint.location)
    }
  }

  /// Reports a namespace that would hide a module or a type the generated code names: a
  /// namespace named like a module the generated code writes in front of its own types
  /// (``SwiftNames/qualifyingModules``), and a namespace around an endpoint's function that has
  /// the name a type of the endpoint starts with, since Swift would find the namespace there
  /// instead of the type (`User.get` returning `User` makes `Endpoint<User>` mean the empty
  /// enum `API.User`). Either would otherwise be a compile error inside the generated file.
  private mutating func checkHiddenNames(_ endpoints: [Spec.Endpoint], namespace top: String) {
    var children: [[String]: Set<String>] = [:]
    for endpoint in endpoints {
      for (index, name) in endpoint.name.dropLast().enumerated() {
        children[Array(endpoint.name[..<index]), default: []].insert(name)
      }
    }
    for endpoint in endpoints {
      var reported: Set<String> = []
      for name in endpoint.name.dropLast() where SwiftNames.qualifyingModules.contains(name) {
        guard reported.insert(name).inserted else { continue }
        report(
          "namespace '\(name)' of '\(endpoint.name.joined(separator: "."))' would hide the module "
            + "\(name), whose types the generated code names; choose another name",
          at: endpoint.nameLocation)
      }
      // What the function's scopes declare, innermost last: the top namespace, then the
      // namespaces inside each enclosing one.
      var visible: [String: String] = [top: top]
      let enclosing = endpoint.name.dropLast()
      for length in 0...enclosing.count {
        let path = Array(enclosing.prefix(length))
        for child in children[path] ?? [] {
          visible[child] = ([top] + path + [child]).joined(separator: ".")
        }
      }
      for use in endpoint.typeUses {
        for root in Set(SwiftNames.typeRoots(use.type)).sorted() {
          guard let namespace = visible[root] else { continue }
          report(
            "\(use.role) type '\(use.type)': '\(root)' means the namespace \(namespace) in the "
              + "generated code, not a type; rename the namespace, or write the type with its "
              + "module's name (such as MyModule.\(root))",
            at: use.location)
        }
      }
    }
  }

  // MARK: - Envelope and retry

  private mutating func envelope(_ member: JSONNode.Member) -> Spec.Envelope? {
    switch member.value.value {
    case .string("codeZero"): return .codeZero
    case .string("statusOK"): return .statusOK
    case .string("none"), .null: return Spec.Envelope.none
    case .string(let other):
      report(
        "unknown envelope '\(other)'; expected codeZero, statusOK, none or an object with "
          + "code, success, message and payload",
        at: member.value.location)
      return nil
    case .object:
      return customEnvelope(member.value)
    default:
      report(
        "'envelope' must be codeZero, statusOK, none or an object, found "
          + member.value.kindName, at: member.value.location)
      return nil
    }
  }

  /// An envelope object's code, success codes, message and payload key paths.
  private mutating func customEnvelope(_ node: JSONNode) -> Spec.Envelope? {
    guard let fields = members(node, of: "an envelope", allowed: Self.envelopeKeys),
      let codeMember = required("code", in: fields, of: "an envelope", at: node.location),
      let code = string(codeMember)
    else { return nil }
    var success: [Spec.Literal] = []
    if let list = required("success", in: fields, of: "an envelope", at: node.location) {
      success = successCodes(list)
    }
    var message: [String] = []
    if let field = fields["message"] {
      if case .string(let text) = field.value.value {
        message = [text]
      } else {
        message = stringArray(field, what: "key path") { !$0.isEmpty }
      }
    }
    var payload: String?
    if let field = fields["payload"], case .null = field.value.value {
      payload = nil
    } else {
      payload = string(fields["payload"])
    }
    return .custom(code: code, success: success, message: message, payload: payload)
  }

  /// The codes of an envelope's 'success', after reporting those that cannot be one.
  private mutating func successCodes(_ list: JSONNode.Member) -> [Spec.Literal] {
    guard case .array(let elements) = list.value.value, !elements.isEmpty else {
      report("'success' must be a non-empty array of codes", at: list.value.location)
      return []
    }
    var success: [Spec.Literal] = []
    for element in elements {
      switch element.value {
      case .number(let text):
        if Int(text) != nil {
          success.append(.number(text))
        } else {
          report(
            "a numeric success code must be a whole number that fits in 64 bits; write "
              + "other codes as strings", at: element.location)
        }
      case .string(let text): success.append(.string(text))
      case .bool(let value): success.append(.bool(value))
      default:
        report("a success code must be a number, a string or a boolean", at: element.location)
      }
    }
    return success
  }

  private mutating func retry(_ member: JSONNode.Member) -> Spec.Retry? {
    switch member.value.value {
    case .string("disabled"): return .disabled
    case .string("standard"): return .standard
    case .object:
      guard let fields = members(member.value, of: "a retry policy", allowed: Self.retryKeys)
      else { return nil }
      var attempts: Int?
      if let field = fields["maximumAttempts"] {
        if case .number(let text) = field.value.value, let count = Int(text),
          (1...100).contains(count)
        {
          attempts = count
        } else {
          report("'maximumAttempts' must be a whole number from 1 to 100", at: field.value.location)
        }
      }
      var multiplier: String?
      if let field = fields["multiplier"] {
        if case .number(let text) = field.value.value, let value = Double(text), value >= 1,
          value <= 100
        {
          multiplier = text
        } else {
          report("'multiplier' must be a number from 1 to 100", at: field.value.location)
        }
      }
      return .policy(
        maximumAttempts: attempts, baseDelay: seconds(fields["baseDelay"]),
        multiplier: multiplier, maximumDelay: seconds(fields["maximumDelay"]))
    default:
      report(
        "'retry' must be \"disabled\", \"standard\" or an object with "
          + Self.retryKeys.joined(separator: ", "),
        at: member.value.location)
      return nil
    }
  }

  // MARK: - Endpoints

  private mutating func endpoint(
    _ node: JSONNode, basePath: String?, envelope: Spec.Envelope?
  ) -> Spec.Endpoint? {
    guard let fields = members(node, of: "an endpoint", allowed: Self.endpointKeys) else {
      return nil
    }
    let what = Self.endpointDescription(fields)

    var name: [String] = []
    var nameLocation = node.location
    var typeUses: [Spec.TypeUse] = []
    if let member = required("name", in: fields, of: what, at: node.location),
      let text = string(member)
    {
      nameLocation = member.value.location
      name = endpointName(text, at: member.value.location)
    }

    var method = "GET"
    if let member = required("method", in: fields, of: what, at: node.location),
      let text = string(member), let valid = httpMethod(text, at: member.value.location)
    {
      method = valid
    }

    let parameters = parameterList(fields["parameters"], inPath: true)
    let query = parameterList(fields["query"], inPath: false)

    var path = ""
    var fullPath = ""
    if let member = required("path", in: fields, of: what, at: node.location),
      let text = line(member, what: "path")
    {
      path = text
      checkPath(member.value, text, parameters: parameters)
      fullPath = Self.fullPath(text, basePath: basePath)
    }

    let labels = argumentLabels(parameters + query)
    var body: Spec.Body?
    if let member = fields["body"] {
      body = self.body(member, typeUses: &typeUses)
      checkBody(body, of: member, method: method, labels: labels)
    }

    var response = "Void"
    if let member = required("response", in: fields, of: what, at: node.location),
      let text = string(member), let type = responseType(text, at: member.value.location)
    {
      response = type
      typeUses.append(
        Spec.TypeUse(type: response, role: "the response", location: member.value.location))
    }
    let decodeAt = decodeKeyPath(fields["decodeAt"], response: response)

    var retry: Spec.Retry?
    if let member = fields["retry"] { retry = self.retry(member) }
    var endpointEnvelope = envelope
    if let member = fields["envelope"] { endpointEnvelope = self.envelope(member) }

    typeUses += (parameters + query).compactMap(\.typeUse)

    return Spec.Endpoint(
      name: name, doc: doc(fields["doc"]), method: method, path: path, fullPath: fullPath,
      parameters: parameters, query: query, headers: headers(fields["headers"]), body: body,
      response: response, decodeAt: decodeAt, envelope: endpointEnvelope, retry: retry,
      retryable: bool(fields["retryable"]) ?? false, timeout: seconds(fields["timeout"]),
      deadline: seconds(fields["deadline"]), location: node.location, nameLocation: nameLocation,
      typeUses: typeUses)
  }

  /// `endpoint 'name'` when the endpoint has a string name, else `an endpoint`, for messages.
  private static func endpointDescription(_ fields: [String: JSONNode.Member]) -> String {
    fields["name"].flatMap { member -> String? in
      if case .string(let name) = member.value.value { return "endpoint '\(name)'" }
      return nil
    } ?? "an endpoint"
  }

  /// The parts of endpoint name `text`; empty after reporting when it is not a valid name.
  private mutating func endpointName(_ text: String, at location: SourceLocation) -> [String] {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    let namespacesValid = parts.dropLast().allSatisfy(SwiftNames.isUpperCamel)
    guard let last = parts.last, SwiftNames.isLowerCamel(last), namespacesValid else {
      report(
        "endpoint name '\(text)' must be a function name in lower camel case, after any "
          + "namespaces in upper camel case (such as User.check)",
        at: location)
      return []
    }
    return parts
  }

  /// `text` when it is one of ``methods``; `nil` after reporting.
  private mutating func httpMethod(_ text: String, at location: SourceLocation) -> String? {
    guard Self.methods.contains(text) else {
      let hint = Self.methods.contains(text.uppercased()) ? " (methods are upper case)" : ""
      report(
        "invalid method '\(text)'\(hint); expected one of "
          + Self.methods.joined(separator: ", "),
        at: location)
      return nil
    }
    return text
  }

  /// `path` behind `basePath`, unless it is an absolute URL or there is no basePath.
  private static func fullPath(_ path: String, basePath: String?) -> String {
    let isAbsolute = path.hasPrefix("http://") || path.hasPrefix("https://")
    guard let basePath, !basePath.isEmpty, !isAbsolute else { return path }
    let base = basePath.hasSuffix("/") ? String(basePath.dropLast()) : basePath
    return base + "/" + (path.hasPrefix("/") ? String(path.dropFirst()) : path)
  }

  /// Where each argument label is declared, after reporting labels used twice.
  private mutating func argumentLabels(_ parameters: [Spec.Parameter]) -> [String: SourceLocation] {
    var labels: [String: SourceLocation] = [:]
    for parameter in parameters {
      if let first = labels[parameter.label] {
        report(
          "two arguments are named '\(parameter.label)' (the other is at line \(first.line)); "
            + "give one a 'label'",
          at: parameter.location)
      }
      labels[parameter.label] = parameter.location
    }
    return labels
  }

  /// Reports a body whose label is a parameter's, and a body on a GET or HEAD endpoint.
  private mutating func checkBody(
    _ body: Spec.Body?, of member: JSONNode.Member, method: String,
    labels: [String: SourceLocation]
  ) {
    if let body, let first = labels[body.label] {
      report(
        "the body's argument '\(body.label)' has the name of a parameter (line \(first.line)); "
          + "give the body a 'label'",
        at: member.value.location)
    }
    if body != nil, method == "GET" || method == "HEAD" {
      report("a \(method) endpoint cannot have a body", at: member.keyLocation)
    }
  }

  /// `text` without its spaces when it is a Swift type name; `nil` after reporting.
  private mutating func responseType(_ text: String, at location: SourceLocation) -> String? {
    guard SwiftNames.isTypeName(text) else {
      report("response '\(text)' is not a Swift type name", at: location)
      return nil
    }
    return text.trimmingSpaces
  }

  /// The key path in 'decodeAt', reported when `response` cannot be decoded at one.
  private mutating func decodeKeyPath(_ member: JSONNode.Member?, response: String) -> String? {
    guard let member, let text = string(member) else { return nil }
    if ["Void", "Data", "String"].contains(response) || text.isEmpty {
      report(
        "'decodeAt' needs a Decodable response type and a key path such as \"result.items\"",
        at: member.value.location)
    }
    return text
  }

  /// Checks the `{name}` parts of a path against the declared path parameters.
  private mutating func checkPath(
    _ node: JSONNode, _ path: String, parameters: [Spec.Parameter]
  ) {
    /// Where byte `offset` of the string is, when it was written without escapes.
    func location(atByte offset: Int) -> SourceLocation {
      guard let start = node.plainStringStart else { return node.location }
      return SourceLocation(line: start.line, column: start.column + offset)
    }
    if path.contains("?") || path.contains("#") {
      report(
        "path '\(path)' holds a query or fragment; declare query items in 'query'",
        at: node.location)
    }
    let bytes = Array(path.utf8)
    var used: Set<String> = []
    var index = 0
    while index < bytes.count {
      if bytes[index] == UInt8(ascii: "}") {
        report("unmatched '}' in path '\(path)'", at: location(atByte: index))
        index += 1
        continue
      }
      guard bytes[index] == UInt8(ascii: "{") else {
        index += 1
        continue
      }
      guard let close = bytes[index...].firstIndex(of: UInt8(ascii: "}")) else {
        report("unclosed '{' in path '\(path)'", at: location(atByte: index))
        return
      }
      let name = String(decoding: bytes[(index + 1)..<close], as: UTF8.self)
      if name.isEmpty || name.contains("{") {
        report("'{\(name)}' in path '\(path)' is not a parameter name", at: location(atByte: index))
      } else if parameters.contains(where: { $0.name == name }) {
        used.insert(name)
      } else {
        report(
          "path parameter '{\(name)}' is not declared in 'parameters'", at: location(atByte: index))
      }
      index = close + 1
    }
    for parameter in parameters where !used.contains(parameter.name) {
      report(
        "parameter '\(parameter.name)' is declared but the path '\(path)' never uses it "
          + "(write {\(parameter.name)} in the path, or remove the parameter)",
        at: parameter.location)
    }
  }

  private mutating func parameterList(_ member: JSONNode.Member?, inPath: Bool) -> [Spec.Parameter]
  {
    guard let member else { return [] }
    guard case .array(let elements) = member.value.value else {
      report(
        "'\(member.key)' must be an array of parameter objects, found \(member.value.kindName)",
        at: member.value.location)
      return []
    }
    let what = inPath ? "a path parameter" : "a query parameter"
    var result: [Spec.Parameter] = []
    var seen: [String: SourceLocation] = [:]
    for element in elements {
      if let parameter = parameter(element, what: what, inPath: inPath, seen: &seen) {
        result.append(parameter)
      }
    }
    return result
  }

  /// One element of a parameter list, `nil` after reporting; `seen` holds the names so far.
  private mutating func parameter(
    _ element: JSONNode, what: String, inPath: Bool, seen: inout [String: SourceLocation]
  ) -> Spec.Parameter? {
    guard let fields = members(element, of: what, allowed: Self.parameterKeys),
      let nameMember = required("name", in: fields, of: what, at: element.location),
      let name = line(nameMember, what: "the name of \(what)")
    else { return nil }
    let location = nameMember.value.location
    if let first = seen[name] {
      report(
        "\(what) '\(name)' is declared twice (first at line \(first.line))", at: location)
      return nil
    }
    seen[name] = location
    if name.isEmpty {
      report("\(what) needs a non-empty name", at: location)
      return nil
    }
    guard let label = parameterLabel(fields["label"], name: name, at: location) else {
      return nil
    }
    let (type, typeUse) = parameterType(fields["type"], name: name, inPath: inPath)
    let optional = bool(fields["optional"]) ?? false
    if optional && inPath, let optionalMember = fields["optional"] {
      report("a path parameter cannot be optional", at: optionalMember.value.location)
    }
    return Spec.Parameter(
      name: name, label: label, type: type, optional: optional,
      doc: doc(fields["doc"]), location: location, typeUse: typeUse)
  }

  /// The 'label' given, else `name` in lower camel case; `nil` after reporting neither fits.
  private mutating func parameterLabel(
    _ member: JSONNode.Member?, name: String, at location: SourceLocation
  ) -> String? {
    if let member, let text = string(member) {
      guard SwiftNames.isLowerCamel(text) else {
        report(
          "label '\(text)' must be a Swift name in lower camel case", at: member.value.location)
        return nil
      }
      return text
    }
    guard let label = SwiftNames.lowerCamel(from: name) else {
      report(
        "'\(name)' is not a Swift name; add a 'label' such as \"value\" for its argument",
        at: location)
      return nil
    }
    return label
  }

  /// The type in 'type' (default `Swift.String`) and its use, for the hidden-name check.
  private mutating func parameterType(
    _ member: JSONNode.Member?, name: String, inPath: Bool
  ) -> (type: String, use: Spec.TypeUse?) {
    guard let member, let text = string(member) else { return ("Swift.String", nil) }
    let optionalType = text.trimmingSpaces.hasSuffix("?")
    guard SwiftNames.isTypeName(text) && !optionalType else {
      report(
        "type '\(text)' is not a Swift type name"
          + (optionalType ? " (write optional: true instead of '?')" : ""),
        at: member.value.location)
      return ("Swift.String", nil)
    }
    let type = text.trimmingSpaces
    let use = Spec.TypeUse(
      type: type, role: "\(inPath ? "path" : "query") parameter '\(name)'",
      location: member.value.location)
    return (type, use)
  }

  private mutating func body(
    _ member: JSONNode.Member, typeUses: inout [Spec.TypeUse]
  ) -> Spec.Body? {
    guard let fields = members(member.value, of: "a body", allowed: Self.bodyKeys) else {
      return nil
    }
    var encoding = Spec.BodyEncoding.json
    if let field = fields["encoding"], let text = string(field) {
      if let value = Spec.BodyEncoding(rawValue: text) {
        encoding = value
      } else {
        report(
          "unknown body encoding '\(text)'; expected json, data or multipart",
          at: field.value.location)
      }
    }
    var type: String?
    if let field = fields["type"], let text = string(field) {
      if encoding != .json {
        report(
          "'type' is for json bodies; a \(encoding) body's type is fixed", at: field.keyLocation)
      } else if SwiftNames.isTypeName(text) {
        type = text.trimmingSpaces
        typeUses.append(
          Spec.TypeUse(type: text.trimmingSpaces, role: "the body", location: field.value.location))
      } else {
        report("type '\(text)' is not a Swift type name", at: field.value.location)
      }
    } else if encoding == .json {
      report("a json body needs a 'type' (an Encodable type)", at: member.value.location)
    }
    let contentType = line(fields["contentType"], what: "contentType")
    if encoding == .data && contentType == nil {
      report("a data body needs a 'contentType'", at: member.value.location)
    }
    if encoding != .data, let field = fields["contentType"] {
      report("'contentType' is for data bodies only", at: field.keyLocation)
    }
    var label = encoding == .multipart ? "form" : "body"
    if let field = fields["label"], let text = string(field) {
      if SwiftNames.isLowerCamel(text) {
        label = text
      } else {
        report("label '\(text)' must be a Swift name in lower camel case", at: field.value.location)
      }
    }
    return Spec.Body(
      encoding: encoding, type: type, contentType: contentType, label: label,
      doc: doc(fields["doc"]))
  }
}

extension String {
  /// The text without leading and trailing spaces.
  var trimmingSpaces: String {
    let scalars = unicodeScalars.drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " })
    return String(String.UnicodeScalarView(scalars.reversed()))
  }
}
