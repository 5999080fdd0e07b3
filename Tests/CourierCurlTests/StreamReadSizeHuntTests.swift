import Courier
import CourierTesting
import Foundation
import Synchronization
import Testing

@testable import CourierCore
@testable import CourierCurl

/// Streamed bodies on `CurlTransport` now that libcurl reads at most 100 KiB at a time
/// (`ResponseBodyStream.readSize(bufferSize:)`) into segments of 256 KiB: every byte once and
/// in order across reads that do not divide a segment, for bodies around those sizes, buffer
/// sizes small, odd and huge, a reader that stalls until the transfer pauses, gzip decoded
/// while it streams, and the idle timeout and deadline of a paused transfer.
@Suite("Streamed bodies read 100 KiB at a time, hunted")
struct StreamReadSizeHuntTests {
  /// `count` bytes of a 64-bit LCG's high bits: no piece repeats, so a byte lost, doubled or
  /// moved shows.
  private static func pattern(_ count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> Data {
    var bytes = [UInt8](repeating: 0, count: count)
    var state = seed
    for index in 0..<count {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      bytes[index] = UInt8(truncatingIfNeeded: state >> 33)
    }
    return Data(bytes)
  }

  /// A response that sends `body` framed by its length, or chunked in the server's pieces of
  /// 256 KiB (a chunk's framing inside every few reads).
  private static func response(_ body: Data, chunked: Bool) -> MockResponse {
    guard chunked else { return MockResponse(body: body) }
    var response = MockResponse(chunked: true)
    response.source = MockBodySource(count: body.count) { offset, count in
      body.subdata(in: offset..<(offset + count))
    }
    return response
  }

  /// Expects `received` to equal `sent`; when it does not, names where it first differs (their
  /// shorter length when one is a prefix of the other) rather than a diff of megabytes.
  private static func expectSame(
    _ received: Data, _ sent: Data, sourceLocation: SourceLocation = #_sourceLocation
  ) {
    guard received != sent else { return }
    let common = min(received.count, sent.count)
    let first = received.withUnsafeBytes { (left: UnsafeRawBufferPointer) in
      sent.withUnsafeBytes { (right: UnsafeRawBufferPointer) in
        (0..<common).first { left[$0] != right[$0] } ?? common
      }
    }
    Issue.record(
      "first wrong byte at \(first) of \(sent.count) (\(received.count) received)",
      sourceLocation: sourceLocation)
  }

  /// What a reader saw of one streamed body.
  private struct Reading {
    var data = Data()
    var largestChunk = 0
    /// The most bytes buffered ahead of the reader seen while it stalled.
    var mostBuffered = 0
    /// The most segment buffers out of the stream's pool at once (the buffer's and the
    /// reader's chunk).
    var mostSegmentsOut = 0
    var failure: CourierError?
  }

  /// Reads `body` to its end. With `stalls`, the reader first waits until the buffer is full
  /// (the transfer pauses) or the whole body is in, before it takes anything, so that a body
  /// larger than the buffer pauses the transfer at least once however late the reader starts;
  /// then, after every chunk that leaves at most half the buffer (so the producer goes on,
  /// paused or not), it waits again for the buffer to fill or the rest of the body. Each
  /// time it takes a few more turns for a piece past the buffer to land, and notes what is
  /// buffered.
  private static func read(
    _ body: ResponseBodyStream, bufferSize: Int, expected: Int, stalls: Bool
  ) async -> Reading {
    let core = body.core
    let bufferSize = max(1, bufferSize)
    var reading = Reading()
    func stall(after consumed: Int) async {
      let target = consumed + min(bufferSize, max(0, expected - consumed))
      let end = ContinuousClock.now + .seconds(30)
      while core.bytesReceived < target, core.endError == nil {
        guard ContinuousClock.now < end else {
          let buffered = core.bytesReceived - consumed
          Issue.record("the buffer never filled: \(buffered) of \(bufferSize) after \(consumed)")
          break
        }
        await Task.yield()
      }
      for _ in 0..<20 { await Task.yield() }
      reading.mostBuffered = max(reading.mostBuffered, core.bytesReceived - consumed)
      reading.mostSegmentsOut = max(reading.mostSegmentsOut, core.segmentPool.counts.out)
    }
    if stalls { await stall(after: 0) }
    do {
      for try await chunk in body {
        reading.data.append(chunk)
        reading.largestChunk = max(reading.largestChunk, chunk.count)
        reading.mostSegmentsOut = max(reading.mostSegmentsOut, core.segmentPool.counts.out)
        let consumed = reading.data.count
        guard stalls, core.bytesReceived - consumed <= bufferSize / 2 else { continue }
        await stall(after: consumed)
      }
    } catch {
      reading.failure = error
    }
    return reading
  }

  private static let kib = 1024

  @Test(
    "bodies around a read (100 KiB) and a segment (256 KiB), framed and read either way: every byte",
    .timeLimit(.minutes(5)),
    arguments: [
      100 * kib - 1, 100 * kib, 100 * kib + 1, 200 * kib, 256 * kib - 1, 256 * kib,
      256 * kib + 1, 300 * kib + 7, 1100 * kib + 3,
    ], [(false, false), (true, false), (false, true), (true, true)])
  func bodiesAroundReadAndSegment(size: Int, framing: (chunked: Bool, stalls: Bool)) async throws {
    let chunked = framing.chunked
    let server = try MockServer()
    defer { server.shutdown() }
    let body = Self.pattern(size, seed: UInt64(size))
    server.enqueue(Self.response(body, chunked: chunked))
    let transport = CurlTransport()
    defer { transport.shutdown() }
    let client = Client(baseURL: server.url("/"), transport: transport)
    let streamed = try await client.stream(Request(url: server.url("/b")))
    let reading = await Self.read(
      streamed.body, bufferSize: ResponseBodyStream.defaultBufferSize, expected: size,
      stalls: framing.stalls)
    #expect(reading.failure == nil, "\(reading.failure?.debugDescription ?? "")")
    #expect(reading.data.count == size)
    Self.expectSame(reading.data, body)
    // A chunk is at most one segment: pieces of a read never spill into a larger buffer.
    #expect(reading.largestChunk <= 256 * Self.kib)
    await expectIdle(transport)
  }

  @Test(
    "a reader that stalls until the buffer is full: every byte, at most the buffer and a read ahead",
    .timeLimit(.minutes(5)),
    arguments: [
      1, 4 * kib, 63 * kib, 400 * kib, 401 * kib, 1 << 20, 10 << 20, Int.max,
    ], [false, true])
  func stallingReader(bufferSize: Int, chunked: Bool) async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let size = min(bufferSize, 10 << 20) + (1 << 20) + 5
    let body = Self.pattern(size, seed: UInt64(truncatingIfNeeded: bufferSize))
    server.enqueue(Self.response(body, chunked: chunked))
    let transport = CurlTransport()
    defer { transport.shutdown() }
    let client = Client(baseURL: server.url("/"), transport: transport)
    let streamed = try await client.stream(Request(url: server.url("/s")), bufferSize: bufferSize)
    let readSize = ResponseBodyStream.readSize(bufferSize: bufferSize)
    let reading = await Self.read(
      streamed.body, bufferSize: bufferSize, expected: size, stalls: true)
    #expect(reading.failure == nil, "\(reading.failure?.debugDescription ?? "")")
    #expect(reading.data.count == size)
    Self.expectSame(reading.data, body)
    // The piece that fills the buffer is taken whole; the next one pauses the transfer.
    #expect(
      reading.mostBuffered < min(bufferSize, size) + readSize,
      "\(reading.mostBuffered) bytes buffered for a buffer of \(bufferSize)")
    if bufferSize < size {
      #expect(transport.streamResumes > 0)
    }
    await expectIdle(transport)
  }

  @Test(
    "a buffer set through the request attribute, even 0 or negative: the body streams whole",
    .timeLimit(.minutes(5)), arguments: [0, -1, Int.min, 3, 16 * kib - 1])
  func attributeValues(bufferSize: Int) async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let body = Self.pattern(300 * Self.kib + 11, seed: 77)
    server.enqueue(Self.response(body, chunked: false))
    let transport = CurlTransport()
    defer { transport.shutdown() }
    var request = Request(url: server.url("/a"))
    request.attributes[ResponseStreamAttribute.self] = bufferSize
    let response = try await transport.send(request)
    let stream = try #require(response.bodyStream)
    let reading = await Self.read(
      stream, bufferSize: bufferSize, expected: body.count, stalls: true)
    #expect(reading.failure == nil, "\(reading.failure?.debugDescription ?? "")")
    Self.expectSame(reading.data, body)
    let buffer = max(1, bufferSize)
    #expect(
      reading.mostBuffered < buffer + ResponseBodyStream.readSize(bufferSize: bufferSize),
      "\(reading.mostBuffered) bytes buffered for a buffer of \(buffer)")
    await expectIdle(transport)
  }

  @Test(
    "pieces of a read appended across segment boundaries come out in order, each in one segment",
    .timeLimit(.minutes(5)), arguments: [1 << 20, 400 * kib, 401 * kib, 63 * kib])
  func appendedReads(bufferSize: Int) async throws {
    let (stream, writer) = ResponseBodyStream.makeStream(bufferSize: bufferSize)
    let readSize = ResponseBodyStream.readSize(bufferSize: bufferSize)
    let segmentSize = writer.core.segmentPool.size
    let body = Self.pattern(8 << 20, seed: 5)
    var iterator = stream.makeAsyncIterator()
    var received = Data()
    var offset = 0
    var turn = 0
    // Pieces of a read, a read less one, one byte, and odd sizes; the reader takes one chunk
    // every third piece, and down to half the buffer whenever the producer is told to pause.
    let sizes = [readSize, readSize - 1, 1, readSize, 7, readSize / 2 + 3]
    while offset < body.count {
      let count = min(sizes[turn % sizes.count], body.count - offset)
      let room = body.withUnsafeBytes { bytes in
        writer.append(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])).room
      }
      writer.flush()
      offset += count
      turn += 1
      var takes = turn % 3 == 0 ? 1 : 0
      while offset > received.count,
        takes > 0 || (!room && offset - received.count > bufferSize / 2)
      {
        let chunk = try #require(try await iterator.next())
        #expect(chunk.count <= segmentSize)
        received.append(chunk)
        takes -= 1
      }
    }
    writer.finish()
    while let chunk = try await iterator.next() { received.append(chunk) }
    Self.expectSame(received, body)
    #expect(segmentSize >= readSize)
  }

  @Test(
    "gzip decoded while it streams by GzipMiddleware or libcurl, across reads and pauses",
    .timeLimit(.minutes(5)), arguments: [ResponseBodyStream.defaultBufferSize, 4 * kib, 63 * kib],
    [(false, false), (true, false), (false, true), (true, true)])
  func gzipAcrossReads(bufferSize: Int, way: (chunked: Bool, byLibcurl: Bool)) async throws {
    let chunked = way.chunked
    let server = try MockServer()
    defer { server.shutdown() }
    // Non-repeating, and compressible about twice: the compressed pieces fall anywhere in a
    // read.
    let random = Self.pattern(3 << 20 + 11, seed: 3)
    let original = Data(random.map { $0 >> 4 })
    let compressed = try GzipCompressor.compress(original)
    var response = Self.response(compressed, chunked: chunked)
    response.headers.append(MockHeader(name: "Content-Encoding", value: "gzip"))
    server.enqueue(response)
    // Decoded by GzipMiddleware as it is read, or by libcurl before its write callback (which
    // then pauses in the middle of a read's decoded output).
    var configuration = CurlTransport.Configuration.standard
    if way.byLibcurl { configuration.contentDecoding = .automatic }
    let transport = CurlTransport(configuration: configuration)
    defer { transport.shutdown() }
    let client = Client(
      baseURL: server.url("/"), transport: transport,
      middleware: way.byLibcurl ? [] : [GzipMiddleware()])
    let streamed = try await client.stream(Request(url: server.url("/g")), bufferSize: bufferSize)
    var decoded = Data()
    var chunks = 0
    do {
      for try await chunk in streamed.body {
        decoded.append(chunk)
        chunks += 1
        if chunks % 4 == 0 { await Task.yield() }
      }
    } catch {
      Issue.record("after \(decoded.count) bytes: \(error.debugDescription)")
    }
    Self.expectSame(decoded, original)
    await expectIdle(transport)
  }

  @Test(
    "a transfer paused longer than the idle timeout by its reader does not time out",
    .timeLimit(.minutes(5)))
  func pausedPastIdleTimeout() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    let body = Self.pattern(1 << 20 + 3, seed: 9)
    server.enqueue(Self.response(body, chunked: true))
    let transport = CurlTransport()
    defer { transport.shutdown() }
    var request = Request(url: server.url("/p"))
    let idle = Duration.milliseconds(200)
    request.attributes[StreamIdleTimeoutAttribute.self] = idle
    let bufferSize = 64 * Self.kib
    let streamed = try await Client(baseURL: server.url("/"), transport: transport).stream(
      request, bufferSize: bufferSize)
    let core = streamed.body.core
    var iterator = streamed.body.makeAsyncIterator()
    var received = try #require(try await iterator.next())
    // The buffer fills and the transfer pauses; the reader then takes three idle timeouts
    // over its chunk (the slowness under test, not a wait for another task).
    let end = ContinuousClock.now + .seconds(30)
    while core.bytesReceived < received.count + bufferSize, ContinuousClock.now < end {
      await Task.yield()
    }
    #expect(core.bytesReceived >= received.count + bufferSize, "the transfer never paused")
    let slowUntil = ContinuousClock.now + idle * 3
    while ContinuousClock.now < slowUntil { await Task.yield() }
    do {
      while let chunk = try await iterator.next() { received.append(chunk) }
    } catch {
      Issue.record("after \(received.count) bytes: \(error.debugDescription)")
    }
    Self.expectSame(received, body)
    await expectIdle(transport)
  }

  @Test(
    "a server silent after a piece that is not a whole read: timedOut, naming the idle timeout",
    .timeLimit(.minutes(5)))
  func idleAfterOddPiece() async throws {
    let server = try MockServer()
    let gate = DispatchSemaphore(value: 0)
    defer {
      gate.signal()
      server.shutdown()
    }
    // The server's first piece is 256 KiB (two reads and a half); then silence.
    let body = Self.pattern(512 * Self.kib, seed: 11)
    var response = MockResponse()
    response.headers.append(MockHeader(name: "Content-Length", value: String(body.count)))
    response.source = MockBodySource(count: body.count) { offset, count in
      if offset > 0 { gate.wait() }
      return body.subdata(in: offset..<(offset + count))
    }
    server.enqueue(response)
    let transport = CurlTransport()
    defer { transport.shutdown() }
    var request = Request(url: server.url("/i"))
    request.attributes[StreamIdleTimeoutAttribute.self] = .milliseconds(300)
    let streamed = try await Client(baseURL: server.url("/"), transport: transport).stream(
      request)
    var received = Data()
    let error = await #expect(throws: CourierError.self) {
      for try await chunk in streamed.body { received.append(chunk) }
    }
    #expect(received == body.prefix(256 * Self.kib))
    #expect(error?.kind == .timedOut)
    #expect(error?.debugMessage.contains("idle timeout") == true)
    await expectIdle(transport)
  }

  @Test(
    "the overall deadline ends a transfer its reader paused: timedOut, naming the deadline",
    .timeLimit(.minutes(5)))
  func deadlineWhilePaused() async throws {
    let server = try MockServer()
    defer { server.shutdown() }
    server.enqueue(MockResponse(fault: .endlessBody))
    let transport = CurlTransport()
    defer { transport.shutdown() }
    var request = Request(url: server.url("/d"))
    request.attributes[DeadlineAttribute.self] = Deadline(after: .milliseconds(700))
    let streamed = try await Client(baseURL: server.url("/"), transport: transport).stream(
      request)
    let core = streamed.body.core
    var iterator = streamed.body.makeAsyncIterator()
    var received = try #require(try await iterator.next()).count
    // The reader takes nothing more until the body has ended: the transfer pauses with a
    // full buffer and the deadline must end it from the loop.
    let end = ContinuousClock.now + .seconds(30)
    while core.endError == nil, ContinuousClock.now < end { await Task.yield() }
    #expect(core.bytesReceived - received < ResponseBodyStream.defaultBufferSize + 100 * Self.kib)
    var failure: CourierError?
    do {
      while let chunk = try await iterator.next() { received += chunk.count }
    } catch {
      failure = error
    }
    #expect(failure?.kind == .timedOut)
    #expect(failure?.debugMessage.contains("overall deadline") == true)
    await expectIdle(transport)
  }

  @Test("the read size: a quarter of the buffer, from 16 KiB to 100 KiB, never past a segment")
  func readSizes() {
    let cases: [(Int, Int)] = [
      (Int.min, 16 * Self.kib), (0, 16 * Self.kib), (1, 16 * Self.kib),
      (64 * Self.kib, 16 * Self.kib), (64 * Self.kib + 4, 16 * Self.kib + 1),
      (400 * Self.kib, 100 * Self.kib), (400 * Self.kib + 3, 100 * Self.kib),
      (1 << 20, 100 * Self.kib), (Int.max, 100 * Self.kib),
    ]
    for (bufferSize, expected) in cases {
      #expect(ResponseBodyStream.readSize(bufferSize: bufferSize) == expected, "\(bufferSize)")
      let (_, writer) = ResponseBodyStream.makeStream(bufferSize: bufferSize)
      #expect(writer.core.segmentPool.size >= ResponseBodyStream.readSize(bufferSize: bufferSize))
    }
  }
}
