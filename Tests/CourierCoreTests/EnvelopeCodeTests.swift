import CourierCore
import CourierTesting
import Foundation
import Testing

@Suite("Envelope codes: any non-success code is a business failure; exact comparison")
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
