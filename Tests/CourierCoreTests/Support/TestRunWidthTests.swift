import CTestRunWidth
import Foundation
import Testing

@Suite("The test binary's cap on test cases run at once")
struct TestRunWidthTests {
  @Test("set before main: the package's width unless the environment gives one")
  func capIsSet() throws {
    let value = try #require(
      ProcessInfo.processInfo.environment[COURIER_TEST_RUN_WIDTH_VARIABLE],
      "the constructor in Tests/CTestRunWidth did not run")
    let width = try #require(Int(value), "\(value) is not a width")
    #expect(width > 0)
  }
}
