import Foundation
import Testing

@testable import CourierEndpointsGenerator

/// A deterministic source of pseudo-random numbers (SplitMix64), so that every run fuzzes the
/// same specs and a failure names one that can be made again.
struct SplitMix64: RandomNumberGenerator {
  var state: UInt64

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// Specs with hostile text in every place a spec holds a string: docs, names, paths, header
/// names and values, content types, key paths, envelope codes, types and namespaces.
///
/// Half of the specs hold only what the reader accepts (hostile text where text is free, names
/// that are valid but collide with keywords, modules and types); the other half also hold what
/// it must refuse (control characters in paths and names, keywords, types that cannot be).
struct HostileSpecs {
  var random: SplitMix64
  /// Whether the spec being made may hold what the reader refuses.
  var invalid = false

  static let lineBreaks = ["\r", "\n", "\r\n", "\u{B}", "\u{C}", "\u{85}", "\u{2028}", "\u{2029}"]
  static let controls = ["\u{0}", "\u{1}", "\u{7}", "\t", "\u{1B}", "\u{7F}", "\u{9F}"]
  static let quoting = [
    "\"", "\\", "\\(", "\\(injected)", "#", "#\"", "\"#", "\"\"\"", "\\u{41}", "\\n", "*/", "/*",
    "//", "///", "`", "'", "$0", "%", "?", "&", "{", "}", "{id}",
  ]
  static let unicode = [
    "é", "e\u{301}", "\u{301}", "😀", "👩‍👩‍👧", "عربى", "\u{200B}", "\u{200D}", "\u{202E}", "\u{2066}",
    "\u{FEFF}", "\u{A0}", "\u{3000}", "\u{E000}", "\u{FFFE}", "\u{10FFFF}",
  ]
  static let code = [
    injection, "}\nenum Injected {", "\"); print(\"ran\"); (\"", "import Foundation", "#if false",
    "public", "static", "let", "func", "init", "default", "self", "Self", "Type", "endpoint", "in",
    "await", "Data", "Endpoint", "String", "Swift", "Foundation", "CourierCore", "User",
  ]
  static let plain = ["x", "A", "get", " ", "users", "1", "v2", "-", "_", "."]

  /// Namespace names: Courier's, Foundation's and Swift's types, the models' types, modules
  /// and keywords.
  static let upperNames = [
    "User", "Users", "Data", "Endpoint", "MultipartForm", "EnvelopeRule", "RetryPolicy", "String",
    "Int", "Bool", "Void", "Swift", "Foundation", "CourierCore", "Fixture", "Optional", "Array",
    "Dictionary", "Result", "Never", "Device", "Type", "Self", "Any", "Protocol", "Sendable",
    "Duration", "HTTPMethod", "API", "V2",
  ]
  /// Function and argument names, keywords and contextual keywords among them.
  static let lowerNames = [
    "get", "list", "set", "data", "string", "endpoint", "default", "init", "self", "in", "await",
    "some", "any", "macro", "unsafe", "sending", "isolated", "copy", "consume", "then", "yield",
    "type", "protocol", "body", "form", "id", "value", "parameter", "query", "header", "repeat",
  ]
  /// Types as a user would write them (each exists and fits its place), and types the reader
  /// refuses.
  static let parameterTypes = [
    "String", "Int", "Bool", "Double", "Swift.Int", "Int?", "Self", "Any",
  ]
  static let bodyTypes = ["User", "[Device]", "Fixture.User", "Device", "Self", "Any"]
  static let responseTypes = [
    "User", "[User]", "[String: [Device]]", "User?", "Data", "String", "Void", "Fixture.User",
    "Device", "[Device]?", "Self", "Any", "Int?",
  ]
  static let methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]

  init(seed: UInt64) { random = SplitMix64(state: seed) }

  mutating func chance(_ probability: Double) -> Bool {
    Double.random(in: 0..<1, using: &random) < probability
  }

  /// Whether to put something the reader refuses here: only in an invalid spec.
  mutating func bad(_ probability: Double) -> Bool { invalid && chance(probability) }

  mutating func pick<Element>(_ elements: [Element]) -> Element {
    elements[Int.random(in: 0..<elements.count, using: &random)]
  }

  /// A name from `names`, which in a valid spec is not a keyword (nor, for a namespace, a
  /// module the generated code qualifies with).
  mutating func name(_ names: [String]) -> String {
    if invalid { return pick(names) }
    let modules = ["CourierCore", "Foundation", "Swift"]
    return pick(names.filter { !SwiftNames.keywords.contains($0) && !modules.contains($0) })
  }

  /// A type from `types`, which in a valid spec is one the reader accepts in `place`.
  mutating func type(_ types: [String], optionalAllowed: Bool = true) -> String {
    if invalid { return pick(types) }
    return pick(
      types.filter { SwiftNames.isTypeName($0) && (optionalAllowed || !$0.hasSuffix("?")) })
  }

  enum Place {
    case doc, literal, headerValue, path, wireName
  }

  /// One to five pieces of hostile text, drawn with the mix that suits `place`.
  mutating func text(_ place: Place) -> String {
    var result = ""
    for _ in 0..<Int.random(in: 1...5, using: &random) {
      let pools: [[String]]
      switch place {
      case .doc:
        pools =
          bad(0.2)
          ? [Self.controls] : [Self.lineBreaks, Self.quoting, Self.unicode, Self.code, Self.plain]
      case .literal:
        pools = [Self.lineBreaks, Self.controls, Self.quoting, Self.unicode, Self.code, Self.plain]
      case .headerValue:
        pools = bad(0.2) ? [Self.controls, Self.unicode] : [Self.quoting, Self.plain]
      case .path:
        pools =
          bad(0.2) ? [Self.lineBreaks, Self.controls] : [Self.unicode, Self.plain, Self.plain]
      case .wireName:
        pools =
          bad(0.2)
          ? [Self.lineBreaks, Self.controls]
          : [Self.quoting.filter { !$0.contains(where: "{}?#".contains) }, Self.unicode]
      }
      result += pick(pick(pools))
    }
    return result
  }

  mutating func envelope() -> JSONValue {
    .object([
      ("code", .string(text(.literal))),
      ("success", .array([.number("-1"), .string(text(.literal)), .bool(true)])),
      ("message", .array([.string(text(.literal)), .string(text(.literal))])),
      ("payload", .string(text(.literal))),
    ])
  }

  mutating func headers(_ names: [String]) -> JSONValue {
    var members: [(String, JSONValue)] = []
    for _ in 0..<Int.random(in: 1...3, using: &random) {
      let name = bad(0.1) ? text(.wireName) : pick(names)
      let taken = members.contains {
        $0.0 == name || (!invalid && $0.0.lowercased() == name.lowercased())
      }
      if !taken { members.append((name, .string(text(.headerValue)))) }
    }
    return .object(members)
  }

  mutating func parameters(inPath: Bool) -> [JSONValue] {
    var result: [JSONValue] = []
    for index in 0..<Int.random(in: 0...2, using: &random) {
      var members: [(String, JSONValue)] = []
      let plainName = chance(0.5)
      let wireName =
        plainName ? pick(["id", "user-id", "x", "page_size"]) + "\(index)" : text(.wireName)
      members.append(("name", .string(wireName)))
      if chance(0.7) || (!plainName && !bad(0.5)) {
        let label = chance(0.7) ? name(Self.lowerNames) + "\(index)" : name(Self.lowerNames)
        members.append(("label", .string(label)))
      }
      if chance(0.7) {
        members.append(("type", .string(type(Self.parameterTypes, optionalAllowed: false))))
      }
      if !inPath && chance(0.5) || bad(0.05) { members.append(("optional", .bool(true))) }
      if chance(0.7) { members.append(("doc", .string(text(.doc)))) }
      result.append(.object(members))
    }
    return result
  }

  /// Endpoint `number` of a spec.
  mutating func endpoint(_ number: Int) -> JSONValue {
    var members: [(String, JSONValue)] = []
    var dotted = (0..<Int.random(in: 0...2, using: &random)).map { _ in name(Self.upperNames) }
    dotted.append(name(Self.lowerNames) + (chance(0.7) ? "\(number)" : ""))
    members.append(("name", .string(bad(0.1) ? text(.literal) : dotted.joined(separator: "."))))
    if chance(0.8) { members.append(("doc", .string(text(.doc)))) }
    let method = bad(0.1) ? text(.wireName) : pick(Self.methods)
    members.append(("method", .string(method)))
    let parameters = parameters(inPath: true)
    var segments = (0..<Int.random(in: 1...3, using: &random)).map { _ in
      chance(0.6) ? pick(Self.plain) : text(.path)
    }
    for parameter in parameters {
      if case .object(let fields) = parameter, case .string(let name) = fields[0].1 {
        segments.append("{" + name + "}")
      }
    }
    members.append(("path", .string(segments.joined(separator: "/"))))
    if !parameters.isEmpty { members.append(("parameters", .array(parameters))) }
    let query = self.parameters(inPath: false)
    if !query.isEmpty { members.append(("query", .array(query))) }
    if chance(0.5) {
      members.append(("headers", headers(["Accept", "accept", "X-Client", "x-client", "X-Quote"])))
    }
    if (method != "GET" && method != "HEAD" && chance(0.7)) || bad(0.1) {
      var body: [(String, JSONValue)] = []
      switch Int.random(in: 0..<3, using: &random) {
      case 0: body.append(("type", .string(type(Self.bodyTypes))))
      case 1:
        body.append(("encoding", .string("data")))
        body.append(("contentType", .string(chance(0.5) ? "image/png" : text(.headerValue))))
      default: body.append(("encoding", .string("multipart")))
      }
      if chance(0.5) { body.append(("label", .string(pick(Self.lowerNames) + "Body"))) }
      if chance(0.5) { body.append(("doc", .string(text(.doc)))) }
      members.append(("body", .object(body)))
    }
    let response = type(Self.responseTypes)
    members.append(("response", .string(response)))
    if chance(0.2) && (invalid || !["Void", "Data", "String"].contains(response)) {
      members.append(("decodeAt", .string(text(.literal))))
    }
    if chance(0.2) { members.append(("envelope", envelope())) }
    if chance(0.2) {
      members.append(
        (
          "retry",
          chance(0.5)
            ? .string(pick(["disabled", "standard"]))
            : .object([("maximumAttempts", .number("3")), ("multiplier", .number("1.5e0"))])
        ))
    }
    if chance(0.2) { members.append(("timeout", .number("2.5"))) }
    return .object(members)
  }

  /// Spec `index`: its top namespace is `Fuzz<index>` most of the time, so that many generated
  /// files can be type-checked together.
  mutating func spec(_ index: Int) -> JSONValue {
    invalid = chance(0.5)
    var members: [(String, JSONValue)] = [("version", .number("1"))]
    let namespace =
      chance(0.85) ? "Fuzz\(index)" : bad(0.2) ? text(.literal) : name(Self.upperNames)
    members.append(("namespace", .string(namespace)))
    let access = bad(0.1) ? text(.wireName) : pick(["internal", "package", "public"])
    members.append(("access", .string(access)))
    members.append(("imports", .array([.string(bad(0.1) ? text(.wireName) : "CourierCore")])))
    if chance(0.9) { members.append(("doc", .string(text(.doc)))) }
    if chance(0.3) { members.append(("basePath", .string(chance(0.5) ? "/v1" : text(.path)))) }
    if chance(0.6) { members.append(("headers", headers(["Accept", "X-Client", "X-Quote"]))) }
    if chance(0.2) { members.append(("envelope", envelope())) }
    let endpoints = (0..<Int.random(in: 1...4, using: &random)).map { endpoint($0) }
    var groups: [(String, JSONValue)] = []
    for _ in 0..<Int.random(in: 0...2, using: &random) {
      let path = name(Self.upperNames)
      if !groups.contains(where: { $0.0 == path }) { groups.append((path, .string(text(.doc)))) }
    }
    if bad(0.1) { groups.append((text(.literal), .string(text(.doc)))) }
    if !groups.isEmpty { members.append(("groups", .object(groups))) }
    members.append(("endpoints", .array(endpoints)))
    return .object(members)
  }
}

@Suite("The generator fed hostile specs", .timeLimit(.minutes(5)))
struct HostileSpecFuzzTests {
  static let count = 1500

  /// `spec` with every string that goes into a comment or a literal replaced by a plain one:
  /// the generated code of the two must have the same tokens outside literals.
  func plainTwin(_ spec: Spec) -> Spec {
    func plain(_ envelope: Spec.Envelope?) -> Spec.Envelope? {
      guard case .custom(_, let success, let message, let payload) = envelope else {
        return envelope
      }
      let codes = success.map { code -> Spec.Literal in
        if case .string = code { return .string("e") }
        return code
      }
      return .custom(
        code: "e", success: codes, message: message.map { _ in "e" },
        payload: payload.map { _ in "e" })
    }
    func plain(_ parameter: Spec.Parameter) -> Spec.Parameter {
      var copy = parameter
      copy.name = "n"
      copy.doc = copy.doc.map { _ in "d" }
      return copy
    }
    var copy = spec
    copy.doc = spec.doc.map { _ in "d" }
    copy.groups = spec.groups.mapValues { _ in "d" }
    copy.headers = spec.headers.map { Spec.Header(name: $0.name, value: "v") }
    copy.envelope = plain(spec.envelope)
    copy.endpoints = spec.endpoints.map { endpoint in
      var copy = endpoint
      copy.doc = copy.doc.map { _ in "d" }
      copy.fullPath = "p"
      copy.parameters = copy.parameters.map(plain)
      copy.query = copy.query.map(plain)
      copy.headers = copy.headers.map { Spec.Header(name: $0.name, value: "v") }
      if var body = copy.body {
        body.contentType = body.contentType.map { _ in "c" }
        body.doc = body.doc.map { _ in "d" }
        copy.body = body
      }
      copy.decodeAt = copy.decodeAt.map { _ in "k" }
      copy.envelope = plain(endpoint.envelope)
      return copy
    }
    return copy
  }

  /// Every string of `spec` that the generated code may hold as a literal.
  func literalTexts(_ spec: Spec) -> Set<String> {
    var texts: Set<String> = []
    func add(_ envelope: Spec.Envelope?) {
      guard case .custom(let code, let success, let message, let payload) = envelope else { return }
      texts.insert(code)
      for case .string(let text) in success { texts.insert(text) }
      texts.formUnion(message)
      if let payload { texts.insert(payload) }
    }
    add(spec.envelope)
    for header in spec.headers { texts.formUnion([header.name, header.value]) }
    for endpoint in spec.endpoints {
      texts.insert(endpoint.fullPath)
      texts.formUnion((endpoint.parameters + endpoint.query).map(\.name))
      for header in endpoint.headers { texts.formUnion([header.name, header.value]) }
      if let contentType = endpoint.body?.contentType { texts.insert(contentType) }
      if let keyPath = endpoint.decodeAt { texts.insert(keyPath) }
      add(endpoint.envelope)
    }
    return texts
  }

  @Test(
    "every hostile spec gets a diagnostic, or code whose spec text is only in comments and literals"
  )
  func hostileSpecs() async throws {
    var generator = HostileSpecs(seed: 0x436F_7572_6965_7233)
    var rejected = 0
    // Files of namespace FuzzN are type-checked together in one module; a spec whose top
    // namespace is another name (Data, Endpoint, V2…) on its own, since in one module that
    // name would also hide types the other specs name, which no spec can know about.
    var batch: [String: String] = ["Models.swift": typecheckModels]
    var singles: [String: String] = [:]
    for index in 0..<Self.count {
      let text = generator.spec(index).text
      let spec: Spec
      do {
        spec = try SpecReader.read(Array(text.utf8))
      } catch {
        rejected += 1
        for diagnostic in error.all {
          #expect(diagnostic.location.line >= 1 && diagnostic.location.column >= 1)
          let line = diagnostic.formatted(file: "Fuzz.endpoints.json")
          #expect(
            !line.unicodeScalars.contains(where: SwiftTokens.isControl),
            "spec \(index): the diagnostic \(line.debugDescription) is not one line")
        }
        continue
      }
      let source = Generator.generate(spec, specFileName: "F\r\nimport Evil\u{2028}.json")
      #expect(
        source.unicodeScalars.allSatisfy { $0 == "\n" || !SwiftTokens.isControl($0) },
        "spec \(index): the generated code holds a control character:\n\(text)")
      let tokens: [SwiftToken]
      let twinTokens: [SwiftToken]
      do {
        tokens = try SwiftTokens.lex(source)
        twinTokens = try SwiftTokens.lex(
          Generator.generate(plainTwin(spec), specFileName: "F.json"))
      } catch {
        Issue.record("spec \(index): \(error) in\n\(source)\nfrom\n\(text)")
        continue
      }
      #expect(
        tokens.map(\.shape) == twinTokens.map(\.shape),
        "spec \(index): spec text became code:\n\(source)\nfrom\n\(text)")
      let allowed = literalTexts(spec)
      for case .string(let value) in tokens where !allowed.contains(value) {
        Issue.record(
          "spec \(index): the literal \(value.debugDescription) is no string of the spec:\n\(text)")
      }
      if spec.namespace == "Fuzz\(index)" {
        if batch.count <= 40 { batch["Fuzz\(index).swift"] = source }
      } else if singles.count < 6, !["User", "Device", "Fixture"].contains(spec.namespace) {
        singles["Fuzz\(index).swift"] = source
      }
    }
    // Both outcomes are exercised in earnest.
    #expect(rejected > Self.count / 5, "only \(rejected) of \(Self.count) specs were rejected")
    #expect(rejected < Self.count * 4 / 5, "\(rejected) of \(Self.count) specs were rejected")
    #expect(batch.count > 40 && singles.count == 6)
    // A sample of the generated files compiles against CourierCore.
    let compiled = try await typecheck(batch)
    #expect(compiled.status == 0, "swiftc said:\n\(compiled.combined)")
    for (name, source) in singles.sorted(by: { $0.key < $1.key }) {
      let single = try await typecheck([name: source, "Models.swift": typecheckModels])
      #expect(single.status == 0, "swiftc said:\n\(single.combined)")
    }
    print(
      "hostile specs: \(rejected) of \(Self.count) rejected; type-checked \(batch.count - 1) "
        + "files together and \(singles.count) alone")
  }
}
