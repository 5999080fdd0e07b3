/// Bounds on what decompressing one body may produce, so that a small malicious body (a
/// "gzip bomb": 10 MB of compressed zeros expands to 10 GB) cannot exhaust memory.
///
/// Modelled on async-http-client's `.enabled(limit: .ratio(25))`. Two checks, either optional:
/// - a **size** limit on the decompressed bytes;
/// - a **ratio** limit on decompressed ÷ compressed bytes consumed so far, enforced only once
///   the output passes ``ratioFloor``, so that small, highly repetitive bodies (a 40 KiB JSON
///   list of identical objects compresses 200:1) still decode.
///
/// Decompression stops as soon as a limit is passed — before the chunk that passes it is
/// handed on — and throws ``CourierError`` of kind ``CourierError/Kind/bodyTooLarge``, so
/// memory never grows past the limit plus one chunk (``GzipDecompressor/chunkSize``).
///
/// ```swift
/// let strict = DecompressionLimit(maximumSize: 4 * 1024 * 1024, maximumRatio: 25)
/// let sizeOnly = DecompressionLimit.size(64 * 1024 * 1024)
/// ```
public struct DecompressionLimit: Sendable, Hashable, CustomStringConvertible {
  /// The most decompressed bytes allowed, or `nil` for no size limit.
  public var maximumSize: Int?
  /// The largest allowed ratio of decompressed to compressed bytes, or `nil` for none.
  public var maximumRatio: Int?
  /// The decompressed size below which the ratio is not checked.
  public var ratioFloor: Int

  /// Creates a limit.
  ///
  /// - Parameters:
  ///   - maximumSize: The most decompressed bytes allowed; `nil` for no size limit.
  ///   - maximumRatio: The largest decompressed ÷ compressed ratio; `nil` for none.
  ///   - ratioFloor: Output below this many bytes is never rejected for its ratio; default
  ///     1 MiB (``defaultRatioFloor``).
  public init(
    maximumSize: Int?, maximumRatio: Int?,
    ratioFloor: Int = DecompressionLimit.defaultRatioFloor
  ) {
    self.maximumSize = maximumSize.map { max($0, 0) }
    self.maximumRatio = maximumRatio.map { max($0, 1) }
    self.ratioFloor = max(ratioFloor, 0)
  }

  /// 32 MiB (33,554,432 bytes): the response pipeline's own limit on a body it decodes
  /// (`ResponsePipeline.defaultMaximumDecodedBodySize`), so decompressing never produces a
  /// body the pipeline would refuse anyway.
  public static let defaultMaximumSize = 32 * 1024 * 1024

  /// 100×: text and JSON compress 3–20× in practice, repetitive JSON up to ~200× only in
  /// bodies far below the floor, while a bomb expands ~1000×. 100× leaves real bodies a wide
  /// margin and stops a bomb after about 1 MiB of output.
  public static let defaultMaximumRatio = 100

  /// 1 MiB: below this the ratio is not checked, since a small body costs nothing whatever
  /// its ratio, and the first bytes of a stream have the noisiest ratio.
  public static let defaultRatioFloor = 1024 * 1024

  /// On by default: 32 MiB in all and at most 100× once the output passes 1 MiB.
  public static let standard = DecompressionLimit(
    maximumSize: defaultMaximumSize, maximumRatio: defaultMaximumRatio)

  /// No limit at all: only for trusted input, since one small body can then fill memory.
  public static let none = DecompressionLimit(maximumSize: nil, maximumRatio: nil)

  /// At most `bytes` decompressed bytes, with no ratio limit.
  public static func size(_ bytes: Int) -> DecompressionLimit {
    DecompressionLimit(maximumSize: bytes, maximumRatio: nil)
  }

  /// At most `ratio`× expansion once the output passes 1 MiB, with no size limit.
  public static func ratio(_ ratio: Int) -> DecompressionLimit {
    DecompressionLimit(maximumSize: nil, maximumRatio: ratio)
  }

  /// `limit 32 MiB, ratio 100×`, `no limit`, …
  public var description: String {
    var parts: [String] = []
    if let maximumSize { parts.append("limit \(ByteCount.describe(maximumSize))") }
    if let maximumRatio { parts.append("ratio \(maximumRatio)×") }
    return parts.isEmpty ? "no limit" : parts.joined(separator: ", ")
  }

  /// The most output ``violation(output:input:)`` allows from `input` bytes, `nil` for no
  /// bound: what a one-shot decompression's memory is capped at (plus one chunk).
  func ceiling(forInput input: Int) -> Int? {
    var ceiling: Int?
    if let maximumSize { ceiling = maximumSize }
    if let allowed = ratioAllowance(forInput: input) {
      ceiling = min(ceiling ?? .max, max(ratioFloor, allowed))
    }
    return ceiling
  }

  /// Why `output` decompressed bytes from `input` compressed bytes pass this limit, or `nil`
  /// when they do not.
  func violation(output: Int, input: Int) -> String? {
    if let maximumSize, output > maximumSize {
      return "decompressed body passed the limit of \(ByteCount.describe(maximumSize))"
    }
    if let maximumRatio, output > ratioFloor {
      guard let allowed = ratioAllowance(forInput: input), output > allowed else { return nil }
      return
        "decompressed body expanded more than \(maximumRatio)× (\(output) bytes from \(input))"
    }
    return nil
  }

  /// The ratio limit's output for `input` bytes (at least one byte counted), or `nil` without
  /// a ratio limit or when the product overflows (no bound then).
  private func ratioAllowance(forInput input: Int) -> Int? {
    guard let maximumRatio else { return nil }
    let (allowed, overflow) = maximumRatio.multipliedReportingOverflow(by: max(input, 1))
    return overflow ? nil : allowed
  }
}
