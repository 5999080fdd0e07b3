import CourierLibcurlSupport
import Testing

@Suite("ContentLengthField")
struct ContentLengthFieldTests {
  @Test("digits beyond Int64.max are caught; numbers that fit, and anything else, are not")
  func beyondInt64() {
    #expect(ContentLengthField.exceedsInt64(value: "9223372036854775808"))
    #expect(ContentLengthField.exceedsInt64(value: " 99999999999999999999999 "))
    #expect(ContentLengthField.exceedsInt64(value: "5, 99999999999999999999"))
    #expect(!ContentLengthField.exceedsInt64(value: "9223372036854775807"))
    #expect(!ContentLengthField.exceedsInt64(value: "0005"))
    #expect(!ContentLengthField.exceedsInt64(value: "-99999999999999999999"))
    #expect(!ContentLengthField.exceedsInt64(value: "abc"))
    #expect(!ContentLengthField.exceedsInt64(value: ""))
  }
}
