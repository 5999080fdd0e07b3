import CourierCore
import CourierTesting
import Foundation
import Testing

@Suite(
  "Envelope codes: any non-success code is a business failure; exact comparison",
  .timeLimit(.minutes(5)))
struct EnvelopeCodeTests {
  /// Sends one request for `body` through a client with `rule` and returns the error.
  func failure(
    _ body: String, rule: EnvelopeRule = .codeZero, status: Int = 200
  ) async -> CourierError? {
    let stub = StubTransport([.json(body, status: status)])
    return await courierError {
      try await stubClient(stub, pipeline: .envelope(rule)).send(Endpoint<Profile>(.get, "x"))
    }
  }

  // MARK: Defect 6: a code of another type must not hide the server's message

  @Test(
    "a code of another type than the success codes is a business failure with its message",
    arguments: [
      (#"{"code":"E1001","msg":"Phone invalid"}"#, "E1001", "Phone invalid"),
      (#"{"code":null,"msg":"Service paused"}"#, "null", "Service paused"),
      (#"{"code":false,"message":"Not allowed"}"#, "false", "Not allowed"),
      (#"{"code":{"id":7,"sub":"x"},"msg":"Object code"}"#, #"{"id":7,"sub":"x"}"#, "Object code"),
      (#"{"code":[1,2],"msg":"Array code"}"#, "[1,2]", "Array code"),
      (#"{"code":"0","msg":"Text zero"}"#, "0", "Text zero"),
    ])
  func otherTypeIsBusiness(body: String, code: String, message: String) async throws {
    let error = try #require(await failure(body))
    #expect(error.kind == .business)
    #expect(error.code == code)
    #expect(error.serverMessage == message)
    #expect(error.reason == message)
    #expect(error.stage == "envelope")
  }

  @Test("the developer message says when only the code's type differs")
  func typeMismatchNote() async throws {
    let text = try #require(await failure(#"{"code":"0"}"#))
    #expect(text.debugDescription.contains("is a string, the rule's success codes are a number"))
    #expect(text.debugDescription.contains("matchesAcrossTypes"))
    let null = try #require(await failure(#"{"code":null}"#))
    #expect(null.debugDescription.contains("is null"))
    let other = try #require(await failure(#"{"code":5}"#))
    #expect(!other.debugDescription.contains("success codes are"))
  }

  @Test("statusOK: a boolean status is a business failure carrying the error text")
  func statusOKBoolean() async throws {
    let error = try #require(
      await failure(#"{"status":false,"error":"Quota exceeded"}"#, rule: .statusOK))
    #expect(error.kind == .business)
    #expect(error.code == "false")
    #expect(error.reason == "Quota exceeded")
  }

  @Test("an HTTP 400 with a string code keeps kind httpStatus and shows the server's message")
  func errorStatusWithStringCode() async throws {
    let error = try #require(
      await failure(#"{"code":"E1001","msg":"Phone invalid"}"#, status: 400))
    #expect(error.kind == .httpStatus)
    #expect(error.code == "E1001")
    #expect(error.reason == "Phone invalid")
  }

  @Test("a missing code stays a decoding error, with the message kept out of the reason")
  func missingCode() async throws {
    let error = try #require(await failure(#"{"msg":"Who knows"}"#))
    #expect(error.kind == .decoding)
    #expect(error.debugDescription.contains("has no \"code\""))
  }

  @Test("matchesAcrossTypes still lets \"0\" (and \"00\", \"0.0\") succeed for 0, but not \"0x0\"")
  func acrossTypes() async throws {
    var rule = EnvelopeRule.codeZero
    rule.matchesAcrossTypes = true
    for code in [#""0""#, #""00""#, #""0.0""#, #""-0""#] {
      let stub = StubTransport([.json(#"{"code":\#(code),"data":{"name":"A","age":1}}"#)])
      let profile = try await stubClient(stub, pipeline: .envelope(rule)).send(
        Endpoint<Profile>(.get, "x"))
      #expect(profile.age == 1, "\(code)")
    }
    for code in [#""0x0""#, #"" 0""#, #""zero""#, "null"] {
      let error = try #require(await failure(#"{"code":\#(code),"msg":"m"}"#, rule: rule))
      #expect(error.kind == .business, "\(code)")
    }
  }

  // MARK: Defect 7: exact comparison

  @Test("codes above 2^53 compare exactly: 9007199254740993 is not 9007199254740992")
  func beyondDoublePrecision() async throws {
    let rule = EnvelopeRule(
      code: "code", success: [9_007_199_254_740_992], message: ["msg"], payload: "data")
    let error = try #require(
      await failure(#"{"code":9007199254740993,"msg":"Off by one"}"#, rule: rule))
    #expect(error.kind == .business)
    #expect(error.code == "9007199254740993")
    let stub = StubTransport([.json(#"{"code":9007199254740992,"data":{"name":"A","age":1}}"#)])
    #expect(
      try await stubClient(stub, pipeline: .envelope(rule)).send(Endpoint<Profile>(.get, "x"))
        .age == 1)
  }

  @Test("integers longer than any integer type compare digit for digit")
  func longIntegers() async throws {
    let long = "123456789012345678901234567890123456789"
    let success = try #require(EnvelopeCode(number: long))
    let rule = EnvelopeRule(code: "code", success: [success], message: ["msg"], payload: "data")
    let stub = StubTransport([.json(#"{"code":\#(long),"data":{"name":"A","age":1}}"#)])
    #expect(
      try await stubClient(stub, pipeline: .envelope(rule)).send(Endpoint<Profile>(.get, "x"))
        .age == 1)
    let error = try #require(
      await failure(#"{"code":123456789012345678901234567890123456788}"#, rule: rule))
    #expect(error.kind == .business)
    #expect(error.code == "123456789012345678901234567890123456788")
  }

  @Test("numbers compare by exact value: -0 is 0, 1.0 and 1e0 are 1, 1.5 is not 1")
  func numberEquality() throws {
    let equal: [(EnvelopeCode?, EnvelopeCode)] = [
      (EnvelopeCode(number: "-0"), 0),
      (EnvelopeCode(number: "0.000e9"), 0),
      (EnvelopeCode(number: "1.0"), 1),
      (EnvelopeCode(number: "1e0"), 1),
      (EnvelopeCode(number: "10E-1"), 1),
      (EnvelopeCode(number: "100"), EnvelopeCode(number: "1e2") ?? 0),
      (EnvelopeCode(number: "-40101"), -40101),
      (EnvelopeCode(UInt64.max), EnvelopeCode(number: "18446744073709551615") ?? 0),
    ]
    for (lhs, rhs) in equal {
      #expect(lhs == rhs, "\(String(describing: lhs)) == \(rhs)")
      #expect(lhs?.hashValue == rhs.hashValue)
    }
    let different: [(EnvelopeCode?, EnvelopeCode)] = [
      (EnvelopeCode(number: "1.5"), 1),
      (EnvelopeCode(number: "9007199254740993"), 9_007_199_254_740_992),
      (EnvelopeCode(number: "1e400"), EnvelopeCode(number: "1e401") ?? 0),
      (EnvelopeCode(number: "0.1"), EnvelopeCode(number: "0.10000000000000001") ?? 0),
      ("1", 1),
      (true, 1),
      ("true", true),
    ]
    for (lhs, rhs) in different {
      #expect(lhs != rhs, "\(String(describing: lhs)) != \(rhs)")
    }
  }

  @Test("EnvelopeCode(number:) accepts only JSON numbers")
  func numberGrammar() {
    for text in ["01", "+1", " 1", "1 ", "1.", ".5", "1e", "0x10", "inf", "nan", "", "-", "1e+"] {
      #expect(EnvelopeCode(number: text) == nil, "\(text)")
    }
    for text in ["0", "-0", "1.25", "-1E+3", "1e-7", "12345678901234567890123"] {
      #expect(EnvelopeCode(number: text)?.text == text, "\(text)")
    }
  }

  @Test("literals, run-time initialisers, text and description keep working")
  func publicAPI() {
    let number: EnvelopeCode = 40101
    let string: EnvelopeCode = "ok"
    let boolean: EnvelopeCode = true
    #expect(number.text == "40101" && number.description == "40101")
    #expect(string.text == "ok" && string.description == "\"ok\"")
    #expect(boolean.text == "true" && boolean.description == "true")
    #expect(EnvelopeCode(40101) == number)
    #expect(EnvelopeCode(Int64(-7)).text == "-7")
    #expect(EnvelopeCode(String("ok")) == string)
    #expect(EnvelopeCode(true) == boolean)
    #expect(Set<EnvelopeCode>([0, EnvelopeCode(number: "-0.0") ?? 1, "0", false]).count == 3)
  }
}
