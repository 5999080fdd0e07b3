import CourierCore
import CourierTesting
import Foundation
import SigningMiddleware
import Synchronization
import Testing

/// Hex text as bytes, for test vectors.
private func bytes(hex: String) -> [UInt8] {
  var result: [UInt8] = []
  var index = hex.startIndex
  while index < hex.endIndex {
    let next = hex.index(index, offsetBy: 2)
    result.append(UInt8(hex[index..<next], radix: 16) ?? 0)
    index = next
  }
  return result
}

@Suite("SHA-256: FIPS 180-4 examples", .timeLimit(.minutes(5)))
struct SHA256Tests {
  @Test("one-block, empty and two-block messages")
  func shortMessages() {
    #expect(
      SHA256.hash(Array("abc".utf8)).hexString
        == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    #expect(
      SHA256.hash([]).hexString
        == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    #expect(
      SHA256.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)).hexString
        == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
  }

  @Test("one million 'a', fed in uneven pieces")
  func millionA() {
    var hasher = SHA256()
    let piece = [UInt8](repeating: UInt8(ascii: "a"), count: 999)
    var remaining = 1_000_000
    while remaining > 0 {
      let count = min(remaining, piece.count)
      hasher.update(piece[..<count])
      remaining -= count
    }
    #expect(
      hasher.finalize().hexString
        == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
  }

  @Test("every length around the padding boundary matches a one-shot hash")
  func paddingBoundaries() {
    // 55, 56 and 64 bytes need one or two padding blocks; byte-at-a-time must agree.
    for length in [55, 56, 57, 63, 64, 65, 119, 120] {
      let message = (0..<length).map { UInt8(truncatingIfNeeded: $0) }
      var hasher = SHA256()
      for byte in message { hasher.update([byte]) }
      #expect(hasher.finalize() == SHA256.hash(message), "length \(length)")
    }
  }
}

@Suite("HMAC-SHA256: RFC 4231 test cases", .timeLimit(.minutes(5)))
struct HMACTests {
  @Test(
    "test cases 1-4, 6 and 7",
    arguments: [
      (
        "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "4869205468657265",
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
      ),
      (
        "4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
      ),
      (
        String(repeating: "aa", count: 20), String(repeating: "dd", count: 50),
        "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
      ),
      (
        "0102030405060708090a0b0c0d0e0f10111213141516171819", String(repeating: "cd", count: 50),
        "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
      ),
      (
        String(repeating: "aa", count: 131),
        "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d2048"
          + "617368204b6579204669727374",
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
      ),
      (
        String(repeating: "aa", count: 131),
        "5468697320697320612074657374207573696e672061206c6172676572207468616e20626c6f636b2d"
          + "73697a65206b657920616e642061206c6172676572207468616e20626c6f636b2d73697a652064"
          + "6174612e20546865206b6579206e6565647320746f20626520686173686564206265666f726520"
          + "6265696e6720757365642062792074686520484d414320616c676f726974686d2e",
        "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
      ),
    ])
  func vectors(key: String, data: String, expected: String) {
    #expect(
      HMACSHA256.authenticationCode(for: bytes(hex: data), key: bytes(hex: key)).hexString
        == expected)
  }

  @Test("test case 5: output truncated to 128 bits")
  func truncated() {
    let code = HMACSHA256.authenticationCode(
      for: bytes(hex: "546573742057697468205472756e636174696f6e"),
      key: [UInt8](repeating: 0x0c, count: 20))
    #expect(code.prefix(16).hexString == "a3b6167473100ee06e0c796c2955552b")
  }
}

@Suite("SigningMiddleware over StubTransport", .timeLimit(.minutes(5)))
struct SigningMiddlewareTests {
  // The expected signatures were computed with OpenSSL, independently of this code:
  //   printf 'POST\n/v1/orders\n1700000000\nn0nce\n<body hash>' \
  //     | openssl dgst -sha256 -hmac courier-secret
  let signer = SigningMiddleware(
    appKey: "app-1", secret: Array("courier-secret".utf8), timestamp: { 1_700_000_000 },
    nonce: { "n0nce" })

  func client(_ stub: StubTransport) -> Client {
    Client(
      baseURL: URL(string: "https://api.example.test/v1/")!, transport: stub, middleware: [signer])
  }

  @Test("a JSON POST is signed over method, path, timestamp, nonce and the body's hash")
  func signsJSONBody() async throws {
    let stub = StubTransport()
    stub.on(.post, "v1/orders", .json("{}"))
    try await client(stub).send(
      Endpoint<Void>(.post, "orders").body(
        Data(#"{"sku":"A1","qty":2}"#.utf8), contentType: "application/json"))
    let sent = try #require(stub.requests.first)
    #expect(sent.headers["X-App-Key"] == "app-1")
    #expect(sent.headers["X-Timestamp"] == "1700000000")
    #expect(sent.headers["X-Nonce"] == "n0nce")
    #expect(
      sent.headers["X-Signature"]
        == "666cc13c80fa053523e244ca973c869c5231f3587cbab2b906c23fe2a7f5d9da")
    #expect(
      try SigningMiddleware.bodyHash(sent.body)
        == "1112f8eff10e2f0e91b61792e783a01ecfe877e42146a848c2a976040fb503d4")
  }

  @Test("a GET signs its query as sent and the hash of the empty body")
  func signsQuery() async throws {
    let stub = StubTransport()
    stub.on(.get, "v1/user/check/{phone}", .json("{}"))
    try await client(stub).send(
      Endpoint<Void>(.get, "user/check/{phone}").parameter("phone", "13800138000")
        .query("lang", "zh-Hans"))
    let sent = try #require(stub.requests.first)
    #expect(
      SigningMiddleware.pathAndQuery(of: sent.url) == "/v1/user/check/13800138000?lang=zh-Hans")
    #expect(
      sent.headers["X-Signature"]
        == "ad0d4e153dfeddb6a73371f74f7b24121ee9dc1383fcc08d66854df43072b0ea")
  }

  @Test("a file body is hashed from disk in chunks")
  func signsFileBody() async throws {
    let file = FileManager.default.temporaryDirectory
      .appendingPathComponent("signing-\(UUID().uuidString).bin")
    try Data(repeating: UInt8(ascii: "z"), count: 200_000).write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    let stub = StubTransport()
    stub.on(.put, "v1/upload", .json("{}"))
    try await client(stub).send(
      Endpoint<Void>(.put, "upload").fileBody(file, contentType: "application/octet-stream"))
    let sent = try #require(stub.requests.first)
    #expect(
      sent.headers["X-Signature"]
        == "bb853c7d803ab094f9cca64b7ac684fbff48c9386680babfea94f10836e67354")
  }

  @Test("each attempt is signed again, with the clock's time and a new nonce")
  func resignsRetries() async throws {
    let stub = StubTransport()
    stub.enqueue(.status(503), .json("{}"))
    let counter = Counter()
    let signer = SigningMiddleware(
      appKey: "app-1", secret: Array("courier-secret".utf8),
      timestamp: { 1_700_000_000 + counter.next() }, nonce: { "n\(counter.value)" })
    let client = Client(
      baseURL: URL(string: "https://api.example.test/v1/")!, transport: stub,
      middleware: [RetryMiddleware(policy: RetryPolicy(baseDelay: .zero)), signer])
    try await client.send(Endpoint<Void>(.get, "ping"))
    #expect(stub.requests.map { $0.headers["X-Timestamp"] } == ["1700000001", "1700000002"])
    #expect(stub.requests.map { $0.headers["X-Nonce"] } == ["n1", "n2"])
    #expect(stub.requests[0].headers["X-Signature"] != stub.requests[1].headers["X-Signature"])
  }
}

/// A thread-safe counter for the injected clock.
private final class Counter: Sendable {
  private let count = Mutex(0)
  func next() -> Int {
    count.withLock {
      $0 += 1; return $0
    }
  }
  var value: Int { count.withLock { $0 } }
}
