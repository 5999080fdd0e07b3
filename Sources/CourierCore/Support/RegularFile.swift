import Foundation

/// Checks that a body's file is one that can be sent: a readable regular file, after symlinks.
///
/// A directory as an upload hangs URLSession until its timeout, and a FIFO or a device
/// (`/dev/zero`) has no length to send and may never end. `package` for the transports, which
/// check a `RequestBody.file` that did not come through an endpoint.
package enum RegularFile {
  /// What a body's file turned out to be.
  package enum Check {
    /// A readable regular file of `size` bytes.
    case sendable(size: Int64)
    /// Why it cannot be sent, naming the path.
    case problem(String)
  }

  /// Looks at `url` once: its size when it can be sent, or why it cannot.
  package static func check(_ url: URL) -> Check {
    guard url.isFileURL else { return .problem("\(url.absoluteString) is not a file URL") }
    let attributes = try? FileManager.default.attributesOfItem(
      atPath: url.resolvingSymlinksInPath().path)
    guard let type = attributes?[.type] as? FileAttributeType else {
      return .problem("\(url.path) does not exist or cannot be read")
    }
    guard type == .typeRegular, let size = (attributes?[.size] as? NSNumber)?.int64Value else {
      return .problem("\(url.path) is not a readable regular file (\(type.rawValue))")
    }
    guard FileManager.default.isReadableFile(atPath: url.path) else {
      return .problem("\(url.path) is not a readable regular file (no permission)")
    }
    return .sendable(size: size)
  }

  /// Why `url` cannot be sent as a body, or `nil` when it can.
  package static func problem(at url: URL) -> String? {
    if case .problem(let text) = check(url) { return text }
    return nil
  }
}
