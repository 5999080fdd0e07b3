// libFuzzer target: MockServer's request parser (RequestReader) over arbitrary bytes.
//
// The input is written to one end of a socket pair, whose write side is then shut down, and
// read back as a connection does: heads and bodies until the end, alternately read into
// memory and streamed. Errors are expected; a crash, a sanitizer report, or a body whose size
// differs from what its head declared is a bug.

import Foundation

@testable import CourierTesting

#if canImport(Glibc)
  import Glibc
#endif

/// Bodies above this are refused before reading, as a connection refuses bodies above
/// `RequestReader.maxBodyBytes`; smaller here so that one input cannot take 256 MiB.
private let bodyLimit = 1 << 20

/// libFuzzer's entry point: runs one input of `size` bytes at `data`; returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  var fds: [Int32] = [-1, -1]
  guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else {
    fatalError("socketpair failed: \(errno)")
  }
  defer {
    close(fds[0])
    close(fds[1])
  }
  // The whole input fits in the socket buffer (Scripts/fuzz.sh caps inputs at 64 KiB).
  var buffer = 256 * 1024
  setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &buffer, socklen_t(MemoryLayout<Int32>.size))
  var written = 0
  while written < size {
    let sent = send(fds[0], data + written, size - written, Int32(MSG_NOSIGNAL))
    guard sent > 0 else { fatalError("send failed: \(errno)") }
    written += sent
  }
  shutdown(fds[0], Int32(SHUT_WR))

  var reader = RequestReader(fd: fds[1])
  var index = 0
  do throws(RequestReadError) {
    while let head = try reader.readHead() {
      guard head.contentLength <= bodyLimit else { break }
      if index % 2 == 0 {
        let body = try reader.readBody(for: head)
        guard head.isChunked || body.count == head.contentLength else {
          fatalError("body of \(body.count) bytes for Content-Length \(head.contentLength)")
        }
        guard body.count <= RequestReader.maxBodyBytes else { fatalError("body past the limit") }
      } else {
        var streamed = 0
        let total = try reader.streamBody(for: head, limit: bodyLimit) { bytes in
          streamed += bytes.count
          return true
        }
        guard total == streamed, streamed <= bodyLimit,
          head.isChunked || streamed == head.contentLength
        else { fatalError("streamed \(streamed) bytes, reported \(total)") }
      }
      guard !head.method.isEmpty, !head.target.isEmpty, head.version.hasPrefix("HTTP/1.")
      else { fatalError("accepted a bad request line") }
      index += 1
    }
  } catch {
    // Malformed, too large or cut short: the connection answers or drops it.
  }
  return 0
}
